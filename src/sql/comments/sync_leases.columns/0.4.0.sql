COMMENT ON COLUMN syncular.sync_leases.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_leases.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_leases.lease_id IS 'Lease id, stable across refreshes of the same (partition, clientId) (SPEC §7.3).';
COMMENT ON COLUMN syncular.sync_leases.actor_id IS 'Actor the lease was issued to.';
COMMENT ON COLUMN syncular.sync_leases.allowed_scopes IS 'Scopes the resolver granted when the lease was issued or slid.';
COMMENT ON COLUMN syncular.sync_leases.issued_at_ms IS 'When the lease was issued or last slid, ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_leases.expires_at_ms IS 'When the lease expires, ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_leases.revoked_at_ms IS 'When the lease was revoked (NULL when not revoked).';
