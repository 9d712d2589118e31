COMMENT ON COLUMN syncular.sync_tombstones.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_tombstones.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_tombstones.row_id IS 'Primary key of the deleted row.';
COMMENT ON COLUMN syncular.sync_tombstones.commit_seq IS 'Commit that deleted the row.';
