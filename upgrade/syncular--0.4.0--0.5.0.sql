-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit

-- The writer fence trigger function in C (src/fence.c): the same refusal, one primary-key probe
-- per appended commit instead of a PL/pgSQL body and an SQL statement.
--#include-or-replace udfs/syncular_writer_fence/0.5.0.sql

-- Live query watches (REMOTE.md §6): the batched rerun of a partition's watches (65_operations.sql).
--#include udfs/operations_watch_rerun/0.5.0.sql
--#include udfs/operations_watch_rerun/0.5.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.operations_watch_rerun(text, jsonb) FROM PUBLIC;

-- Cluster-wide registration of remote operations through syncular_router (80_cluster.sql).
--#include-or-replace udfs/_cluster_dispatch/0.5.0.sql
--#include udfs/_cluster_dispatch/0.5.0.comment.sql
--#include udfs/cluster_call/0.5.0.comment.sql

-- SYQL statement variants of queries-IR queries (65_operations.sql, ops_syql.c).
ALTER TABLE syncular.sync_operation_queries ADD COLUMN syql JSONB;
COMMENT ON COLUMN syncular.sync_operation_queries.syql IS 'SYQL statement variants of a query registered from a queries IR: {backend, activationControls, inputs, statements: [{activationMask?, sortProfile?, boundSql, binds}]}, each statement bound and analyzed at registration; NULL for a one-statement query.';
--#include comments/sync_operation_queries/0.4.0.sql
--#include-or-replace udfs/register_query/0.5.0.sql
--#include udfs/register_query/0.4.0.comment.sql
--#include udfs/_operation_register_syql/0.5.0.sql
--#include udfs/_operation_register_syql/0.5.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular._operation_register_syql(text, jsonb) FROM PUBLIC;
--#include-or-replace udfs/register_queries/0.5.0.sql
--#include udfs/register_queries/0.5.0.comment.sql

-- DDL on a synced table outside ensure_schema is refused (src/sql/33_ddl_guard.sql): the guard
-- functions and event triggers, and ensure_schema's bump marking its own DDL
-- (src/ddl_guard.c; docs/writing-with-sql.md).  The layout of a synced table is the compiled
-- schema's (data-model-and-storage.md §6) and changes only through ensure_schema's append-only
-- bump (§7), which marks its own DDL with syncular._synced_ddl; a superuser repairing by hand
-- sets syncular.allow_synced_table_ddl.  The event triggers are members of the extension: they
-- come with CREATE EXTENSION (also in a database pg_restore fills; pg_dump does not dump them)
-- and go with DROP EXTENSION.

--#include udfs/_guard_synced_ddl/0.5.0.sql
--#include udfs/_guard_synced_ddl/0.5.0.comment.sql

--#include udfs/_synced_ddl/0.5.0.sql
--#include udfs/_synced_ddl/0.5.0.comment.sql

--#include udfs/_synced_table_of/0.5.0.sql
--#include udfs/_synced_table_of/0.5.0.comment.sql

--#include udfs/_synced_table_dropped/0.5.0.sql
--#include udfs/_synced_table_dropped/0.5.0.comment.sql

--#include grants/_guard_synced_ddl/0.5.0.sql

--#include triggers/syncular_guard_alter/0.5.0.sql
--#include comments/syncular_guard_alter/0.5.0.sql
--#include triggers/syncular_guard_drop/0.5.0.sql
--#include comments/syncular_guard_drop/0.5.0.sql

--#include-or-replace udfs/_ensure_schema/0.5.0.sql
