COMMENT ON FUNCTION syncular.stats_reset() IS
'Sets every counter of syncular.stats and syncular.stats_tables back to zero, for every database of the cluster, '
'and records the time in stats_reset. No arguments; returns nothing. Owner-only (EXECUTE is not granted to PUBLIC). '
'Without shared_preload_libraries it does nothing and says so with a NOTICE. Never raises. '
'Host operations, no SPEC section; docs/operations.md.';
