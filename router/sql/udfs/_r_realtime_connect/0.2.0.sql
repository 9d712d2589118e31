CREATE FUNCTION syncular._r_realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.realtime_connect;
$$;
