-- syncular 0.3.0 -> 0.4.0 (ALTER EXTENSION syncular UPDATE TO '0.4.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.4.0'" to load this file. \quit

-- an unknown column type names the valid ones (HINT)
--#include-or-replace udfs/_schema_invalid/0.4.0.sql
--#include udfs/_schema_invalid/0.4.0.comment.sql

-- a COMMENT on every column of the catalog tables (src/sql/95_column_comments.sql)
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.partition IS 'Partition the checkpoint belongs to (RFC 0007).';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.name IS 'Checkpoint name, declared by syncular.declare_checkpoint.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.schema_version IS 'Schema version the backfill prepares.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.state IS 'declared, backfilling or activated (RFC 0007 §4).';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.watermark IS 'Backfill progress: the last position written by the current owner.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.owner_epoch IS 'Claim generation: a backfill worker fences its writes with it.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.observed_rows IS 'Rows the backfill has written so far.';
COMMENT ON COLUMN syncular.sync_backfill_checkpoints.updated_at_ms IS 'When the row was last changed, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_blob_chunks.upload_id IS 'Upload that wrote the bytes (chunks of one upload share it).';
COMMENT ON COLUMN syncular.sync_blob_chunks.seq IS 'Position of the chunk within its upload, from 0.';
COMMENT ON COLUMN syncular.sync_blob_chunks.data IS 'Chunk bytes (at most 1 MiB).';
COMMENT ON COLUMN syncular.sync_blob_refs.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_blob_refs.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_blob_refs.row_id IS 'Primary key of the synced row whose blob_ref column references the blob.';
COMMENT ON COLUMN syncular.sync_blob_refs.blob_id IS 'Blob id: "sha256:<hex of the bytes>" (SPEC §5.9).';
COMMENT ON COLUMN syncular.sync_blobs.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_blobs.blob_id IS 'Blob id: "sha256:<hex of the bytes>" (SPEC §5.9).';
COMMENT ON COLUMN syncular.sync_blobs.byte_length IS 'Size of the blob in bytes (verified at upload).';
COMMENT ON COLUMN syncular.sync_blobs.uploader IS 'Actor that uploaded the blob.';
COMMENT ON COLUMN syncular.sync_blobs.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_blobs.upload_id IS 'Upload that wrote the bytes (chunks of one upload share it).';
COMMENT ON COLUMN syncular.sync_change_scopes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_change_scopes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_change_scopes.var IS 'Scope variable name (the {var} of a scope pattern).';
COMMENT ON COLUMN syncular.sync_change_scopes.value IS 'Scope value of that variable.';
COMMENT ON COLUMN syncular.sync_change_scopes.commit_seq IS 'Commit whose changes carry this scope value (index for incremental pulls).';
COMMENT ON COLUMN syncular.sync_changes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_changes.commit_seq IS 'Commit sequence number within the partition (SPEC §2.2).';
COMMENT ON COLUMN syncular.sync_changes.idx IS 'Position of the change within its commit, from 0.';
COMMENT ON COLUMN syncular.sync_changes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_changes.row_id IS 'Primary key value of the synced row, as text.';
COMMENT ON COLUMN syncular.sync_changes.op IS 'Operation: 1 upsert, 2 delete.';
COMMENT ON COLUMN syncular.sync_changes.row_version IS 'Row version (serverVersion) after the change.';
COMMENT ON COLUMN syncular.sync_changes.scopes IS 'Scope values of the row at the change, {var: value}.';
COMMENT ON COLUMN syncular.sync_changes.payload IS 'Encoded row payload after the change (NULL for a delete).';
COMMENT ON COLUMN syncular.sync_clients.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_clients.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_clients.actor_id IS 'Actor the clientId is bound to (never changes).';
COMMENT ON COLUMN syncular.sync_clients.wire_version IS 'SSP2 wire version of the client''s last round.';
COMMENT ON COLUMN syncular.sync_clients.cursor IS 'Last commit_seq the client acknowledged (its pull cursor), -1 before the first.';
COMMENT ON COLUMN syncular.sync_clients.subscriptions IS 'The client''s persisted subscriptions (JSON array), used by realtime.';
COMMENT ON COLUMN syncular.sync_clients.updated_at_ms IS 'When the row was last changed, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_commits.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_commits.commit_seq IS 'Commit sequence number within the partition (SPEC §2.2).';
COMMENT ON COLUMN syncular.sync_commits.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_commits.client_commit_id IS 'clientCommitId of the pushed commit (idempotency key within the client).';
COMMENT ON COLUMN syncular.sync_commits.actor_id IS 'Authenticated actor the gateway or caller passed to the round.';
COMMENT ON COLUMN syncular.sync_commits.created_at_ms IS 'When the commit was applied, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_commits.writer_version IS 'RFC 0007 writer version of the commit (writer fence); NULL for commits before fencing.';
COMMENT ON COLUMN syncular.sync_crdt_mergers.crdt_type IS 'crdtType served by the merger (SPEC §5.10).';
COMMENT ON COLUMN syncular.sync_crdt_mergers.fn IS 'Merger function (stored bytea, incoming bytea) RETURNS bytea.';
COMMENT ON COLUMN syncular.sync_leases.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_leases.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_leases.lease_id IS 'Lease id, stable across refreshes of the same (partition, clientId) (SPEC §7.3).';
COMMENT ON COLUMN syncular.sync_leases.actor_id IS 'Actor the lease was issued to.';
COMMENT ON COLUMN syncular.sync_leases.allowed_scopes IS 'Scopes the resolver granted when the lease was issued or slid.';
COMMENT ON COLUMN syncular.sync_leases.issued_at_ms IS 'When the lease was issued or last slid, ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_leases.expires_at_ms IS 'When the lease expires, ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_leases.revoked_at_ms IS 'When the lease was revoked (NULL when not revoked).';
COMMENT ON COLUMN syncular.sync_partition_registry.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_partition_registry.log_epoch IS 'Log epoch of the partition (SPEC §2.1).';
COMMENT ON COLUMN syncular.sync_partition_registry.epoch_required IS 'Whether rounds must carry the current log epoch.';
COMMENT ON COLUMN syncular.sync_partition_registry.last_authenticated_at_ms IS 'Last authenticated round in the partition, ms since the Unix epoch (advisory).';
COMMENT ON COLUMN syncular.sync_partitions.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_partitions.max_commit_seq IS 'Highest commit_seq appended to the partition.';
COMMENT ON COLUMN syncular.sync_partitions.horizon_seq IS 'Prune horizon: commits up to it were pruned; older cursors reset.';
COMMENT ON COLUMN syncular.sync_push_results.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_push_results.client_id IS 'clientId of the SSP2 client (REQ_HEADER).';
COMMENT ON COLUMN syncular.sync_push_results.client_commit_id IS 'clientCommitId of the pushed commit (idempotency key within the client).';
COMMENT ON COLUMN syncular.sync_push_results.result IS 'Stored PUSH_RESULT of the commit (replayed for a retransmitted clientCommitId).';
COMMENT ON COLUMN syncular.sync_reactions.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_reactions.idempotency_key IS 'Reaction key from the planner, unique per partition.';
COMMENT ON COLUMN syncular.sync_reactions.type IS 'Reaction type, e.g. email.todo_done.';
COMMENT ON COLUMN syncular.sync_reactions.version IS 'Version of the reaction type''s payload.';
COMMENT ON COLUMN syncular.sync_reactions.payload IS 'Reaction payload (JSON) from the planner.';
COMMENT ON COLUMN syncular.sync_reactions.source_client_id IS 'clientId of the commit that planned the reaction.';
COMMENT ON COLUMN syncular.sync_reactions.source_client_commit_id IS 'clientCommitId of the commit that planned the reaction.';
COMMENT ON COLUMN syncular.sync_reactions.source_commit_seq IS 'commit_seq of the commit that planned the reaction.';
COMMENT ON COLUMN syncular.sync_reactions.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_reactions.available_at_ms IS 'Earliest time a worker may claim it (backoff), ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_reactions.status IS 'pending, leased, completed or dead-letter.';
COMMENT ON COLUMN syncular.sync_reactions.attempts IS 'Claims so far.';
COMMENT ON COLUMN syncular.sync_reactions.max_attempts IS 'Claims before the reaction is dead-lettered.';
COMMENT ON COLUMN syncular.sync_reactions.lease_owner IS 'Worker holding the current lease (NULL when not leased).';
COMMENT ON COLUMN syncular.sync_reactions.lease_expires_at_ms IS 'When the current lease expires, ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_reactions.completed_at_ms IS 'When a worker completed it (NULL until then).';
COMMENT ON COLUMN syncular.sync_reactions.last_failure IS 'The last failure a worker reported (JSON), NULL when none.';
COMMENT ON COLUMN syncular.sync_row_scopes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_row_scopes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_row_scopes.var IS 'Scope variable name (the {var} of a scope pattern).';
COMMENT ON COLUMN syncular.sync_row_scopes.value IS 'Scope value of that variable.';
COMMENT ON COLUMN syncular.sync_row_scopes.row_id IS 'Primary key of the current row carrying this scope value (inverted index for bootstrap).';
COMMENT ON COLUMN syncular.sync_row_validators.tbl IS 'Synced table the validator guards.';
COMMENT ON COLUMN syncular.sync_row_validators.fn IS 'Row validator (op, tbl, row_id, new_row, stored_row, actor_id, partition) RETURNS void.';
COMMENT ON COLUMN syncular.sync_schema_meta.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_schema_meta.schema_version IS 'Schema version whose layouts are recorded.';
COMMENT ON COLUMN syncular.sync_schema_meta.layouts IS 'Stored row layouts of the registered schema (checked against the physical tables).';
COMMENT ON COLUMN syncular.sync_segment_publications.segment_id IS 'Content address of the segment (SPEC §5).';
COMMENT ON COLUMN syncular.sync_segment_publications.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_segment_publications.log_epoch IS 'Log epoch of the partition (SPEC §2.1).';
COMMENT ON COLUMN syncular.sync_segment_publications.tbl IS 'Table the segment holds rows of.';
COMMENT ON COLUMN syncular.sync_segment_publications.schema_version IS 'Version of the registered app schema.';
COMMENT ON COLUMN syncular.sync_segment_publications.media_type IS 'Segment media type: 1 SSG2 rows, 2 SQLite image (SPEC §5.3).';
COMMENT ON COLUMN syncular.sync_segment_publications.scope_digest IS 'Digest of the effective scopes the segment was built for.';
COMMENT ON COLUMN syncular.sync_segment_publications.grant_digest IS 'Digest of the actor''s grant the segment was built under.';
COMMENT ON COLUMN syncular.sync_segment_publications.as_of_commit_seq IS 'The snapshot''s commit_seq: the segment holds the rows as of it.';
COMMENT ON COLUMN syncular.sync_segment_publications.row_cursor IS 'Bootstrap page start (resume position) of the segment, NULL for the first page.';
COMMENT ON COLUMN syncular.sync_segment_publications.page_rows IS 'Rows in the page.';
COMMENT ON COLUMN syncular.sync_segment_publications.next_row_cursor IS 'Where the next page starts, NULL after the last page.';
COMMENT ON COLUMN syncular.sync_segment_publications.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_segment_publications.expires_at_ms IS 'When the publication expires (syncular.segment_ttl), ms since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_segment_secret.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_segment_secret.key IS 'HMAC key signing segment and blob URLs (SPEC §5.4); never leaves the database.';
COMMENT ON COLUMN syncular.sync_segments.segment_id IS 'Content address of the segment (SPEC §5).';
COMMENT ON COLUMN syncular.sync_segments.media_type IS 'Segment media type: 1 SSG2 rows, 2 SQLite image (SPEC §5.3).';
COMMENT ON COLUMN syncular.sync_segments.byte_length IS 'Size of the segment bytes.';
COMMENT ON COLUMN syncular.sync_segments.row_count IS 'Rows in the segment.';
COMMENT ON COLUMN syncular.sync_segments.created_at_ms IS 'When the row was written, milliseconds since the Unix epoch.';
COMMENT ON COLUMN syncular.sync_segments.bytes IS 'The segment bytes (SSG2 or SQLite image).';
COMMENT ON COLUMN syncular.sync_settings.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_settings.app_schema IS 'Schema holding the synced app tables.';
COMMENT ON COLUMN syncular.sync_settings.compiled IS 'Compiled schema the C engine reads (docs/compiled-schema.md).';
COMMENT ON COLUMN syncular.sync_settings.scope_resolver IS 'Scope resolver (actor, partition, client) RETURNS jsonb; NULL: none registered.';
COMMENT ON COLUMN syncular.sync_settings.commit_validator IS 'Whole-commit validator, NULL when none.';
COMMENT ON COLUMN syncular.sync_settings.reaction_planner IS 'Reaction planner, NULL when none.';
COMMENT ON COLUMN syncular.sync_settings.authenticator IS 'SQL request authenticator (method, path, headers, query) RETURNS jsonb, NULL when none.';
COMMENT ON COLUMN syncular.sync_tombstones.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_tombstones.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_tombstones.row_id IS 'Primary key of the deleted row.';
COMMENT ON COLUMN syncular.sync_tombstones.commit_seq IS 'Commit that deleted the row.';
COMMENT ON COLUMN syncular.sync_writer_fence.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_writer_fence.required_writer_version IS 'Writer version every push into the partition must have (RFC 0007 writer fence).';
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
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_queries', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_commands', '');
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
CREATE OR REPLACE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       coalesce(p.max_commit_seq, 0) AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(coalesce(p.max_commit_seq, 0) - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       syncular.now_ms() - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
CREATE OR REPLACE VIEW syncular.reactions AS
SELECT r.partition,
       r.idempotency_key,
       (r.idempotency_key::jsonb ->> 3) AS key,
       r.type, r.version, r.status, r.attempts, r.max_attempts,
       r.created_at_ms, r.available_at_ms,
       r.lease_owner, r.lease_expires_at_ms, r.completed_at_ms, r.last_failure,
       ((r.status = 'pending' AND r.available_at_ms <= n.ms)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= n.ms)) AS due,
       r.source_client_id, r.source_client_commit_id, r.source_commit_seq,
       r.payload
  FROM syncular.sync_reactions r,
       LATERAL (SELECT syncular.now_ms() AS ms) n;

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

REVOKE ALL ON FUNCTION syncular._capture_row() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_log() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_bypass(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._install_capture(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._drop_capture(text, text) FROM PUBLIC;

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
COMMENT ON COLUMN syncular.sync_faults.fault IS 'Armed fault, e.g. idempotency_cache_miss (syncular.inject_fault; a superuser-only test seam).';
COMMENT ON COLUMN syncular.sync_faults.partition IS 'Partition the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.client_id IS 'clientId the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.armed_at_ms IS 'When the fault was armed, milliseconds since the Unix epoch.';

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
COMMENT ON COLUMN syncular.sync_operation_commands.operation_id IS 'Operation id of the registered command (REMOTE.md §3), unique.';
COMMENT ON COLUMN syncular.sync_operation_commands.authorize IS 'Authorize function (actor_id text, partition text, params jsonb) returning boolean.';
COMMENT ON COLUMN syncular.sync_operation_commands.command IS 'Command function (actor_id text, partition text, params jsonb) returning the mutations (full-row upserts and deletes).';
