CREATE INDEX sync_commits_by_scope ON syncular.sync_commits (partition, tbl, scope_var, scope_value, commit_seq)
  WHERE scope_var IS NOT NULL;
