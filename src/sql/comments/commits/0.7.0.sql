COMMENT ON VIEW syncular.commits IS
  'Read-only. The commit log (SPEC §2.1; table sync_commits) with changes = number of its changes (the view syncular.changes) and tables = the distinct tables they touch.';
