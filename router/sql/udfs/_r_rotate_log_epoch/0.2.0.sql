CREATE FUNCTION syncular._r_rotate_log_epoch(partition text)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.rotate_log_epoch;
$$;
