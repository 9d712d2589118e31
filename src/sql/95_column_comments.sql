-- syncular install script, part 95: a COMMENT on every column of the catalog tables
-- (pgTAP surface.sql checks that none is missing).

--#include comments/sync_backfill_checkpoints.columns/0.4.0.sql
--#include comments/sync_blob_chunks.columns/0.4.0.sql
--#include comments/sync_blob_refs.columns/0.4.0.sql
--#include comments/sync_blobs.columns/0.4.0.sql
--#include comments/sync_change_scopes.columns/0.4.0.sql
--#include comments/sync_changes.columns/0.7.0.sql
--#include comments/sync_clients.columns/0.4.0.sql
--#include comments/sync_commits.columns/0.7.0.sql
--#include comments/sync_crdt_mergers.columns/0.4.0.sql
--#include comments/sync_leases.columns/0.4.0.sql
--#include comments/sync_partition_registry.columns/0.4.0.sql
--#include comments/sync_partitions.columns/0.7.0.sql
--#include comments/sync_push_results.columns/0.4.0.sql
--#include comments/sync_reactions.columns/0.4.0.sql
--#include comments/sync_row_scopes.columns/0.6.0.sql
--#include comments/sync_row_validators.columns/0.4.0.sql
--#include comments/sync_schema_meta.columns/0.4.0.sql
--#include comments/sync_segment_publications.columns/0.4.0.sql
--#include comments/sync_segment_secret.columns/0.4.0.sql
--#include comments/sync_segments.columns/0.4.0.sql
--#include comments/sync_settings.columns/0.4.0.sql
--#include comments/sync_tombstones.columns/0.4.0.sql
--#include comments/sync_writer_fence.columns/0.4.0.sql
--#include comments/sync_faults.columns/0.4.0.sql
COMMENT ON COLUMN syncular.sync_operation_queries.operation_id IS 'Operation id of the registered query (REMOTE.md §2), unique.';
COMMENT ON COLUMN syncular.sync_operation_queries.sql IS 'The authored SQL: one SELECT over app tables, $1..$n the params in order.';
COMMENT ON COLUMN syncular.sync_operation_queries.bound_sql IS 'The SQL run: every app table replaced by a relation of the authenticated partition ($n+1), checked at registration.';
COMMENT ON COLUMN syncular.sync_operation_queries.params IS 'Params in order, [{name, type}] (REMOTE.md §4 value types).';
COMMENT ON COLUMN syncular.sync_operation_queries.columns IS 'Result columns in order, [{name, type, nullable}]; values are normalized to these types.';
COMMENT ON COLUMN syncular.sync_operation_queries.tables IS 'The synced app tables the query reads.';
COMMENT ON COLUMN syncular.sync_operation_queries.mode IS 'scoped (coverage checked against the scope resolver) or privileged (the authorize function decides).';
COMMENT ON COLUMN syncular.sync_operation_queries.syql IS 'SYQL statement variants of a query registered from a queries IR: {backend, activationControls, inputs, statements: [{activationMask?, sortProfile?, boundSql, binds}]}, each statement bound and analyzed at registration; NULL for a one-statement query.';
COMMENT ON COLUMN syncular.sync_operation_queries.coverage IS 'scoped mode: [{table, variable, param}], one entry per scope variable of every table read.';
COMMENT ON COLUMN syncular.sync_operation_queries.authorize IS 'privileged mode: authorize function (actor_id text, partition text, params jsonb) returning boolean; NULL in scoped mode.';
COMMENT ON COLUMN syncular.sync_operation_queries.max_rows IS 'Largest result (1 to 10,000 rows); more is operation.result_too_large.';
--#include comments/sync_operation_commands.columns/0.4.0.sql
