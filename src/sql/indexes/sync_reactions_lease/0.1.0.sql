CREATE INDEX sync_reactions_lease ON syncular.sync_reactions (partition, status, lease_expires_at_ms);
