COMMENT ON COLUMN syncular.sync_partitions.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_partitions.horizon_seq IS 'Prune horizon: commits up to it were pruned; older cursors reset.';
