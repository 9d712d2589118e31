CREATE FUNCTION syncular._r_advance_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.advance_checkpoint;
$$;
