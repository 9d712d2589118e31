CREATE FUNCTION syncular._r_claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_checkpoint;
$$;
