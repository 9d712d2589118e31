REVOKE ALL ON syncular.stats, syncular.stats_tables, syncular.partition_lag, syncular.client_lag FROM PUBLIC;
GRANT SELECT ON syncular.stats, syncular.stats_tables TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION syncular._stats(), syncular._stats_tables() TO pg_read_all_stats;
