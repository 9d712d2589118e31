CREATE FUNCTION syncular._r_handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle;
$$;
