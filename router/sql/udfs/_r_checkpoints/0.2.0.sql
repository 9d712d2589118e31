CREATE FUNCTION syncular._r_checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.checkpoints;
$$;
