CREATE FUNCTION syncular._r_renew_reaction_lease(partition text, idempotency_key text, owner text, lease_ms bigint, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.renew_reaction_lease;
$$;
