COMMENT ON COLUMN syncular.sync_backfill_checkpoints.partition IS 'Partition the checkpoint belongs to (RFC 0007).';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.name IS 'Checkpoint name, declared by syncular.declare_checkpoint.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.schema_version IS 'Schema version the backfill prepares.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.state IS 'declared, backfilling or activated (RFC 0007 §4).';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.watermark IS 'Backfill progress: the last position written by the current owner.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.owner_epoch IS 'Claim generation: a backfill worker fences its writes with it.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.observed_rows IS 'Rows the backfill has written so far.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.updated_at_ms IS 'When the row was last changed, milliseconds since the Unix epoch.';
