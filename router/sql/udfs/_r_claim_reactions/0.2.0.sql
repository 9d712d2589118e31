CREATE FUNCTION syncular._r_claim_reactions(partition text, owner text, "limit" integer, lease_ms bigint, now_ms bigint)
RETURNS SETOF syncular.sync_reactions LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_reactions;
$$;
