-- syncular 0.3.0 -> 0.4.0 (ALTER EXTENSION syncular UPDATE TO '0.4.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.4.0'" to load this file. \quit

-- an unknown column type names the valid ones (HINT)
CREATE OR REPLACE FUNCTION syncular._schema_invalid(message text, rule text, tbl text DEFAULT NULL,
                                         col text DEFAULT NULL, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.schema_invalid', message,
            jsonb_strip_nulls(jsonb_build_object('table', tbl, 'column', col))
            || coalesce(extra, '{}'::jsonb)
            || jsonb_build_object('rule', rule),
            CASE rule WHEN 'column_type' THEN
              'A column "type" is one of: string, integer, float, boolean, json, bytes, blob_ref, crdt.'
            END);
END
$$;
COMMENT ON FUNCTION syncular._schema_invalid(text, text, text, text, jsonb) IS
  'Internal. Always raises sync.storage.schema_invalid (SQLSTATE 22023) with the fixed `message` and details {table?, column?, ...extra, rule}; rule column_type adds a HINT listing the valid column types. data-model-and-storage.md §2.';

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
CREATE FUNCTION syncular.now_ms() RETURNS bigint
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_now_ms';
COMMENT ON FUNCTION syncular.now_ms() IS
$$The engine's clock: milliseconds since the Unix epoch (SPEC §3), the one "now" of every timestamp and deadline syncular writes or compares (leases §7.3.3, signed segment and blob URL expiry §5.4 §5.9.5, segment publication expiry and prune_segments, commit created_at_ms, client updated_at_ms, prune's default now, reactions, checkpoints). The wall clock at the call (like clock_timestamp()), unless the superuser-only settings move it: syncular.clock_override_ms (an absolute instant; empty = off) pins it, syncular.clock_offset_ms (signed ms) shifts it. No arguments, raises nothing. Not executable by PUBLIC: a role granted SELECT on a view that reads the clock (syncular.reactions, syncular.client_lag) needs EXECUTE on it too. docs/testing-seams.md.$$;

-- Armed faults (one-shot): the next matching lookup of the engine consumes the row.
CREATE TABLE syncular.sync_faults (
  fault       TEXT NOT NULL,
  partition   TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  armed_at_ms BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id, fault)
);
REVOKE ALL ON syncular.sync_faults FROM PUBLIC;
COMMENT ON TABLE syncular.sync_faults IS
'Test fault seams armed by syncular.inject_fault (superuser only): per (partition, client id, fault) one armed fault, consumed (deleted) by the first engine lookup it matches, in that lookup''s transaction. Faults: idempotency_cache_miss. Emptied by unregister_schema; not dumped. docs/testing-seams.md.';

CREATE FUNCTION syncular.inject_fault(fault text, partition text, client_id text) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  IF NOT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) THEN
    -- raised here, not through _raise: a granted non-superuser need not be able to run _raise
    RAISE EXCEPTION 'only a superuser may inject a fault' USING ERRCODE = 'insufficient_privilege',
      DETAIL = '{"code": "sync.forbidden"}',
      HINT = 'inject_fault is a test seam: call it as a superuser (docs/testing-seams.md).';
  END IF;
  IF inject_fault.fault IS NULL OR inject_fault.partition IS NULL OR inject_fault.partition = ''
     OR inject_fault.client_id IS NULL OR inject_fault.client_id = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'inject_fault needs a fault, a partition and a client id', NULL);
  END IF;
  IF inject_fault.fault NOT IN ('idempotency_cache_miss') THEN
    PERFORM syncular._raise('sync.invalid_request', 'unknown fault',
                            jsonb_build_object('fault', inject_fault.fault, 'known', jsonb_build_array('idempotency_cache_miss')));
  END IF;
  INSERT INTO syncular.sync_faults AS f (fault, partition, client_id, armed_at_ms)
  VALUES (inject_fault.fault, inject_fault.partition, inject_fault.client_id, syncular.now_ms())
  ON CONFLICT (partition, client_id, fault) DO NOTHING;
END $$;
COMMENT ON FUNCTION syncular.inject_fault(text, text, text) IS
$$Test fault seam (superuser only; SECURITY INVOKER, not executable by PUBLIC, and refused with sync.forbidden (SQLSTATE 42501) for any caller that is not a superuser even when granted). fault 'idempotency_cache_miss': the NEXT idempotency lookup of a push commit of (partition, client_id) is treated as unreadable, so that commit answers as SPEC §6.3 prescribes for an unreadable stored result: PUSH_RESULT rejected, no commitSeq, one error record at opIndex 0 with sync.idempotency_cache_miss (retryable; HTTP status of the code 500 in the catalogue, the round itself answers 200), nothing applied and nothing persisted, so the client keeps the commit queued and its retry applies it (or replays it). One-shot: consumed by that lookup when the round's transaction commits; arming it again before then is a no-op. Errors: sync.invalid_request (22023) NULL or empty argument, unknown fault. docs/testing-seams.md.$$;
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
CREATE TABLE syncular.sync_operation_commands (
  operation_id  TEXT PRIMARY KEY CHECK (operation_id <> ''),
  authorize     REGPROCEDURE NOT NULL,
  command       REGPROCEDURE NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_queries', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_commands', '');
REVOKE ALL ON syncular.sync_operation_queries, syncular.sync_operation_commands FROM PUBLIC;
COMMENT ON TABLE syncular.sync_operation_queries IS
'Registered remote queries (REMOTE.md §2), one row per operation id: the authored SQL ($1..$n = params in order), bound_sql (every app table replaced by a relation of the authenticated partition, $n+1), params [{name, type}], result columns [{name, type, nullable}], the app tables read, mode scoped (coverage [{table, variable, param}]) or privileged (authorize), and maxRows. Written by syncular.register_query / register_queries; emptied by unregister_schema.';
COMMENT ON TABLE syncular.sync_operation_commands IS
'Registered remote commands (REMOTE.md §3), one row per operation id: the authorize function and the command function, both (actor_id text, partition text, params jsonb). Written by syncular.register_command; emptied by unregister_schema.';

CREATE FUNCTION syncular._operation_bind(sql text, param_types regtype[], tables text[], columns text[])
RETURNS text LANGUAGE C VOLATILE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_bind';
COMMENT ON FUNCTION syncular._operation_bind(text, regtype[], text[], text[]) IS
'Internal (ops_bind.c). The partition-bound form of a registered query: each reference to a declared app table replaced by (SELECT <app columns> FROM <app schema>.<table> WHERE _sync_partition = $n+1); then parsed and analyzed with the parameter types: one SELECT, no data-modifying CTE, no row locks, no relation but the bound tables, every declared result column exactly once. Raises the PostgreSQL error otherwise (register_query names the query).';

CREATE FUNCTION syncular._operation_positional(sql text, names text[]) RETURNS text
LANGUAGE C IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_positional';
COMMENT ON FUNCTION syncular._operation_positional(text, text[]) IS
'Internal (ops_bind.c). The typegen SQL of a queries IR with its placeholders as PostgreSQL parameters: :name becomes $k (k = position of name in names), or, when the text has no :name, each ? in order becomes $1, $2, ...; quoted text, quoted identifiers, comments and :: casts are left alone. Raises 22023 for an undeclared :name or a ? count that differs from the names.';

CREATE FUNCTION syncular._operation_invalid(operation_id text, message text, rule text,
                                            extra jsonb DEFAULT '{}') RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.operation_invalid',
    format('operation %s: %s', coalesce(quote_literal(operation_id), 'NULL'), message),
    jsonb_build_object('operationId', operation_id, 'rule', rule) || coalesce(extra, '{}'),
    'Fix the registration (docs/operations-protocol.md) and register again; nothing was stored.');
END
$$;
COMMENT ON FUNCTION syncular._operation_invalid(text, text, text, jsonb) IS
'Internal. Raises sync.storage.operation_invalid (SQLSTATE 22023) for a refused registration: message prefixed with the operation id, details {operationId, rule, ...extra}, a HINT.';

CREATE FUNCTION syncular._operation_type(t text) RETURNS regtype
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE t
    WHEN 'string' THEN 'text' WHEN 'integer' THEN 'bigint' WHEN 'float' THEN 'double precision'
    WHEN 'number' THEN 'double precision' WHEN 'boolean' THEN 'boolean' WHEN 'json' THEN 'jsonb'
    WHEN 'bytes' THEN 'bytea' END::regtype
$$;
COMMENT ON FUNCTION syncular._operation_type(text) IS
'Internal. The PostgreSQL type of a declared param or column type: string text, integer bigint, float / number double precision, boolean, json jsonb, bytes bytea; NULL for another name.';

CREATE FUNCTION syncular.register_query(operation_id text, sql text, columns jsonb, tables text[],
                                        params jsonb DEFAULT '[]', mode text DEFAULT 'scoped',
                                        coverage jsonb DEFAULT '[]', authorize regprocedure DEFAULT NULL,
                                        max_rows integer DEFAULT 1000)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled   jsonb;
  e          jsonb;
  t          text;
  v          text;
  n          integer;
  names      text[] := '{}';
  pnames     text[] := '{}';
  ptypes     regtype[] := '{}';
  bound      text;
  msg        text;
  state      text;
  old        syncular.sync_operation_queries%ROWTYPE;
BEGIN
  IF operation_id IS NULL OR operation_id = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the operation id must be a non-empty text', 'operation_id');
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._operation_invalid(operation_id, 'no app schema is registered (syncular.ensure_schema first)', 'schema');
  END IF;
  IF sql IS NULL OR btrim(sql) = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the SQL text is missing', 'sql');
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 10000 THEN
    PERFORM syncular._operation_invalid(operation_id, 'maxRows must be an integer from 1 through 10000', 'max_rows',
      jsonb_build_object('maxRows', max_rows));
  END IF;
  -- result columns (REMOTE.md §2): present, non-empty, unique names, known types
  IF columns IS NULL OR jsonb_typeof(columns) <> 'array' OR jsonb_array_length(columns) = 0 THEN
    PERFORM syncular._operation_invalid(operation_id, 'result-column metadata is missing or empty', 'columns');
  END IF;
  FOR e IN SELECT x FROM jsonb_array_elements(columns) x LOOP
    IF jsonb_typeof(e) <> 'object' OR coalesce(e ->> 'name', '') = ''
       OR syncular._operation_type(e ->> 'type') IS NULL
       OR (e ? 'nullable' AND jsonb_typeof(e -> 'nullable') <> 'boolean') THEN
      PERFORM syncular._operation_invalid(operation_id,
        'every result column is {name, type, nullable?} with a non-empty name and a type of string, integer, float, number, boolean, json, bytes',
        'columns', jsonb_build_object('column', e));
    END IF;
    IF (e ->> 'name') = ANY (names) THEN
      PERFORM syncular._operation_invalid(operation_id, format('duplicate result column %L', e ->> 'name'),
        'columns', jsonb_build_object('column', e ->> 'name'));
    END IF;
    names := names || (e ->> 'name');
  END LOOP;
  -- params, positional $1..$n in this order
  IF params IS NULL OR jsonb_typeof(params) <> 'array' THEN
    PERFORM syncular._operation_invalid(operation_id, 'params must be a JSON array of {name, type}', 'params');
  END IF;
  FOR e IN SELECT x FROM jsonb_array_elements(params) x LOOP
    IF jsonb_typeof(e) <> 'object' OR coalesce(e ->> 'name', '') = '' OR syncular._operation_type(e ->> 'type') IS NULL
       OR (e ->> 'name') = ANY (pnames) THEN
      PERFORM syncular._operation_invalid(operation_id,
        'every param is {name, type} with a unique non-empty name and a type of string, integer, float, number, boolean, json, bytes',
        'params', jsonb_build_object('param', e));
    END IF;
    pnames := pnames || (e ->> 'name');
    ptypes := ptypes || syncular._operation_type(e ->> 'type');
  END LOOP;
  -- tables: synced, materialized, listed once
  IF tables IS NULL OR cardinality(tables) = 0 THEN
    PERFORM syncular._operation_invalid(operation_id, 'the query must declare the app tables it reads', 'tables');
  END IF;
  FOREACH t IN ARRAY tables LOOP
    IF (SELECT count(*) FROM unnest(tables) u WHERE u = t) > 1 THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is listed twice', t), 'tables',
        jsonb_build_object('table', t));
    END IF;
    SELECT x INTO e FROM jsonb_array_elements(compiled -> 'tables') x WHERE x ->> 'name' = t;
    IF e IS NULL THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is not a synced table', t), 'tables',
        jsonb_build_object('table', t));
    ELSIF (e -> 'materialize') = 'false'::jsonb THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is not materialized (materialize: false)', t),
        'tables', jsonb_build_object('table', t));
    END IF;
  END LOOP;
  -- authorization mode (REMOTE.md §2.1)
  IF mode = 'privileged' THEN
    IF authorize IS NULL THEN
      PERFORM syncular._operation_invalid(operation_id, 'a privileged query needs an authorize function', 'authorize');
    END IF;
    PERFORM syncular._check_hook_signature('query_authorize', authorize,
      ARRAY['text', 'text', 'jsonb']::regtype[], 'boolean'::regtype, true,
      '(actor_id text, partition text, params jsonb) RETURNS boolean');
    IF coverage IS NOT NULL AND coverage <> '[]'::jsonb THEN
      PERFORM syncular._operation_invalid(operation_id, 'a privileged query carries no coverage', 'coverage');
    END IF;
    coverage := '[]';
  ELSIF mode = 'scoped' THEN
    IF authorize IS NOT NULL THEN
      PERFORM syncular._operation_invalid(operation_id, 'a scoped query has no authorize function (use mode privileged)', 'authorize');
    END IF;
    IF coverage IS NULL OR jsonb_typeof(coverage) <> 'array' OR jsonb_array_length(coverage) = 0 THEN
      PERFORM syncular._operation_invalid(operation_id, 'a scoped query needs coverage: one {table, variable, param} per scope variable of every table it reads', 'coverage');
    END IF;
    FOR e IN SELECT x FROM jsonb_array_elements(coverage) x LOOP
      IF jsonb_typeof(e) <> 'object' OR NOT (e ->> 'table') = ANY (tables) THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage names a table the query does not read', 'coverage',
          jsonb_build_object('coverage', e));
      END IF;
      IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(compiled -> 'tables') x,
                                   jsonb_array_elements(x -> 'scopes') s
                      WHERE x ->> 'name' = e ->> 'table' AND s ->> 'variable' = e ->> 'variable') THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage names a scope variable its table does not declare',
          'coverage', jsonb_build_object('coverage', e));
      END IF;
      IF NOT (e ->> 'param') = ANY (pnames)
         OR NOT (SELECT p ->> 'type' FROM jsonb_array_elements(params) p WHERE p ->> 'name' = e ->> 'param') IN ('string', 'integer') THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage must name a string or integer param of the query',
          'coverage', jsonb_build_object('coverage', e));
      END IF;
      IF (SELECT count(*) FROM jsonb_array_elements(coverage) c
           WHERE c ->> 'table' = e ->> 'table' AND c ->> 'variable' = e ->> 'variable') > 1 THEN
        PERFORM syncular._operation_invalid(operation_id, 'duplicate coverage record', 'coverage',
          jsonb_build_object('coverage', e));
      END IF;
    END LOOP;
    FOREACH t IN ARRAY tables LOOP
      SELECT x INTO e FROM jsonb_array_elements(compiled -> 'tables') x WHERE x ->> 'name' = t;
      IF jsonb_array_length(coalesce(e -> 'scopes', '[]')) = 0 THEN
        PERFORM syncular._operation_invalid(operation_id,
          format('table %L declares no scope variable, so a scoped query cannot prove coverage (use mode privileged)', t),
          'coverage', jsonb_build_object('table', t));
      END IF;
      FOR v IN SELECT s ->> 'variable' FROM jsonb_array_elements(e -> 'scopes') s LOOP
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coverage) c
                        WHERE c ->> 'table' = t AND c ->> 'variable' = v) THEN
          PERFORM syncular._operation_invalid(operation_id,
            format('incomplete coverage: scope variable %L of table %L is not covered', v, t), 'coverage',
            jsonb_build_object('table', t, 'variable', v));
        END IF;
      END LOOP;
    END LOOP;
  ELSE
    PERFORM syncular._operation_invalid(operation_id, 'mode must be scoped or privileged', 'mode',
      jsonb_build_object('mode', mode));
  END IF;

  -- bind and prepare: the PostgreSQL error, named, at registration
  BEGIN
    bound := syncular._operation_bind(sql, ptypes, tables, names);
  EXCEPTION WHEN query_canceled OR admin_shutdown THEN
    RAISE;
  WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE;
    PERFORM syncular._operation_invalid(operation_id, format('the SQL is refused: %s', msg), 'sql',
      jsonb_build_object('sqlstate', state, 'error', msg));
  END;

  SELECT * INTO old FROM syncular.sync_operation_queries q WHERE q.operation_id = register_query.operation_id;
  IF EXISTS (SELECT 1 FROM syncular.sync_operation_commands c WHERE c.operation_id = register_query.operation_id) THEN
    PERFORM syncular._operation_invalid(operation_id, 'the id is already registered as a command', 'operation_id');
  END IF;
  INSERT INTO syncular.sync_operation_queries AS q
         (operation_id, sql, bound_sql, params, columns, tables, mode, coverage, authorize, max_rows)
  VALUES (operation_id, sql, bound, params, columns, tables, mode, coverage, authorize, max_rows)
  ON CONFLICT ON CONSTRAINT sync_operation_queries_pkey DO UPDATE SET
    sql = EXCLUDED.sql, bound_sql = EXCLUDED.bound_sql, params = EXCLUDED.params, columns = EXCLUDED.columns,
    tables = EXCLUDED.tables, mode = EXCLUDED.mode, coverage = EXCLUDED.coverage,
    authorize = EXCLUDED.authorize, max_rows = EXCLUDED.max_rows;
  RETURN jsonb_build_object('operationId', operation_id, 'kind', 'query',
    'action', CASE WHEN old.operation_id IS NULL THEN 'created'
                   WHEN (old.sql, old.bound_sql, old.params, old.columns, old.tables, old.mode, old.coverage,
                         old.authorize, old.max_rows)
                        IS NOT DISTINCT FROM (sql, bound, params, columns, tables, mode, coverage, authorize, max_rows)
                   THEN 'unchanged' ELSE 'updated' END);
END
$$;
COMMENT ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, regprocedure, integer) IS
$$Registers (or replaces) a remote query (REMOTE.md §2, §2.1), served by syncular.operations_http. Idempotent: the same arguments again return action "unchanged".
Arguments: operation_id = the stable id requests name; sql = one SELECT over the app tables by their unqualified names, params as $1..$n; columns = the result columns [{name, type, nullable}] (type string, integer, float, number, boolean, json or bytes; the response carries these columns only, normalized to the type); tables = the app tables it reads (synced and materialized); params = [{name, type}] in positional order (a request's params object carries them by name); mode = 'scoped' (coverage [{table, variable, param}]: exactly one record per scope variable of every table read, each naming the string or integer param whose value the actor must be allowed for that variable) or 'privileged' (authorize = a function (actor_id text, partition text, params jsonb) RETURNS boolean); max_rows = 1..10000 (a larger result fails with operation.result_too_large).
The SQL is bound to the partition (each app table replaced by the rows of the authenticated partition, $n+1) and analyzed here, so SQL PostgreSQL refuses, a relation other than the declared tables (schema-qualified, a view, a catalog table), a data-modifying statement, row locks or a missing result column fail now, not at first use. Functions called by the SQL are the deployer's responsibility: they run as the extension owner.
Returns {operationId, kind: "query", action: "created" | "updated" | "unchanged"}.
Errors: sync.storage.operation_invalid (SQLSTATE 22023; details {operationId, rule, ...}; rule operation_id, schema, sql (details sqlstate, error: PostgreSQL's), max_rows, columns (missing, empty, duplicate or bad), params, tables (not synced, not materialized, twice), mode, authorize, coverage (empty, duplicate, extra, incomplete, unknown param)); sync.storage.hook_signature (22023) for an authorize function of another signature. Owner-only.$$;

CREATE FUNCTION syncular.register_command(operation_id text, authorize regprocedure, command regprocedure)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  old syncular.sync_operation_commands%ROWTYPE;
BEGIN
  IF operation_id IS NULL OR operation_id = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the operation id must be a non-empty text', 'operation_id');
  END IF;
  IF authorize IS NULL OR command IS NULL THEN
    PERFORM syncular._operation_invalid(operation_id, 'a command needs an authorize function and a command function', 'authorize');
  END IF;
  PERFORM syncular._check_hook_signature('command_authorize', authorize,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'boolean'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS boolean');
  PERFORM syncular._check_hook_signature('command', command,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'jsonb'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS jsonb');
  IF EXISTS (SELECT 1 FROM syncular.sync_operation_queries q WHERE q.operation_id = register_command.operation_id) THEN
    PERFORM syncular._operation_invalid(operation_id, 'the id is already registered as a query', 'operation_id');
  END IF;
  SELECT * INTO old FROM syncular.sync_operation_commands c WHERE c.operation_id = register_command.operation_id;
  INSERT INTO syncular.sync_operation_commands AS c (operation_id, authorize, command)
  VALUES (operation_id, authorize, command)
  ON CONFLICT ON CONSTRAINT sync_operation_commands_pkey DO UPDATE
    SET authorize = EXCLUDED.authorize, command = EXCLUDED.command;
  RETURN jsonb_build_object('operationId', operation_id, 'kind', 'command',
    'action', CASE WHEN old.operation_id IS NULL THEN 'created'
                   WHEN (old.authorize, old.command) = (authorize, command) THEN 'unchanged'
                   ELSE 'updated' END);
END
$$;
COMMENT ON FUNCTION syncular.register_command(text, regprocedure, regprocedure) IS
$$Registers (or replaces) a remote command (REMOTE.md §3), served by syncular.operations_http. Idempotent.
Arguments: operation_id = the stable id; authorize = (actor_id text, partition text, params jsonb) RETURNS boolean, false fails the request with operation.forbidden; command = (actor_id text, partition text, params jsonb) RETURNS jsonb, a non-empty array of full-row mutations {"op": "upsert", "table", "row": {every column}} or {"op": "delete", "table", "rowId"}, applied through the push pipeline (partition lock, idempotency, scope authorization, validators, references, commit log, wake-up). The command runs after the partition lock and the idempotency recheck, in the request's transaction; it may read rows with syncular.operation_get_row(table, row_id) and must have no external side effects. A command that raises fails the request (operation.execution_failed, nothing stored).
Returns {operationId, kind: "command", action: "created" | "updated" | "unchanged"}.
Errors: sync.storage.operation_invalid (22023; details {operationId, rule}) for an empty id, a missing function or an id registered as a query; sync.storage.hook_signature (22023) for another signature. Owner-only.$$;

CREATE FUNCTION syncular.register_queries(ir jsonb, max_rows integer DEFAULT 1000,
                                          privileged jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  q         jsonb;
  names     text[];
  cov       jsonb;
  d         jsonb;
  s         jsonb;
  src       text;
  fn        regprocedure;
  results   jsonb := '[]';
  qname     text;
BEGIN
  IF ir IS NULL OR jsonb_typeof(ir) <> 'object' OR (ir -> 'queryIrVersion') IS DISTINCT FROM '3'::jsonb
     OR jsonb_typeof(ir -> 'queries') <> 'array' THEN
    PERFORM syncular._operation_invalid(NULL, 'the queries IR must be an object with queryIrVersion 3 and a queries array',
      'ir', jsonb_build_object('queryIrVersion', ir -> 'queryIrVersion'));
  END IF;
  IF privileged IS NULL OR jsonb_typeof(privileged) <> 'object' THEN
    PERFORM syncular._operation_invalid(NULL, 'privileged must map query names to authorize functions', 'privileged');
  END IF;
  FOR q IN SELECT x FROM jsonb_array_elements(ir -> 'queries') x LOOP
    qname := q ->> 'name';
    IF jsonb_typeof(q -> 'params') IS DISTINCT FROM 'array' THEN
      PERFORM syncular._operation_invalid(qname, 'the IR query has no params array', 'params');
    END IF;
    SELECT coalesce(array_agg(p ->> 'name' ORDER BY n), '{}') INTO names
      FROM jsonb_array_elements(q -> 'params') WITH ORDINALITY AS x(p, n);
    src := coalesce(q ->> 'sql', q ->> 'positionalSql');
    IF src IS NULL THEN
      PERFORM syncular._operation_invalid(qname, 'the IR query has no sql', 'sql');
    END IF;
    BEGIN
      src := syncular._operation_positional(src, names);
    EXCEPTION WHEN invalid_parameter_value THEN
      PERFORM syncular._operation_invalid(qname, SQLERRM, 'sql');
    END;
    -- the coverage proof: each reactive dependency's scope variable and the one param covering it
    cov := '[]';
    FOR d IN SELECT x FROM jsonb_array_elements(coalesce(q #> '{reactive,dependencies}', '[]')) x LOOP
      FOR s IN SELECT x FROM jsonb_array_elements(coalesce(d -> 'scopes', '[]')) x LOOP
        IF jsonb_typeof(s -> 'params') = 'array' AND jsonb_array_length(s -> 'params') = 1 THEN
          cov := cov || jsonb_build_array(jsonb_build_object('table', d ->> 'table', 'variable', s ->> 'variable',
                                                             'param', s -> 'params' ->> 0));
        END IF;
      END LOOP;
    END LOOP;
    fn := NULL;
    IF privileged ? qname THEN
      fn := (privileged ->> qname)::regprocedure;
    END IF;
    results := results || jsonb_build_array(syncular.register_query(
      qname, src,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', c ->> 'name', 'type', c ->> 'type',
                                                    'nullable', coalesce((c -> 'nullable')::text::boolean, true))
                                 ORDER BY n), '[]')
         FROM jsonb_array_elements(coalesce(q -> 'columns', '[]')) WITH ORDINALITY AS x(c, n)),
      (SELECT coalesce(array_agg(DISTINCT t), '{}') FROM jsonb_array_elements_text(coalesce(q -> 'tables', '[]')) t),
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', p ->> 'name', 'type', p ->> 'type') ORDER BY n), '[]')
         FROM jsonb_array_elements(q -> 'params') WITH ORDINALITY AS x(p, n)),
      CASE WHEN fn IS NULL THEN 'scoped' ELSE 'privileged' END,
      CASE WHEN fn IS NULL THEN cov ELSE '[]' END, fn, max_rows));
  END LOOP;
  RETURN jsonb_build_object('queries', results);
END
$$;
COMMENT ON FUNCTION syncular.register_queries(jsonb, integer, jsonb) IS
$$Registers every query of an upstream typegen queries IR (syncular.queries.ir.json, queryIrVersion 3) with syncular.register_query, in one transaction (all or nothing), as ensure_schema takes the schema IR. Idempotent.
Per IR query: operation id = name; SQL = sql (its :name placeholders become $k in params order; an IR without sql uses positionalSql, its ? taken in params order); columns = columns [{name, type, nullable}]; tables = tables; params = params [{name, type}]; coverage = each reactive.dependencies[].scopes[] entry with exactly one param ({table, variable, param}); an entry without exactly one param covers nothing, so registration fails closed with rule coverage.
Arguments: ir = the IR document; max_rows = maxRows of every query (1..10000); privileged = {"queryName": "schema.fn(text,text,jsonb)"}: those queries are registered privileged with that authorize function instead of scoped.
Returns {queries: [register_query results]}.
Errors: sync.storage.operation_invalid (22023; rule ir when the document is not queryIrVersion 3 with a queries array, sql for an undeclared :name placeholder, and every register_query rule, naming the query); sync.storage.hook_signature (22023). Owner-only.$$;

CREATE FUNCTION syncular.operations_http(request bytea, partition text, actor_id text,
                                         content_type text DEFAULT 'application/vnd.syncular.operations.v1+json')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_http';
COMMENT ON FUNCTION syncular.operations_http(bytea, text, text, text) IS
$$POST <mount>/operations as one row (REMOTE.md revision 1 §5): one remote operation request in, exactly what the HTTP endpoint answers out, inside the caller's transaction (the operation runs in a subtransaction: a failure writes nothing).
request: one encoded request object (UTF-8 JSON, the tagged value encoding of §4): {revision: 1, kind: "query" | "command", clientId, operationId, params, requestId (commands)}; partition and actor_id: what host authentication decided (§1); content_type: the request's Content-Type.
Success: 200, application/vnd.syncular.operations.v1+json, the encoded {revision, kind: "query", operationId, rows, maxCommitSeq} (rows and maxCommitSeq read in one snapshot, at most maxRows rows, each with the declared result columns normalized to their types) or {revision, kind: "command", operationId, requestId, status: "applied" | "cached" | "rejected", commitSeq?, results}.
A content type other than application/vnd.syncular.operations.v1+json: 415 with a sync.invalid_request JSON body. Every operation failure: 200 with the encoded {revision, kind: "error", code, message, retryable} (§7): operation.invalid_request (undecodable or malformed value, unknown member, bad revision or kind, missing / extra / mistyped params, a request over syncular.max_request_bytes, an invalid command mutation plan, an empty mutation list), operation.unknown (no query / command under the id), operation.forbidden (scoped: a covered value the resolver does not allow, resolver failure; privileged or command: the authorize function returned false or NULL), operation.result_too_large (more than maxRows rows), operation.query_failed (the SQL failed, or a result value is missing, null where non-nullable, or does not fit its declared type), operation.execution_failed (an authorize or command function raised, or another server failure; the cause goes to the server log only), sync.invalid_client_id (clientId with the reserved ["remote-command", prefix or bound to another actor in the partition), sync.schema_not_ready and other sync.* codes of the push pipeline. Query cancellation is re-raised.
SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (the gateway role, docs/gateway.md); authorize, command and registered SQL run as the extension owner.$$;

CREATE FUNCTION syncular.operation_get_row(tbl text, row_id text) RETURNS jsonb
LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operation_get_row';
COMMENT ON FUNCTION syncular.operation_get_row(text, text) IS
$$The authoritative getRow of a running remote command (REMOTE.md §3): the current row tbl / row_id of the command's partition as JSON (syncular.decode_row's mapping), read after the partition lock, or NULL when the row is absent or the actor's resolved write scopes do not cover it (command reads return only authorized rows). NULL arguments give NULL.
Errors: operation.invalid_request (SQLSTATE 22023) when called outside a command function run by syncular.operations_http, or for a table that is not synced. Owner-only (command functions run as the extension owner).$$;

CREATE OR REPLACE FUNCTION syncular.unregister_schema(app_schema text, drop_tables boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  registered  text;
  compiled    jsonb;
  version     bigint;
  tables      text[];
  tname       text;
  dropped     text[] := '{}';
  kept        text[] := '{}';
  partitions  bigint;
  commits     bigint;
BEGIN
  -- the same lock as ensure_schema and every push: no round runs while the state goes
  LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;
  SELECT s.app_schema, s.compiled INTO registered, compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF registered IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered', 'no app schema is registered',
      jsonb_build_object('appSchema', app_schema),
      'Nothing to undo: ensure_schema has not registered a schema in this database.');
  END IF;
  -- the guard: the caller names the schema being discarded
  IF app_schema IS DISTINCT FROM registered THEN
    PERFORM syncular._raise('sync.storage.schema_invalid',
      'unregister_schema names a schema that is not the registered one',
      jsonb_build_object('rule', 'app_schema', 'registeredSchema', registered, 'appSchema', app_schema),
      format('Name the registered app schema to confirm: SELECT syncular.unregister_schema(%L).',
             registered));
  END IF;
  SELECT m.schema_version INTO version FROM syncular.sync_schema_meta m WHERE m.id = 1;
  SELECT coalesce(array_agg(e ->> 'name' ORDER BY n), '{}') INTO tables
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS x(e, n);
  SELECT count(*) INTO partitions FROM syncular.sync_partitions;
  SELECT count(*) INTO commits FROM syncular.sync_commits;

  -- the log, the per-partition state and the registration: a fresh install's catalog.  The
  -- partition registry goes too, so a returning client sees a new log epoch and resets.
  TRUNCATE syncular.sync_changes, syncular.sync_change_scopes, syncular.sync_commits,
           syncular.sync_row_scopes, syncular.sync_push_results, syncular.sync_reactions,
           syncular.sync_clients, syncular.sync_blob_refs, syncular.sync_tombstones,
           syncular.sync_backfill_checkpoints, syncular.sync_writer_fence,
           syncular.sync_partition_registry, syncular.sync_partitions,
           syncular.sync_schema_meta, syncular.sync_row_validators, syncular.sync_settings,
           syncular.sync_leases, syncular.sync_faults,
           syncular.sync_operation_queries, syncular.sync_operation_commands;

  FOREACH tname IN ARRAY tables LOOP
    IF to_regclass(format('%I.%I', registered, tname)) IS NULL THEN
      CONTINUE;
    ELSIF drop_tables THEN
      EXECUTE format('DROP TABLE %I.%I', registered, tname);
      dropped := dropped || tname;
    ELSE
      kept := kept || tname;
    END IF;
  END LOOP;

  RETURN jsonb_build_object('appSchema', registered, 'schemaVersion', version,
                            'droppedTables', to_jsonb(dropped), 'keptTables', to_jsonb(kept),
                            'partitions', partitions, 'commits', commits);
END
$$;
COMMENT ON FUNCTION syncular.unregister_schema(text, boolean) IS
$$Undoes syncular.ensure_schema without dropping the extension (e.g. a test registration): afterwards the database is as after CREATE EXTENSION syncular and ensure_schema registers afresh.
Arguments: app_schema = the registered app schema, named to confirm (the guard against a stray call); drop_tables = also DROP TABLE every synced table of the registration (RESTRICT: a dependent view or foreign key fails the call and nothing is undone); false (default) keeps them as plain tables with their _sync_* columns, and a later ensure_schema of the same table names then refuses with sync.storage.schema_invalid (rule table_exists) until they are dropped or renamed.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, the remote query and command registrations (sync_operation_queries, sync_operation_commands), armed test faults (sync_faults), RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
Returns {appSchema, schemaVersion, droppedTables, keptTables, partitions, commits} (partitions and commits discarded).
Errors: sync.storage.schema_not_registered (55000) when nothing is registered; sync.storage.schema_invalid (22023; details {rule: "app_schema", registeredSchema, appSchema}) when app_schema is not the registered schema; both with an errhint. Owner-only (EXECUTE revoked from PUBLIC).$$;
CREATE OR REPLACE FUNCTION syncular.prune(partition text, retention jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  k               text;
  now_ms          bigint;
  active_window   bigint;
  force_age       bigint;
  min_retained    bigint;
  push_age        bigint;
  max_seq         bigint;
  old_horizon     bigint;
  cursor_floor    bigint;
  forced_seq      bigint;
  target          bigint;
  horizon         bigint;
  removed         bigint := 0;
  removed_results bigint;
  result          jsonb;
BEGIN
  retention := coalesce(retention, '{}'::jsonb);
  IF jsonb_typeof(retention) <> 'object' THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', 'retention must be a JSON object',
                            jsonb_build_object('value', retention));
  END IF;
  FOR k IN SELECT key FROM jsonb_object_keys(retention) AS key ORDER BY key LOOP
    IF k NOT IN ('activeWindowMs', 'forceAgeMs', 'minRetainedCommits', 'pushResultsOlderThanMs', 'nowMs') THEN
      PERFORM syncular._raise('sync.storage.invalid_limit', 'unknown retention key',
                              jsonb_build_object('key', k));
    END IF;
  END LOOP;
  active_window := syncular._retention_value(retention, 'activeWindowMs', 14 * 86400000::bigint);
  force_age     := syncular._retention_value(retention, 'forceAgeMs', 30 * 86400000::bigint);
  min_retained  := syncular._retention_value(retention, 'minRetainedCommits', 1000);
  push_age      := syncular._retention_value(retention, 'pushResultsOlderThanMs', NULL);
  now_ms        := syncular._retention_value(retention, 'nowMs',
                     syncular.now_ms());

  -- lock order: partition row, then registry row (refuses an unregistered partition)
  PERFORM syncular._lock_partition(prune.partition);
  SELECT p.max_commit_seq, p.horizon_seq INTO max_seq, old_horizon
    FROM syncular.sync_partitions p WHERE p.partition = prune.partition;

  -- floor: the lowest cursor of clients active within the window (none active: no constraint)
  SELECT min(c.cursor) INTO cursor_floor
    FROM syncular.sync_clients c
   WHERE c.partition = prune.partition AND c.updated_at_ms >= now_ms - active_window;
  cursor_floor := coalesce(cursor_floor, max_seq);
  -- forced: the newest commit created before now - forceAge
  SELECT max(c.commit_seq) INTO forced_seq
    FROM syncular.sync_commits c
   WHERE c.partition = prune.partition AND c.created_at_ms < now_ms - force_age;
  forced_seq := coalesce(forced_seq, 0);

  target := least(greatest(cursor_floor, forced_seq), max_seq - min_retained);
  horizon := greatest(old_horizon, greatest(target, 0));

  IF push_age IS NOT NULL THEN
    -- idempotency records whose commit is still in the log and older than the cutoff
    DELETE FROM syncular.sync_push_results r
     USING syncular.sync_commits c
     WHERE r.partition = prune.partition AND c.partition = r.partition
       AND c.client_id = r.client_id AND c.client_commit_id = r.client_commit_id
       AND c.created_at_ms < now_ms - push_age;
    GET DIAGNOSTICS removed_results = ROW_COUNT;
  END IF;

  IF horizon > 0 THEN
    DELETE FROM syncular.sync_commits c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    GET DIAGNOSTICS removed = ROW_COUNT;
    DELETE FROM syncular.sync_changes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_change_scopes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_tombstones c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
  END IF;
  IF horizon <> old_horizon THEN
    UPDATE syncular.sync_partitions p SET horizon_seq = horizon WHERE p.partition = prune.partition;
  END IF;

  result := jsonb_build_object('previousHorizonSeq', old_horizon, 'horizonSeq', horizon,
                               'removedCommits', removed);
  IF push_age IS NOT NULL THEN
    result := result || jsonb_build_object('removedPushResults', removed_results);
  END IF;
  RETURN result;
END
$$;
CREATE OR REPLACE FUNCTION syncular.prune_segments(now_ms bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     bigint := coalesce(now_ms, syncular.now_ms());
  pubs  bigint;
  segs  bigint;
BEGIN
  DELETE FROM syncular.sync_segment_publications p WHERE p.expires_at_ms <= t;
  GET DIAGNOSTICS pubs = ROW_COUNT;
  DELETE FROM syncular.sync_segments s
   WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_segment_publications p WHERE p.segment_id = s.segment_id);
  GET DIAGNOSTICS segs = ROW_COUNT;
  RETURN jsonb_build_object('publications', pubs, 'segments', segs);
END $$;
CREATE OR REPLACE FUNCTION syncular.blob_gc(partition text DEFAULT NULL, grace_ms bigint DEFAULT 86400000,
                                 max_blobs integer DEFAULT 1000)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cutoff   bigint;
  b        record;
  n        bigint;
  blobs    bigint := 0;
  chunks   bigint := 0;
  scanned  integer := 0;
BEGIN
  IF grace_ms IS NULL OR grace_ms < 0 OR max_blobs IS NULL OR max_blobs < 1 THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc: grace_ms >= 0 and max_blobs >= 1 are required',
                            jsonb_build_object('graceMs', grace_ms, 'maxBlobs', max_blobs));
  END IF;
  -- the re-check after the lock needs a fresh snapshot per statement (§5.9.2: never delete a
  -- referenced blob)
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM syncular._raise('sync.invalid_request', 'blob_gc runs in READ COMMITTED only',
                            jsonb_build_object('isolation', current_setting('transaction_isolation')));
  END IF;
  cutoff := syncular.now_ms() - grace_ms;
  FOR b IN
    SELECT s.partition, s.blob_id, s.upload_id FROM syncular.sync_blobs s
     WHERE (blob_gc.partition IS NULL OR s.partition = blob_gc.partition)
       AND s.created_at_ms < cutoff
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id)
     ORDER BY s.created_at_ms
     LIMIT max_blobs
       FOR UPDATE OF s SKIP LOCKED
  LOOP
    scanned := scanned + 1;
    DELETE FROM syncular.sync_blobs s
     WHERE s.partition = b.partition AND s.blob_id = b.blob_id
       AND NOT EXISTS (SELECT 1 FROM syncular.sync_blob_refs r
                        WHERE r.partition = s.partition AND r.blob_id = s.blob_id);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
      blobs := blobs + 1;
      DELETE FROM syncular.sync_blob_chunks c WHERE c.upload_id = b.upload_id;
      GET DIAGNOSTICS n = ROW_COUNT;
      chunks := chunks + n;
    END IF;
  END LOOP;
  RETURN jsonb_build_object('deletedBlobs', blobs, 'deletedChunks', chunks,
                            'mayHaveMore', scanned >= max_blobs);
END $$;
CREATE OR REPLACE FUNCTION syncular.revoke_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  UPDATE syncular.sync_leases l
     SET revoked_at_ms = syncular.now_ms()
   WHERE l.partition = revoke_lease.partition AND l.lease_id = revoke_lease.lease_id
     AND l.revoked_at_ms IS NULL
  RETURNING true
$$;
CREATE OR REPLACE FUNCTION syncular.revoke_leases(partition text, actor_id text) RETURNS integer
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  WITH r AS (
    UPDATE syncular.sync_leases l
       SET revoked_at_ms = syncular.now_ms()
     WHERE l.partition = revoke_leases.partition AND l.actor_id = revoke_leases.actor_id
       AND l.revoked_at_ms IS NULL
    RETURNING 1)
  SELECT count(*)::integer FROM r
$$;
CREATE OR REPLACE FUNCTION syncular._install_checkpoint(partition text, name text, schema_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO syncular.sync_backfill_checkpoints AS c
         (partition, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms)
  VALUES (_install_checkpoint.partition, _install_checkpoint.name, _install_checkpoint.schema_version,
          'declared', 0, 0, 0, syncular.now_ms())
  ON CONFLICT (partition, name) DO NOTHING;

  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  VALUES (_install_checkpoint.partition, _install_checkpoint.schema_version)
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
CREATE OR REPLACE FUNCTION syncular.claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(claim_checkpoint.partition, claim_checkpoint.name);
  IF claim_checkpoint.schema_version IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET owner_epoch = k.owner_epoch + 1,
         state = CASE WHEN k.state = 'declared' THEN 'backfilling' ELSE k.state END,
         schema_version = claim_checkpoint.schema_version,
         updated_at_ms = syncular.now_ms()
   WHERE k.partition = claim_checkpoint.partition AND k.name = claim_checkpoint.name
     AND k.state <> 'activated'
  RETURNING k.* INTO c;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared',
      'backfill checkpoint is not declared or is already activated',
      jsonb_build_object('partition', claim_checkpoint.partition, 'name', claim_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
CREATE OR REPLACE FUNCTION syncular.advance_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  n bigint;
BEGIN
  IF advance_checkpoint.watermark IS NULL OR advance_checkpoint.observed_rows IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'advance_checkpoint needs a watermark and an observed row count',
      jsonb_build_object('field', CASE WHEN advance_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'observedRows' END));
  END IF;
  UPDATE syncular.sync_backfill_checkpoints k
     SET watermark = advance_checkpoint.watermark,
         observed_rows = advance_checkpoint.observed_rows,
         updated_at_ms = syncular.now_ms()
   WHERE k.partition = advance_checkpoint.partition AND k.name = advance_checkpoint.name
     AND k.owner_epoch = advance_checkpoint.owner_epoch;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END
$$;
CREATE OR REPLACE FUNCTION syncular.activate_checkpoint(partition text, name text, owner_epoch bigint,
  watermark bigint, sources text[])
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  cp_version integer;
  fence integer;
  coverage text;
  n bigint;
BEGIN
  PERFORM syncular._checkpoint_args(activate_checkpoint.partition, activate_checkpoint.name);
  IF activate_checkpoint.owner_epoch IS NULL OR activate_checkpoint.watermark IS NULL
     OR activate_checkpoint.sources IS NULL THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'activate_checkpoint needs an owner epoch, a watermark and a source table list',
      jsonb_build_object('field', CASE WHEN activate_checkpoint.owner_epoch IS NULL THEN 'ownerEpoch'
                                       WHEN activate_checkpoint.watermark IS NULL THEN 'watermark'
                                       ELSE 'sources' END));
  END IF;

  -- the partition write lock, the same row lock a push takes
  PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = activate_checkpoint.partition FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO syncular.sync_partitions (partition) VALUES (activate_checkpoint.partition)
    ON CONFLICT (partition) DO NOTHING;
    PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = activate_checkpoint.partition FOR UPDATE;
  END IF;

  -- (1) the fence must cover the checkpoint's version
  SELECT (SELECT k.schema_version FROM syncular.sync_backfill_checkpoints k
           WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name),
         (SELECT f.required_writer_version FROM syncular.sync_writer_fence f
           WHERE f.partition = activate_checkpoint.partition)
    INTO cp_version, fence;
  IF cp_version IS NULL OR fence IS NULL OR fence < cp_version THEN
    PERFORM syncular._raise('sync.storage.checkpoint_fence_missing',
      'the writer fence does not cover the backfill checkpoint''s schema version',
      jsonb_build_object('partition', activate_checkpoint.partition, 'name', activate_checkpoint.name,
                         'schemaVersion', cp_version, 'requiredWriterVersion', fence));
  END IF;

  -- (2) coverage of the source tables above the watermark; nothing is written on a refusal
  coverage := syncular._source_changes_above(activate_checkpoint.partition, activate_checkpoint.sources,
                                              activate_checkpoint.watermark);
  IF coverage = 'changed' THEN
    RETURN 'stale';
  ELSIF coverage = 'unverifiable' THEN
    RETURN 'unverifiable';
  END IF;

  -- (3) activate under the owner's epoch
  UPDATE syncular.sync_backfill_checkpoints k
     SET state = 'activated',
         watermark = activate_checkpoint.watermark,
         updated_at_ms = syncular.now_ms()
   WHERE k.partition = activate_checkpoint.partition AND k.name = activate_checkpoint.name
     AND k.owner_epoch = activate_checkpoint.owner_epoch AND k.state <> 'activated';
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN CASE WHEN n = 1 THEN 'activated' ELSE 'stale' END;
END
$$;
CREATE OR REPLACE FUNCTION syncular._reaction_now(now_ms bigint) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(now_ms, syncular.now_ms())
$$;
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

COMMENT ON TABLE syncular.sync_leases IS
'Auth leases (SPEC §7.3.1): per (partition, client id) the leaseId, the actor, the allowed scopes the resolver returned at issuance and issued/expires (epoch ms); revoked_at_ms once revoked. Issued and slid by rounds while syncular.lease_ttl_ms > 0 (a revoked row is replaced by a fresh lease, new lease_id, on the next live-authorized round unless syncular.lease_reissue_after_revoke is off); read when the resolver signals an outage; revoked by revoke_lease / revoke_leases, deleted by clear_lease and unregister_schema.';
COMMENT ON FUNCTION syncular.revoke_lease(text, text) IS
'Revokes one auth lease (SPEC §7.3.4): partition and the leaseId of the LEASE frame. Durable: the revoked leaseId is never slid, never accepted again and never issued again; until the client''s next live-authorized round, a round that would be lease-authorized (resolver outage) fails with sync.auth_lease_revoked (HTTP 401). The next round the scope resolver authorizes replaces it with a fresh lease under a new leaseId (SPEC §7.3.4; set syncular.lease_reissue_after_revoke = off to keep the client without a lease until clear_lease instead); local data is not purged. To stop a client for good, make the resolver deny its actor. Returns true when a live lease was revoked, NULL when none matched (unknown or already revoked). Owner only.';
COMMENT ON FUNCTION syncular.clear_lease(text, text) IS
'Deletes one auth lease record (SPEC §7.3.4: the host clears a revocation), revoked or not: the client''s next authorized round mints a new leaseId. With syncular.lease_reissue_after_revoke = off this is the only way a revoked client gets a lease again. partition, lease_id as revoke_lease. Returns true when a record was deleted, NULL otherwise. Owner only.';
COMMENT ON FUNCTION syncular._reaction_now(bigint) IS
  'Internal. now_ms when not NULL, else the engine''s clock (syncular.now_ms(): the wall clock unless syncular.clock_override_ms / clock_offset_ms move it) in Unix epoch milliseconds. Raises nothing.';
COMMENT ON VIEW syncular.client_lag IS
  'Read-only. One row per client record: wire_version and cursor of its last round, commits_behind = the '
  'partition''s newest commit_seq - cursor (NULL while the client has no cursor, cursor < 0; counts every commit of the '
  'partition, an upper bound), behind_horizon (its next pull resets with sync.cursor_expired), last_seen_at_ms (ms '
  'since the epoch) and idle_ms (syncular.now_ms() - last_seen_at_ms). SPEC §4.5. docs/operations.md.';
COMMENT ON VIEW syncular.reactions IS
  'Read-only. The durable reactions (SPEC §6.9; sync_reactions) with key = the planner''s record key (element 3 of the idempotency key) and due = claimable now by the engine''s clock, syncular.now_ms() (pending and available, or leased with an expired lease). Times in epoch ms; for a dead-letter row available_at_ms is the time it was dead-lettered. Owner-only until granted.';

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

-- A role that may write the synced table needs no privilege on the sync_* tables: the log is
-- written by the SECURITY DEFINER statement trigger as the extension owner (the actor defaults
-- to the session's role); the row trigger reads the settings once per statement as the owner of
-- its function, without switching roles for every row.
CREATE FUNCTION syncular._capture_row() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_row' LANGUAGE C;
COMMENT ON FUNCTION syncular._capture_row() IS
  'Internal. BEFORE INSERT OR UPDATE row trigger of a synced table (argument: the table name): sets _sync_partition (the row''s value, else the setting syncular.partition), _sync_row_id (the primary key, WF §4.5), _sync_payload (the full row encoded from the columns; an UPDATE keeps the payload value of a column whose datum did not change), _sync_server_version (1, or stored + 1), _sync_column_versions (changed columns at the new version) and _sync_scopes. Errors: sync.invalid_request (SQLSTATE 22023; details {table, column?, reason}: partition_missing with a HINT naming syncular.partition, partition_invalid, integer_out_of_range, null_value, unencodable_value, value_too_large, key_too_large, missing_scope, payload_missing, payload_invalid); sync.storage.physical_layout_mismatch (55000) when a column is missing or retyped; sync.storage.schema_not_registered (55000). data-model-and-storage.md §1, §6; push-and-pull.md §2.3.';

CREATE FUNCTION syncular._capture_log() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_log' LANGUAGE C
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION syncular._capture_log() IS
  'Internal. AFTER INSERT / UPDATE / DELETE statement trigger (transition tables sync_new, sync_old) and BEFORE TRUNCATE trigger of a synced table (argument: the table name): appends the statement''s rows to the transaction''s commit of each partition, created on the first write (partition row locked, in byte order within a statement; RFC 0007 serve gate; next commit_seq; sync_commits with client_id = syncular.client_id, client_commit_id xid:<top xid>, actor_id = syncular.actor_id or the session''s role (SET ROLE respected); commit wake-up at commit): delete changes with tombstones for rows gone, delete changes with the old scopes for rows moved out of them, upsert changes, scope index, row-scope index, blob references. Errors: sync.schema_not_ready (55000) from the serve gate, sync.storage.writer_fence_rejected (P0001) from the writer fence, sync.storage.schema_not_registered (55000). push-and-pull.md §2.5, §4.1; barrier-rfc0007.md §4.4.';

CREATE FUNCTION syncular._capture_bypass(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_capture_bypass' LANGUAGE C STRICT;
COMMENT ON FUNCTION syncular._capture_bypass(boolean) IS
  'Internal. on = true: the capture triggers skip this backend''s writes until _capture_bypass(false), the end of the transaction, or the rollback of the subtransaction that set it; used by the schema bump''s row rewrite (engine writes are not captured twice). No grant: superuser / extension owner only. Raises nothing.';

CREATE FUNCTION syncular._install_capture(app_schema text, tbl text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE TRIGGER zz_syncular_capture BEFORE INSERT OR UPDATE ON %I.%I '
                 'FOR EACH ROW EXECUTE FUNCTION syncular._capture_row(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_insert AFTER INSERT ON %I.%I '
                 'REFERENCING NEW TABLE AS sync_new FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_update AFTER UPDATE ON %I.%I '
                 'REFERENCING OLD TABLE AS sync_old NEW TABLE AS sync_new FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_delete AFTER DELETE ON %I.%I '
                 'REFERENCING OLD TABLE AS sync_old FOR EACH STATEMENT '
                 'EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
  EXECUTE format('CREATE OR REPLACE TRIGGER syncular_capture_truncate BEFORE TRUNCATE ON %I.%I '
                 'FOR EACH STATEMENT EXECUTE FUNCTION syncular._capture_log(%L)', app_schema, tbl, tbl);
END
$$;
COMMENT ON FUNCTION syncular._install_capture(text, text) IS
  'Internal. Creates (or replaces) the five capture triggers on app_schema.tbl: zz_syncular_capture (BEFORE INSERT OR UPDATE, row), syncular_capture_insert / _update / _delete (AFTER, statement, transition tables sync_new / sync_old) and syncular_capture_truncate (BEFORE TRUNCATE). Called by ensure_schema for every synced table. Raises the DDL error when the table is missing. docs/writing-with-sql.md.';

CREATE FUNCTION syncular._drop_capture(app_schema text, tbl text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS zz_syncular_capture ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_insert ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_update ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_delete ON %I.%I', app_schema, tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS syncular_capture_truncate ON %I.%I', app_schema, tbl);
END
$$;
COMMENT ON FUNCTION syncular._drop_capture(text, text) IS
  'Internal. Drops the capture triggers of app_schema.tbl (unregister_schema keeps a synced table as a plain table without them). Raises the DDL error when the table is missing.';

REVOKE ALL ON FUNCTION syncular._capture_row() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_log() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_bypass(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._install_capture(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._drop_capture(text, text) FROM PUBLIC;

-- No silent divergence: a re-opening ensure_schema (same version) refuses while a synced table
-- lacks its capture triggers or has them disabled, and says what to do about the rows written
-- meanwhile.
CREATE FUNCTION syncular._check_capture(compiled jsonb) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t       jsonb;
  app     text := compiled ->> 'appSchema';
  missing text[];
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') LOOP
    SELECT array_agg(n ORDER BY n) INTO missing
      FROM unnest(ARRAY['zz_syncular_capture', 'syncular_capture_insert', 'syncular_capture_update',
                        'syncular_capture_delete', 'syncular_capture_truncate']) AS n
     WHERE NOT EXISTS (SELECT 1 FROM pg_trigger g
                        WHERE g.tgrelid = format('%I.%I', app, t ->> 'name')::regclass
                          AND g.tgname = n AND g.tgenabled IN ('O', 'A'));
    IF missing IS NOT NULL THEN
      PERFORM syncular._raise('sync.storage.physical_layout_mismatch',
        'a synced table lacks its capture triggers (dropped or disabled)',
        jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                           'reason', 'capture_triggers_missing', 'triggers', to_jsonb(missing)),
        format('Rows written to %I.%I while they were missing never reached clients. Restore them '
               '(ALTER TABLE %I.%I ENABLE TRIGGER ALL, or SELECT syncular._install_capture(%L, %L) as '
               'the extension owner), then SELECT syncular.rotate_log_epoch(partition) for every '
               'partition written meanwhile, so its clients bootstrap again.',
               app, t ->> 'name', app, t ->> 'name', app, t ->> 'name'));
    END IF;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._check_capture(jsonb) IS
  'Internal. For every table of the compiled schema: the five capture triggers exist and are enabled (tgenabled O or A); else raises sync.storage.physical_layout_mismatch (SQLSTATE 55000; details {phase: "storage_migration", table, reason: "capture_triggers_missing", triggers: [names]}) with a HINT: restore them, then rotate_log_epoch for the partitions written meanwhile. Called by ensure_schema when it re-opens the registered version. docs/writing-with-sql.md.';
REVOKE ALL ON FUNCTION syncular._check_capture(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION syncular._create_synced_table(app_schema text, tbl jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  app_cols text := '';
BEGIN
  IF (tbl -> 'materialize')::text::boolean THEN
    SELECT string_agg(format('%I %s%s', c.value ->> 'name', syncular._pg_type(c.value ->> 'type'),
                             CASE WHEN (c.value -> 'nullable')::text::boolean THEN '' ELSE ' NOT NULL' END),
                      ', ' ORDER BY c.n) || ', '
      INTO app_cols
      FROM jsonb_array_elements(tbl -> 'columns') WITH ORDINALITY AS c(value, n);
  END IF;
  EXECUTE format('CREATE TABLE %I.%I (_sync_partition text NOT NULL, _sync_row_id text NOT NULL, %s'
                 '_sync_server_version bigint NOT NULL, _sync_scopes jsonb NOT NULL, '
                 '_sync_payload bytea NOT NULL, _sync_column_versions bytea, '
                 'PRIMARY KEY (_sync_partition, _sync_row_id))',
                 app_schema, tbl ->> 'name', app_cols);
  -- ordinary SQL writes to it are sync commits (32_capture.sql)
  PERFORM syncular._install_capture(app_schema, tbl ->> 'name');
END
$$;
COMMENT ON FUNCTION syncular._create_synced_table(text, jsonb) IS
  'Internal. CREATE TABLE app_schema.<table> for one compiled table: _sync_partition, _sync_row_id, the app columns when materialized (projection types, NOT NULL when non-nullable), _sync_server_version, _sync_scopes, _sync_payload, _sync_column_versions; PK (_sync_partition, _sync_row_id); then the capture triggers (syncular._install_capture). Raises the DDL error if the table exists. data-model-and-storage.md §6.';

CREATE OR REPLACE FUNCTION syncular._rewrite_rows(app_schema text, tbl text, old_n integer, new_n integer,
                                       backfill jsonb) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  payload_expr text;
  decode_expr  text := 'NULL::jsonb';
  set_list     text := '_sync_payload = x.p';
  stmt         text;
  last_p       text;
  last_r       text;
  batch        bigint;
  total        bigint := 0;
BEGIN
  IF new_n = old_n AND jsonb_array_length(backfill) = 0 THEN
    RETURN 0;
  END IF;
  payload_expr := CASE WHEN new_n > old_n
                       THEN 'syncular._payload_append_nulls(k._sync_payload, $3, $4)'
                       ELSE 'k._sync_payload' END;
  IF jsonb_array_length(backfill) > 0 THEN
    decode_expr := format('syncular.decode_row(%L, b.p)', tbl);
    SELECT set_list || ', ' || string_agg(format('%I = %s', e.value ->> 'name',
                                                 syncular._projection_expr(e.value ->> 'name', e.value ->> 'type')),
                                          ', ' ORDER BY e.n)
      INTO set_list
      FROM jsonb_array_elements(backfill) WITH ORDINALITY AS e(value, n);
  END IF;
  stmt := format(
    'WITH u AS ('
    '  UPDATE %1$I.%2$I AS t SET %3$s'
    '    FROM (SELECT b.pk1, b.pk2, b.p, %4$s AS j'
    '            FROM (SELECT k._sync_partition AS pk1, k._sync_row_id AS pk2, %5$s AS p'
    '                    FROM %1$I.%2$I AS k'
    '                   WHERE $1::text IS NULL OR (k._sync_partition, k._sync_row_id) > ($1, $2)'
    '                   ORDER BY k._sync_partition, k._sync_row_id LIMIT 500) AS b) AS x'
    '   WHERE t._sync_partition = x.pk1 AND t._sync_row_id = x.pk2'
    '   RETURNING t._sync_partition, t._sync_row_id)'
    ' SELECT count(*) OVER (), _sync_partition, _sync_row_id FROM u'
    '  ORDER BY _sync_partition DESC, _sync_row_id DESC LIMIT 1',
    app_schema, tbl, set_list, decode_expr, payload_expr);
  -- the engine's own rewrite (same data, new layout): not a sync commit of the capture triggers
  PERFORM syncular._capture_bypass(true);
  LOOP
    batch := NULL;
    EXECUTE stmt INTO batch, last_p, last_r USING last_p, last_r, old_n, new_n;
    EXIT WHEN batch IS NULL;
    total := total + batch;
    EXIT WHEN batch < 500;
  END LOOP;
  PERFORM syncular._capture_bypass(false);
  RETURN total;
END
$$;
COMMENT ON FUNCTION syncular._rewrite_rows(text, text, integer, integer, jsonb) IS
  'Internal. Bump step 5 for one synced table: re-encodes every _sync_payload from old_n to new_n columns (trailing NULLs, syncular._payload_append_nulls) and sets the projection columns listed in backfill ([{name, type}]) from syncular.decode_row (which reads the compiled schema in sync_settings, so that must already hold the new one). Walks (_sync_partition, _sync_row_id) keysets in batches of 500 with the capture triggers bypassed (not a sync commit); returns the number of rows rewritten. data-model-and-storage.md §7 step 5.';

CREATE OR REPLACE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled     jsonb;
  version      integer;
  registered   text;
  prev_comp    jsonb;
  target       text;
  stored_ver   bigint;
  stored_txt   text;
  stored       jsonb;
  t            jsonb;
  tname        text;
  old_layout   jsonb;
  new_cols     jsonb;
  old_n        integer;
  new_n        integer;
  phys_cols    text[];
  mat          boolean;
  backfill     jsonb;
  added        text[];
  dropped      text[] := '{}';
  created      text[] := '{}';
  altered      text[] := '{}';
  rewrites     jsonb := '[]';   -- [{table, old, new, backfill}]
  rw           jsonb;
  rewritten    bigint := 0;
  new_names    text[];
  k            text;
  c            jsonb;
  i            integer;
BEGIN
  IF checkpoints IS NULL OR jsonb_typeof(checkpoints) <> 'array' THEN
    PERFORM syncular._schema_invalid('checkpoints must be a JSON array', 'checkpoints');
  END IF;

  -- compile first (pure): an invalid schema is refused without taking the migration lock
  compiled := syncular._compile_schema(ir, NULL);
  version := (compiled ->> 'version')::integer;
  SELECT array_agg(e ->> 'name' ORDER BY n) INTO new_names
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS x(e, n);
  new_names := coalesce(new_names, '{}');

  -- the migration lock, then every read that plans the work (decision: re-read under the lock)
  -- (a hot standby cannot take it and cannot write either: it only verifies the replicated marker;
  -- a create or bump there fails on its first write as a read-only transaction)
  IF NOT pg_is_in_recovery() THEN
    LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;
  END IF;
  PERFORM syncular._checkpoint_barrier(checkpoints, version);

  SELECT s.app_schema, s.compiled INTO registered, prev_comp FROM syncular.sync_settings s WHERE s.id = 1;
  SELECT m.schema_version, m.layouts INTO stored_ver, stored_txt FROM syncular.sync_schema_meta m WHERE m.id = 1;

  -- the app schema: explicit, else the registered one, else the caller's current_schema()
  IF registered IS NOT NULL AND app_schema IS NOT NULL AND app_schema <> registered THEN
    PERFORM syncular._raise('sync.storage.schema_invalid',
      'a different app schema is already registered in this database',
      jsonb_build_object('rule', 'app_schema', 'registeredSchema', registered, 'appSchema', app_schema),
      format('One app schema per database: pass app_schema => %L (or omit it), or undo the '
             'registration first with SELECT syncular.unregister_schema(%L).', registered, registered));
  END IF;
  target := coalesce(app_schema, registered, caller_schema);
  IF target IS NULL THEN
    PERFORM syncular._schema_invalid('no app schema: pass app_schema or set a search_path', 'app_schema');
  END IF;
  IF target IN ('syncular', 'pg_catalog', 'information_schema') OR starts_with(target, 'pg_') THEN
    PERFORM syncular._schema_invalid('the app schema cannot be a system or extension schema', 'app_schema',
                                     NULL, NULL, jsonb_build_object('appSchema', target));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = target) THEN
    PERFORM syncular._schema_invalid('the app schema does not exist', 'app_schema', NULL, NULL,
                                     jsonb_build_object('appSchema', target));
  END IF;
  compiled := jsonb_set(compiled, '{appSchema}', to_jsonb(target));

  -- ---- stored newer: refuse
  IF stored_ver IS NOT NULL AND stored_ver > version THEN
    PERFORM syncular._raise('sync.storage.schema_newer',
      'stored schema version is newer than the schema being ensured',
      jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored_ver, 'runningSchemaVersion', version),
      format('This database already serves schema version %s: deploy that IR (or a newer one). '
             'Versions never go back; to start over, SELECT syncular.unregister_schema(%L).',
             stored_ver, target));
  END IF;

  -- ---- same version: verify only, no writes
  IF stored_ver IS NOT NULL AND stored_ver = version THEN
    PERFORM syncular._verify_stored_layouts(compiled, syncular._parse_layouts(stored_txt));
    PERFORM syncular._check_physical_layout(compiled);
    PERFORM syncular._check_capture(compiled);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'verified', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- no marker: create everything
  IF stored_ver IS NULL THEN
    FOREACH tname IN ARRAY new_names LOOP
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._raise('sync.storage.schema_invalid',
          'a synced table to create already exists in the app schema',
          jsonb_build_object('table', tname, 'rule', 'table_exists'),
          format('ensure_schema creates its synced tables: drop or rename %I.%I (a table kept by '
                 'syncular.unregister_schema or DROP EXTENSION), or register into another app_schema.',
                 target, tname));
      END IF;
    END LOOP;
    FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
      PERFORM syncular._create_synced_table(target, t);
    END LOOP;
    PERFORM syncular._create_indexes(target, compiled);
    INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
      ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;
    INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
      VALUES (1, version, syncular._layouts_text(compiled))
      ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
    PERFORM syncular._install_checkpoints(checkpoints, version);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'created', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- stored older: the append-only bump, planned completely before any DDL
  stored := syncular._parse_layouts(stored_txt);
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    IF NOT stored ? tname THEN
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._raise('sync.storage.schema_invalid',
          'a synced table to create already exists in the app schema',
          jsonb_build_object('table', tname, 'rule', 'table_exists'),
          format('ensure_schema creates its synced tables: drop or rename %I.%I (a table kept by '
                 'syncular.unregister_schema or DROP EXTENSION), or register into another app_schema.',
                 target, tname));
      END IF;
      created := created || tname;
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    new_cols := t -> 'columns';
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(new_cols);
    FOR i IN 0 .. greatest(old_n, new_n) - 1 LOOP
      IF i >= new_n THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', old_layout -> i ->> 'name', 'reason', 'column_removed'),
          syncular._schema_change_hint());
      ELSIF i < old_n AND NOT syncular._layout_entry_equal(old_layout -> i, new_cols -> i) THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', coalesce(new_cols -> i ->> 'name', ''),
                             'reason', 'column_changed'),
          syncular._schema_change_hint());
      ELSIF i >= old_n AND NOT (new_cols -> i -> 'nullable')::text::boolean THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: appended columns must be nullable',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', new_cols -> i ->> 'name',
                             'reason', 'appended_column_not_nullable'),
          syncular._schema_change_hint());
      END IF;
    END LOOP;
  END LOOP;

  -- 1. retired tables (stored, no longer in the schema)
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (new_names)) THEN
      DELETE FROM syncular.sync_row_scopes WHERE tbl = k;
      DELETE FROM syncular.sync_blob_refs WHERE tbl = k;
      EXECUTE format('DROP TABLE IF EXISTS %I.%I', target, k);
      dropped := dropped || k;
    END IF;
  END LOOP;

  -- 2. tables kept: drop owned indexes, add/drop projection columns, plan the row rewrite
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    CONTINUE WHEN tname = ANY (created);
    IF to_regclass(format('%I.%I', target, tname)) IS NULL THEN
      created := created || tname;     -- stored but physically missing: create it afresh
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(t -> 'columns');
    mat := (t -> 'materialize')::text::boolean;
    SELECT array_agg(a.attname::text) INTO phys_cols
      FROM pg_attribute a
     WHERE a.attrelid = format('%I.%I', target, tname)::regclass AND a.attnum > 0 AND NOT a.attisdropped;

    PERFORM syncular._install_capture(target, tname);   -- a table registered before 0.4.0 too
    PERFORM syncular._drop_owned_indexes(target, tname,
              ARRAY(SELECT e ->> 'name' FROM jsonb_array_elements(t -> 'indexes') e));
    IF NOT ('_sync_column_versions' = ANY (phys_cols)) THEN
      EXECUTE format('ALTER TABLE %I.%I ADD COLUMN _sync_column_versions bytea', target, tname);
    END IF;

    backfill := '[]';
    added := '{}';
    IF mat THEN
      FOR i IN 0 .. new_n - 1 LOOP
        c := t -> 'columns' -> i;
        IF NOT ((c ->> 'name') = ANY (phys_cols)) THEN
          EXECUTE format('ALTER TABLE %I.%I ADD COLUMN %I %s', target, tname, c ->> 'name',
                         syncular._pg_type(c ->> 'type'));
          added := added || (c ->> 'name');
          IF i < old_n THEN   -- an existing value (materialize turned on): backfill it
            backfill := backfill || jsonb_build_array(jsonb_build_object('name', c ->> 'name',
                                                                         'type', c ->> 'type'));
          END IF;
        END IF;
      END LOOP;
    ELSE
      -- materialize turned off: drop the stale projection (the payload is the truth)
      FOR i IN 0 .. old_n - 1 LOOP
        IF (old_layout -> i ->> 'name') = ANY (phys_cols)
           AND NOT starts_with(old_layout -> i ->> 'name', '_sync') THEN
          EXECUTE format('ALTER TABLE %I.%I DROP COLUMN %I', target, tname, old_layout -> i ->> 'name');
          added := added || ('-' || (old_layout -> i ->> 'name'));
        END IF;
      END LOOP;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 OR cardinality(added) > 0 THEN
      altered := altered || tname;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 THEN
      rewrites := rewrites || jsonb_build_array(jsonb_build_object('table', tname, 'old', old_n,
                                                                   'new', new_n, 'backfill', backfill));
    END IF;
  END LOOP;

  -- 3. new tables
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    IF (t ->> 'name') = ANY (created) THEN
      PERFORM syncular._create_synced_table(target, t);
    END IF;
  END LOOP;

  -- 4. the compiled schema first: decode_row reads it for the backfill
  INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
    ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;

  -- 5. payload re-encoding and projection backfill
  FOR rw IN SELECT value FROM jsonb_array_elements(rewrites) WITH ORDINALITY ORDER BY ordinality LOOP
    rewritten := rewritten + syncular._rewrite_rows(target, rw ->> 'table', (rw ->> 'old')::int,
                                                    (rw ->> 'new')::int, rw -> 'backfill');
  END LOOP;

  -- 6. indexes (after the data, so unique indexes check the backfilled projection once)
  PERFORM syncular._create_indexes(target, compiled);

  -- 7. the marker, then the RFC 0007 declarations
  INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
    VALUES (1, version, syncular._layouts_text(compiled))
    ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
  PERFORM syncular._install_checkpoints(checkpoints, version);

  RETURN jsonb_build_object('schemaVersion', version, 'action', 'migrated', 'appSchema', target,
                            'previousSchemaVersion', stored_ver,
                            'tables', to_jsonb(new_names),
                            'created', to_jsonb(created), 'dropped', to_jsonb(dropped),
                            'altered', to_jsonb(altered), 'rewrittenRows', rewritten);
END
$$;
COMMENT ON FUNCTION syncular._ensure_schema(jsonb, jsonb, text, text) IS
  'Internal body of syncular.ensure_schema; caller_schema is the caller''s current_schema(). See syncular.ensure_schema.';

CREATE OR REPLACE FUNCTION syncular.unregister_schema(app_schema text, drop_tables boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  registered  text;
  compiled    jsonb;
  version     bigint;
  tables      text[];
  tname       text;
  dropped     text[] := '{}';
  kept        text[] := '{}';
  partitions  bigint;
  commits     bigint;
BEGIN
  -- the same lock as ensure_schema and every push: no round runs while the state goes
  LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;
  SELECT s.app_schema, s.compiled INTO registered, compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF registered IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered', 'no app schema is registered',
      jsonb_build_object('appSchema', app_schema),
      'Nothing to undo: ensure_schema has not registered a schema in this database.');
  END IF;
  -- the guard: the caller names the schema being discarded
  IF app_schema IS DISTINCT FROM registered THEN
    PERFORM syncular._raise('sync.storage.schema_invalid',
      'unregister_schema names a schema that is not the registered one',
      jsonb_build_object('rule', 'app_schema', 'registeredSchema', registered, 'appSchema', app_schema),
      format('Name the registered app schema to confirm: SELECT syncular.unregister_schema(%L).',
             registered));
  END IF;
  SELECT m.schema_version INTO version FROM syncular.sync_schema_meta m WHERE m.id = 1;
  SELECT coalesce(array_agg(e ->> 'name' ORDER BY n), '{}') INTO tables
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS x(e, n);
  SELECT count(*) INTO partitions FROM syncular.sync_partitions;
  SELECT count(*) INTO commits FROM syncular.sync_commits;

  -- the log, the per-partition state and the registration: a fresh install's catalog.  The
  -- partition registry goes too, so a returning client sees a new log epoch and resets.
  TRUNCATE syncular.sync_changes, syncular.sync_change_scopes, syncular.sync_commits,
           syncular.sync_row_scopes, syncular.sync_push_results, syncular.sync_reactions,
           syncular.sync_clients, syncular.sync_blob_refs, syncular.sync_tombstones,
           syncular.sync_backfill_checkpoints, syncular.sync_writer_fence,
           syncular.sync_partition_registry, syncular.sync_partitions,
           syncular.sync_schema_meta, syncular.sync_row_validators, syncular.sync_settings,
           syncular.sync_leases, syncular.sync_faults,
           syncular.sync_operation_queries, syncular.sync_operation_commands;

  FOREACH tname IN ARRAY tables LOOP
    IF to_regclass(format('%I.%I', registered, tname)) IS NULL THEN
      CONTINUE;
    ELSIF drop_tables THEN
      EXECUTE format('DROP TABLE %I.%I', registered, tname);
      dropped := dropped || tname;
    ELSE
      PERFORM syncular._drop_capture(registered, tname);   -- a plain table from now on
      kept := kept || tname;
    END IF;
  END LOOP;

  RETURN jsonb_build_object('appSchema', registered, 'schemaVersion', version,
                            'droppedTables', to_jsonb(dropped), 'keptTables', to_jsonb(kept),
                            'partitions', partitions, 'commits', commits);
END
$$;
COMMENT ON FUNCTION syncular.unregister_schema(text, boolean) IS
$$Undoes syncular.ensure_schema without dropping the extension (e.g. a test registration): afterwards the database is as after CREATE EXTENSION syncular and ensure_schema registers afresh.
Arguments: app_schema = the registered app schema, named to confirm (the guard against a stray call); drop_tables = also DROP TABLE every synced table of the registration (RESTRICT: a dependent view or foreign key fails the call and nothing is undone); false (default) keeps them as plain tables with their _sync_* columns (without the capture triggers: later writes to them are no sync commits), and a later ensure_schema of the same table names then refuses with sync.storage.schema_invalid (rule table_exists) until they are dropped or renamed.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, the remote query and command registrations (sync_operation_queries, sync_operation_commands), armed test faults (sync_faults), RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
Returns {appSchema, schemaVersion, droppedTables, keptTables, partitions, commits} (partitions and commits discarded).
Errors: sync.storage.schema_not_registered (55000) when nothing is registered; sync.storage.schema_invalid (22023; details {rule: "app_schema", registeredSchema, appSchema}) when app_schema is not the registered schema; both with an errhint. Owner-only (EXECUTE revoked from PUBLIC).$$;

CREATE OR REPLACE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb,
                              p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  s jsonb;
  resp jsonb;
  f jsonb;
  sections jsonb := '[]'::jsonb;
  cur jsonb;
  seg jsonb;
  changes jsonb;
BEGIN
  IF jsonb_typeof(p_subscriptions) IS DISTINCT FROM 'array' THEN
    PERFORM syncular._raise('sync.invalid_request', 'subscriptions must be a JSON array', NULL);
  END IF;
  SELECT st.compiled INTO compiled FROM syncular.sync_settings st WHERE st.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
      'schemaVersion', (compiled->>'version')::int,
      'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)),
    jsonb_build_object('type', 'PULL_HEADER',
      'limitCommits', coalesce((p_limits->>'limitCommits')::int, 0),
      'limitSnapshotRows', coalesce((p_limits->>'limitSnapshotRows')::int, 0),
      'maxSnapshotPages', coalesce((p_limits->>'maxSnapshotPages')::int, 0),
      'accept', 1));
  FOR s IN SELECT * FROM jsonb_array_elements(p_subscriptions) LOOP
    frames := frames || jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION',
      'id', s->>'id', 'table', s->>'table', 'scopes', coalesce(s->'scopes', '{}'::jsonb),
      'cursor', coalesce((s->>'cursor')::bigint, -1), 'bootstrapState', s->'bootstrapState'));
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'SUB_START' THEN
      cur := (f - 'type') || '{"commits": [], "rows": []}'::jsonb;
    WHEN 'COMMIT' THEN
      -- one aggregate, not an append per change: a commit of SQL writes can hold 100,000 changes
      SELECT coalesce(jsonb_agg(jsonb_build_object('table', f->'tables'->((x.ch->>'tableIndex')::int)) ||
               (x.ch - 'tableIndex' - 'row') ||
               CASE WHEN x.ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                      f->'tables'->>((x.ch->>'tableIndex')::int), decode(x.ch->>'row', 'base64')))
                    ELSE '{}'::jsonb END ORDER BY x.n), '[]'::jsonb)
        INTO changes
        FROM jsonb_array_elements(f->'changes') WITH ORDINALITY AS x(ch, n);
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      cur := jsonb_set(cur, '{rows}', cur->'rows' || coalesce((
        SELECT jsonb_agg(jsonb_build_object('serverVersion', y.rw->'serverVersion', 'row', y.rw->'values')
                         ORDER BY x.n, y.m)
          FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY AS x(blk, n),
               jsonb_array_elements(x.blk) WITH ORDINALITY AS y(rw, m)), '[]'::jsonb));
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE
      NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;
COMMENT ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) IS
'Pulls from SQL through the same engine as clients (SPEC §4): builds a wire-3 request, serves it with '
'syncular.handle() and returns one section per subscription in request order. '
'subscriptions: [{"id": text, "table": text, "scopes": {variable: [values]}, "cursor"?: int (default -1 = bootstrap), '
'"bootstrapState"?: json}]; limits: {"limitCommits", "limitSnapshotRows", "maxSnapshotPages"} (0 or absent = defaults). '
'Returns [{"id", "status": "active"|"revoked"|"reset", "reasonCode", "effectiveScopes", "bootstrap", "commits": '
'[{"commitSeq", "createdAtMs", "actorId", "changes": [{"table", "rowId", "op", "rowVersion"?, "scopes", "row"?: {...}}]}], '
'"rows": [{"serverVersion", "row": {...}}], "nextCursor", "bootstrapState"?}]. Raises what syncular.handle() raises for '
'request-level errors (sync.invalid_subscription 22023, sync.unknown_table 42P01, ...).';

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
