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

--#include views/client_lag/0.7.0.sql
--#include comments/client_lag/0.4.0.sql

--#include grants/stats/0.2.0.sql
