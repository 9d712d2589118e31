CREATE FUNCTION syncular._r_fail_reaction(partition text, idempotency_key text, owner text, failure jsonb, permanent boolean, base_ms bigint, cap_ms bigint, now_ms bigint)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.fail_reaction;
$$;
