CREATE FUNCTION syncular._r_activate_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, sources text[])
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.activate_checkpoint;
$$;
