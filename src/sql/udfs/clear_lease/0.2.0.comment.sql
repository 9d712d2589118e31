COMMENT ON FUNCTION syncular.clear_lease(text, text) IS
'Deletes one auth lease record (SPEC §7.3.4: the host clears a revocation), revoked or not: the client''s next authorized round mints a new leaseId. partition, lease_id as revoke_lease. Returns true when a record was deleted, NULL otherwise. Owner only.';
