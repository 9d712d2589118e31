COMMENT ON FUNCTION syncular._stats_tables() IS
'Internal: the rows of the view syncular.stats_tables (one per database and synced table with counters; none and a '
'NOTICE without shared_preload_libraries). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';
