CREATE FUNCTION syncular._r_prune(partition text, retention jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune;
$$;
