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
           syncular.sync_leases, syncular.sync_faults;

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

COMMENT ON FUNCTION syncular.unregister_schema(text, boolean) IS
$$Undoes syncular.ensure_schema without dropping the extension (e.g. a test registration): afterwards the database is as after CREATE EXTENSION syncular and ensure_schema registers afresh.
Arguments: app_schema = the registered app schema, named to confirm (the guard against a stray call); drop_tables = also DROP TABLE every synced table of the registration (RESTRICT: a dependent view or foreign key fails the call and nothing is undone); false (default) keeps them as plain tables with their _sync_* columns, and a later ensure_schema of the same table names then refuses with sync.storage.schema_invalid (rule table_exists) until they are dropped or renamed.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, armed test faults (sync_faults), RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
Returns {appSchema, schemaVersion, droppedTables, keptTables, partitions, commits} (partitions and commits discarded).
Errors: sync.storage.schema_not_registered (55000) when nothing is registered; sync.storage.schema_invalid (22023; details {rule: "app_schema", registeredSchema, appSchema}) when app_schema is not the registered schema; both with an errhint. Owner-only (EXECUTE revoked from PUBLIC).$$;
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

-- the columns of sync_faults (created above) say what they hold (src/sql/95_column_comments.sql)
COMMENT ON COLUMN syncular.sync_faults.fault IS 'Armed fault, e.g. idempotency_cache_miss (syncular.inject_fault; a superuser-only test seam).';
COMMENT ON COLUMN syncular.sync_faults.partition IS 'Partition the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.client_id IS 'clientId the fault applies to.';
COMMENT ON COLUMN syncular.sync_faults.armed_at_ms IS 'When the fault was armed, milliseconds since the Unix epoch.';
