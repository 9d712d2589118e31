CREATE INDEX sync_changes_by_scope ON syncular.sync_changes (partition, tbl, scope_var, scope_value, commit_seq)
  WHERE scope_var IS NOT NULL;
