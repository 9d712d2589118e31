COMMENT ON COLUMN syncular.sync_clients.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_clients.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_clients.actor_id IS 'Actor the clientId is bound to (never changes).';
COMMENT ON COLUMN syncular.sync_clients.wire_version IS 'SSP2 wire version of the client''s last round.';
COMMENT ON COLUMN syncular.sync_clients.cursor IS 'Last commit_seq the client acknowledged (its pull cursor), -1 before the first.';
COMMENT ON COLUMN syncular.sync_clients.subscriptions IS 'The client''s persisted subscriptions (JSON array), used by realtime.';
COMMENT ON COLUMN syncular.sync_clients.updated_at_ms IS 'When the row was last changed, milliseconds since the Unix epoch.';
