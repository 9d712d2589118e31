-- syncular install script, part 65: remote operations (REMOTE.md revision 1; docs/operations-protocol.md).
--
-- Registered queries and commands, served by syncular.operations_http beside the SSP2 round.
-- The registrations are catalog rows (dumped by pg_dump, emptied by unregister_schema); the
-- registration functions validate everything REMOTE.md §2-3 asks and bind each query's SQL to
-- the partition once (ops_bind.c), so a bad statement is refused at registration, named.

CREATE TABLE syncular.sync_operation_queries (
  operation_id  TEXT PRIMARY KEY CHECK (operation_id <> ''),
  sql           TEXT NOT NULL,
  bound_sql     TEXT NOT NULL,
  params        JSONB NOT NULL,
  columns       JSONB NOT NULL,
  tables        TEXT[] NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('scoped', 'privileged')),
  coverage      JSONB NOT NULL DEFAULT '[]',
  authorize     REGPROCEDURE,
  max_rows      INTEGER NOT NULL CHECK (max_rows BETWEEN 1 AND 10000),
  syql          JSONB,
  CHECK ((mode = 'privileged') = (authorize IS NOT NULL))
);
--#include tables/sync_operation_commands/0.4.0.sql
--#include config_dump/sync_operation_queries/0.4.0.sql
REVOKE ALL ON syncular.sync_operation_queries, syncular.sync_operation_commands FROM PUBLIC;
--#include comments/sync_operation_queries/0.4.0.sql
--#include comments/sync_operation_commands/0.4.0.sql

--#include udfs/_operation_bind/0.4.0.sql
--#include udfs/_operation_bind/0.4.0.comment.sql

--#include udfs/_operation_positional/0.4.0.sql
--#include udfs/_operation_positional/0.4.0.comment.sql

--#include udfs/_operation_invalid/0.4.0.sql
--#include udfs/_operation_invalid/0.4.0.comment.sql

--#include udfs/_operation_type/0.4.0.sql
--#include udfs/_operation_type/0.4.0.comment.sql

--#include udfs/register_query/0.5.0.sql
--#include udfs/register_query/0.4.0.comment.sql

--#include udfs/register_command/0.4.0.sql
--#include udfs/register_command/0.4.0.comment.sql

--#include udfs/_operation_register_syql/0.5.0.sql
--#include udfs/_operation_register_syql/0.5.0.comment.sql

--#include udfs/register_queries/0.5.0.sql
--#include udfs/register_queries/0.5.0.comment.sql

--#include udfs/operations_http/0.4.0.sql
--#include udfs/operations_http/0.4.0.comment.sql

--#include udfs/operations_watch_rerun/0.5.0.sql
--#include udfs/operations_watch_rerun/0.5.0.comment.sql

--#include udfs/operation_get_row/0.4.0.sql
--#include udfs/operation_get_row/0.4.0.comment.sql
