CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10,
                                         lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  ts bigint;
BEGIN
  PERFORM syncular._reaction_arg('limit', claim_reactions."limit", 1, 1000);
  PERFORM syncular._reaction_arg('lease_ms', claim_reactions.lease_ms, 1, 9007199254740991);
  IF claim_reactions.owner IS NULL OR claim_reactions.owner = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_reaction', 'a lease owner must be a non-empty string',
                            jsonb_build_object('argument', 'owner'));
  END IF;
  ts := syncular._reaction_now(now_ms);
  RETURN QUERY
  WITH due AS (
    SELECT r.idempotency_key
      FROM syncular.sync_reactions r
     WHERE r.partition = claim_reactions.partition
       AND ((r.status = 'pending' AND r.available_at_ms <= ts)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= ts))
     ORDER BY r.available_at_ms, r.created_at_ms, r.idempotency_key
     LIMIT claim_reactions."limit"
       FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE syncular.sync_reactions r
       SET status = 'leased', lease_owner = claim_reactions.owner,
           lease_expires_at_ms = ts + claim_reactions.lease_ms, attempts = r.attempts + 1
      FROM due
     WHERE r.partition = claim_reactions.partition AND r.idempotency_key = due.idempotency_key
    RETURNING r.*
  )
  SELECT c.* FROM claimed c ORDER BY c.available_at_ms, c.created_at_ms, c.idempotency_key;
END
$$;
