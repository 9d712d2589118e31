CREATE FUNCTION syncular.renew_reaction_lease(partition text, idempotency_key text, owner text,
                                              lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._reaction_arg('lease_ms', renew_reaction_lease.lease_ms, 1, 9007199254740991);
  UPDATE syncular.sync_reactions r
     SET lease_expires_at_ms = syncular._reaction_now(now_ms) + renew_reaction_lease.lease_ms
   WHERE r.partition = renew_reaction_lease.partition
     AND r.idempotency_key = renew_reaction_lease.idempotency_key
     AND r.status = 'leased' AND r.lease_owner = renew_reaction_lease.owner;
  RETURN FOUND;
END
$$;
