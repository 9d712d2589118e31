COMMENT ON COLUMN syncular.sync_changes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_changes.commit_seq IS 'Commit sequence number within the partition (SPEC §2.2).';
COMMENT ON COLUMN syncular.sync_changes.idx IS 'Position of the change within its commit, from 0.';
COMMENT ON COLUMN syncular.sync_changes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_changes.row_id IS 'Primary key value of the synced row, as text.';
COMMENT ON COLUMN syncular.sync_changes.op IS 'Operation: 1 upsert, 2 delete.';
COMMENT ON COLUMN syncular.sync_changes.row_version IS 'Row version (serverVersion) after the change.';
COMMENT ON COLUMN syncular.sync_changes.scopes IS 'Scope values of the row at the change, {var: value}.';
COMMENT ON COLUMN syncular.sync_changes.payload IS 'Encoded row payload after the change (NULL for a delete).';
