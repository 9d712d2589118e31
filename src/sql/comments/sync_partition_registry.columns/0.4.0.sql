COMMENT ON COLUMN syncular.sync_partition_registry.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_partition_registry.log_epoch IS 'Log epoch of the partition (SPEC §2.1).';
COMMENT ON COLUMN syncular.sync_partition_registry.epoch_required IS 'Whether rounds must carry the current log epoch.';
COMMENT ON COLUMN syncular.sync_partition_registry.last_authenticated_at_ms IS 'Last authenticated round in the partition, ms since the Unix epoch (advisory).';
