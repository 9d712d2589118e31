COMMENT ON FUNCTION syncular._stats() IS
'Internal: the rows of the view syncular.stats (one per database with counters; without shared_preload_libraries '
'one row for the current database with preloaded = false, every figure NULL, and a NOTICE). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';
