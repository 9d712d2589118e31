-- syncular 0.3.0 -> 0.4.0 (ALTER EXTENSION syncular UPDATE TO '0.4.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.4.0'" to load this file. \quit

-- an unknown column type names the valid ones (HINT)
--#include-or-replace udfs/_schema_invalid/0.4.0.sql
--#include udfs/_schema_invalid/0.4.0.comment.sql

-- a COMMENT on every column of the catalog tables (src/sql/95_column_comments.sql)
--#include comments/sync_backfill_checkpoints.columns/0.4.0.sql
--#include comments/sync_blob_chunks.columns/0.4.0.sql
--#include comments/sync_blob_refs.columns/0.4.0.sql
--#include comments/sync_blobs.columns/0.4.0.sql
--#include comments/sync_change_scopes.columns/0.4.0.sql
--#include comments/sync_changes.columns/0.4.0.sql
--#include comments/sync_clients.columns/0.4.0.sql
--#include comments/sync_commits.columns/0.4.0.sql
--#include comments/sync_crdt_mergers.columns/0.4.0.sql
--#include comments/sync_leases.columns/0.4.0.sql
--#include comments/sync_partition_registry.columns/0.4.0.sql
--#include comments/sync_partitions.columns/0.4.0.sql
--#include comments/sync_push_results.columns/0.4.0.sql
--#include comments/sync_reactions.columns/0.4.0.sql
--#include comments/sync_row_scopes.columns/0.4.0.sql
--#include comments/sync_row_validators.columns/0.4.0.sql
--#include comments/sync_schema_meta.columns/0.4.0.sql
--#include comments/sync_segment_publications.columns/0.4.0.sql
--#include comments/sync_segment_secret.columns/0.4.0.sql
--#include comments/sync_segments.columns/0.4.0.sql
--#include comments/sync_settings.columns/0.4.0.sql
--#include comments/sync_tombstones.columns/0.4.0.sql
--#include comments/sync_writer_fence.columns/0.4.0.sql
-- the clock seam and the fault seams (src/sql/03_seams.sql)
-- The engine's clock for the SQL and plpgsql paths (the C paths call the same function).
--#include udfs/now_ms/0.4.0.sql
--#include udfs/now_ms/0.4.0.comment.sql

--#include tables/sync_faults/0.4.0.sql
REVOKE ALL ON syncular.sync_faults FROM PUBLIC;
--#include comments/sync_faults/0.4.0.sql

--#include udfs/inject_fault/0.4.0.sql
--#include udfs/inject_fault/0.4.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.now_ms(), syncular.inject_fault(text, text, text) FROM PUBLIC;

-- every SQL path reads the engine's clock (syncular.now_ms()) instead of clock_timestamp() / now()
-- ---------------------------------------------------------------------------------------------
-- Remote operations (REMOTE.md revision 1): src/sql/65_operations.sql, the unregister_schema
-- that also empties their registrations (src/sql/12_unregister.sql), their grants.
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

--#include udfs/register_query/0.4.0.sql
--#include udfs/register_query/0.4.0.comment.sql

--#include udfs/register_command/0.4.0.sql
--#include udfs/register_command/0.4.0.comment.sql

--#include udfs/register_queries/0.4.0.sql
--#include udfs/register_queries/0.4.0.comment.sql

--#include udfs/operations_http/0.4.0.sql
--#include udfs/operations_http/0.4.0.comment.sql

--#include udfs/operation_get_row/0.4.0.sql
--#include udfs/operation_get_row/0.4.0.comment.sql

--#include-or-replace udfs/unregister_schema/0.4.0.sql
--#include udfs/unregister_schema/0.4.0.comment.sql
--#include-or-replace udfs/prune/0.4.0.sql
--#include-or-replace udfs/prune_segments/0.4.0.sql
--#include-or-replace udfs/blob_gc/0.4.0.sql
--#include-or-replace udfs/revoke_lease/0.4.0.sql
--#include-or-replace udfs/revoke_leases/0.4.0.sql
--#include-or-replace udfs/_install_checkpoint/0.4.0.sql
--#include-or-replace udfs/claim_checkpoint/0.4.0.sql
--#include-or-replace udfs/advance_checkpoint/0.4.0.sql
--#include-or-replace udfs/activate_checkpoint/0.4.0.sql
--#include-or-replace udfs/_reaction_now/0.4.0.sql
--#include-or-replace views/client_lag/0.4.0.sql
--#include-or-replace views/reactions/0.4.0.sql

--#include comments/sync_leases/0.4.0.sql
--#include udfs/revoke_lease/0.4.0.comment.sql
--#include udfs/clear_lease/0.4.0.comment.sql
--#include udfs/_reaction_now/0.4.0.comment.sql
--#include comments/client_lag/0.4.0.sql
--#include comments/reactions/0.4.0.sql

REVOKE EXECUTE ON FUNCTION syncular._operation_bind(text, regtype[], text[], text[]),
                           syncular._operation_positional(text, text[]),
                           syncular._operation_invalid(text, text, text, jsonb),
                           syncular._operation_type(text) FROM PUBLIC;
-- Remote operations (65_operations.sql): registration owner-only; the serving entry point is
-- granted to the gateway role like handle_http (docs/gateway.md).
REVOKE EXECUTE ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, regprocedure, integer),
                           syncular.register_queries(jsonb, integer, jsonb),
                           syncular.register_command(text, regprocedure, regprocedure),
                           syncular.operations_http(bytea, text, text, text),
                           syncular.operation_get_row(text, text) FROM PUBLIC;

-- Ordinary SQL writes to synced tables are sync commits (docs/writing-with-sql.md): the
-- capture functions, ensure_schema / unregister_schema / the bump rewrite that install, drop,
-- check and bypass them, and the triggers on every table already registered.

--#include udfs/_capture_row/0.4.0.sql
--#include udfs/_capture_row/0.4.0.comment.sql

--#include udfs/_capture_log/0.4.0.sql
--#include udfs/_capture_log/0.4.0.comment.sql

--#include udfs/_capture_bypass/0.4.0.sql
--#include udfs/_capture_bypass/0.4.0.comment.sql

--#include udfs/_install_capture/0.4.0.sql
--#include udfs/_install_capture/0.4.0.comment.sql

--#include udfs/_drop_capture/0.4.0.sql
--#include udfs/_drop_capture/0.4.0.comment.sql

--#include grants/_capture_row/0.4.0.sql

--#include udfs/_check_capture/0.4.0.sql
--#include udfs/_check_capture/0.4.0.comment.sql
REVOKE ALL ON FUNCTION syncular._check_capture(jsonb) FROM PUBLIC;

--#include-or-replace udfs/_create_synced_table/0.4.0.sql
--#include udfs/_create_synced_table/0.4.0.comment.sql

--#include-or-replace udfs/_rewrite_rows/0.4.0.sql
--#include udfs/_rewrite_rows/0.4.0.comment.sql

--#include-or-replace udfs/_ensure_schema/0.4.0.sql
--#include udfs/_ensure_schema/0.1.0.comment.sql

--#include-or-replace udfs/unregister_schema/0.4.0-2.sql
--#include udfs/unregister_schema/0.4.0-2.comment.sql

--#include-or-replace udfs/pull/0.4.0.sql
--#include udfs/pull/0.1.0.comment.sql

-- the capture triggers on the tables registered before 0.4.0
DO $$
DECLARE
  s record;
  t jsonb;
BEGIN
  FOR s IN SELECT app_schema, compiled FROM syncular.sync_settings WHERE id = 1 AND compiled IS NOT NULL LOOP
    FOR t IN SELECT value FROM jsonb_array_elements(s.compiled -> 'tables') LOOP
      IF to_regclass(format('%I.%I', s.app_schema, t ->> 'name')) IS NOT NULL THEN
        PERFORM syncular._install_capture(s.app_schema, t ->> 'name');
      END IF;
    END LOOP;
  END LOOP;
END
$$;
-- the columns of sync_faults (created above) say what they hold (src/sql/95_column_comments.sql)
--#include comments/sync_faults.columns/0.4.0.sql

-- the columns of the remote operation registrations (src/sql/95_column_comments.sql)
COMMENT ON COLUMN syncular.sync_operation_queries.operation_id IS 'Operation id of the registered query (REMOTE.md §2), unique.';
COMMENT ON COLUMN syncular.sync_operation_queries.sql IS 'The authored SQL: one SELECT over app tables, $1..$n the params in order.';
COMMENT ON COLUMN syncular.sync_operation_queries.bound_sql IS 'The SQL run: every app table replaced by a relation of the authenticated partition ($n+1), checked at registration.';
COMMENT ON COLUMN syncular.sync_operation_queries.params IS 'Params in order, [{name, type}] (REMOTE.md §4 value types).';
COMMENT ON COLUMN syncular.sync_operation_queries.columns IS 'Result columns in order, [{name, type, nullable}]; values are normalized to these types.';
COMMENT ON COLUMN syncular.sync_operation_queries.tables IS 'The synced app tables the query reads.';
COMMENT ON COLUMN syncular.sync_operation_queries.mode IS 'scoped (coverage checked against the scope resolver) or privileged (the authorize function decides).';
COMMENT ON COLUMN syncular.sync_operation_queries.coverage IS 'scoped mode: [{table, variable, param}], one entry per scope variable of every table read.';
COMMENT ON COLUMN syncular.sync_operation_queries.authorize IS 'privileged mode: authorize function (actor_id text, partition text, params jsonb) returning boolean; NULL in scoped mode.';
COMMENT ON COLUMN syncular.sync_operation_queries.max_rows IS 'Largest result (1 to 10,000 rows); more is operation.result_too_large.';
--#include comments/sync_operation_commands.columns/0.4.0.sql
