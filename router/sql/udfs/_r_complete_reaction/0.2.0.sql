CREATE FUNCTION syncular._r_complete_reaction(partition text, idempotency_key text, owner text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.complete_reaction;
$$;
