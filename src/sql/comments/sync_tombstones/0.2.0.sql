COMMENT ON TABLE syncular.sync_tombstones IS
'Tombstones of deleted rows (delete precedence): the commit that deleted (partition, table, row id). An unversioned wire-3 upsert onto a tombstoned row answers sync.row_deleted; an insert clears it. Pruned with the log.';
