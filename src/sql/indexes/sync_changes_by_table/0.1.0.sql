CREATE INDEX sync_changes_by_table ON syncular.sync_changes (partition, commit_seq, tbl, idx);
