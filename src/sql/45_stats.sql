-- syncular install script, part 45: activity statistics (src/stats.c) and lag views.
--
-- The counters live in shared memory: they are collected only when the library is in
-- shared_preload_libraries.  Conventions of pg_stat_statements: superuser or pg_read_all_stats
-- reads them, the owner resets them.  docs/operations.md says what every figure means.

--#include udfs/_stats/0.2.0.sql
--#include udfs/_stats/0.2.0.comment.sql

--#include udfs/_stats_tables/0.2.0.sql
--#include udfs/_stats_tables/0.2.0.comment.sql

--#include udfs/stats_reset/0.2.0.sql
--#include udfs/stats_reset/0.2.0.comment.sql

--#include views/stats/0.2.0.sql
--#include comments/stats/0.2.0.sql

--#include views/stats_tables/0.2.0.sql
--#include comments/stats_tables/0.2.0.sql

--#include views/partition_lag/0.2.0.sql
--#include comments/partition_lag/0.2.0.sql

CREATE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       coalesce(p.max_commit_seq, 0) AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(coalesce(p.max_commit_seq, 0) - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       syncular.now_ms() - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
--#include comments/client_lag/0.4.0.sql

REVOKE ALL ON syncular.stats, syncular.stats_tables, syncular.partition_lag, syncular.client_lag FROM PUBLIC;
GRANT SELECT ON syncular.stats, syncular.stats_tables TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION syncular._stats(), syncular._stats_tables() TO pg_read_all_stats;
