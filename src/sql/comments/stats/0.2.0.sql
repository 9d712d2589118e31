COMMENT ON VIEW syncular.stats IS
  'Activity counters per database since stats_reset (shared memory; needs shared_preload_libraries = ''syncular'', '
  'otherwise one row with preloaded = false and NULL figures): rounds by outcome (refused ones by catalogue code), '
  'push commits applied / cached / rejected (by code), conflicts, operations, pull sections by kind, commits, changes '
  'and rows served, response bytes, push and pull phase time histograms (bucket upper bounds in time_buckets_ms, ms). '
  'Superuser or pg_read_all_stats. docs/operations.md.';
