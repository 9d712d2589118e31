CREATE FUNCTION syncular._r_realtime_ack(partition text, actor_id text, client_id text, cursor bigint, log_epoch text)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.realtime_ack;
$$;
