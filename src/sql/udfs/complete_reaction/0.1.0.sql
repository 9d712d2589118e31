CREATE FUNCTION syncular.complete_reaction(partition text, idempotency_key text, owner text,
                                           now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE syncular.sync_reactions r
     SET status = 'completed', completed_at_ms = syncular._reaction_now(now_ms),
         lease_owner = NULL, lease_expires_at_ms = NULL
   WHERE r.partition = complete_reaction.partition
     AND r.idempotency_key = complete_reaction.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = complete_reaction.owner;
  RETURN FOUND;
END
$$;
