COMMENT ON VIEW syncular.stats_tables IS
  'Activity counters per database and synced table since the last syncular.stats_reset() (shared memory; empty '
  'without shared_preload_libraries): operations of applied commits, conflicts and rejections caused by an operation '
  'on the table, pull sections by kind, commits, changes and rows served. Superuser or pg_read_all_stats. '
  'docs/operations.md.';
