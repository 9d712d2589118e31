-- syncular install script, part 60: the RFC 0007 barrier (shared/reference/barrier-rfc0007.md).
--
--   backfill checkpoints  declare / claim / advance / activate / checkpoints / source_coverage_seq
--   writer fence          raised by every install (max semantics, never lowered) and, on every
--                         schema bump, for every partition in sync_partitions (0.30.4 behaviour);
--   serve gate            serve_gate (the report) and _serve_gate_check (the engine's form, with
--                         the epoch kind): both C (src/gate.c, the rule's one definition), STABLE,
--                         so they read the caller's snapshot
--   readiness             readiness, _checkpoint_barrier (ensure_schema's barrier)
--   same-version check    _check_physical_layout (§6.2)
--
-- The hooks syncular._checkpoint_barrier, syncular._install_checkpoints and
-- syncular._check_physical_layout are defined as no-ops by 10_schema.sql (same signatures); this
-- file is concatenated after it and replaces them.  ensure_schema calls _checkpoint_barrier under
-- the migration lock before reading the marker (so also on a same-version open),
-- _check_physical_layout after the stored-layout check of a same-version open, and
-- _install_checkpoints right after the marker write of a create or a bump.
--
-- Conventions: every function that reads or writes the catalog pins
-- `search_path = pg_catalog, pg_temp` and qualifies every object.  Parameters keep their API
-- names (`partition`, `name`, ...); inside the bodies `#variable_conflict use_column` makes an
-- unqualified name a column and parameters are always written `<function>.<parameter>`.
-- Pending checkpoints and checkpoint listings are ordered by (partition, name) COLLATE "C", so
-- the order (and the checkpoint named in a refusal) does not depend on the database collation.
-- Fixed messages; identifiers go only in the JSON details.

-- ---------------------------------------------------------------------------------------------
-- internal helpers

CREATE OR REPLACE FUNCTION syncular._checkpoint_json(c syncular.sync_backfill_checkpoints)
RETURNS jsonb LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object('partition', c.partition, 'name', c.name,
                            'schemaVersion', c.schema_version, 'state', c.state,
                            'watermark', c.watermark, 'ownerEpoch', c.owner_epoch,
                            'observedRows', c.observed_rows, 'updatedAtMs', c.updated_at_ms)
$$;
COMMENT ON FUNCTION syncular._checkpoint_json(syncular.sync_backfill_checkpoints) IS
'Internal. One sync_backfill_checkpoints row as JSON {partition, name, schemaVersion, state, watermark, '
'ownerEpoch, observedRows, updatedAtMs} (numbers for the integer columns; updatedAtMs in ms since the Unix epoch). '
'Never raises.';

CREATE OR REPLACE FUNCTION syncular._checkpoint_args(partition text, name text)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _checkpoint_args.partition IS NULL OR _checkpoint_args.partition = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'partition'));
  END IF;
  IF _checkpoint_args.name IS NULL OR _checkpoint_args.name = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'name'));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_args(text, text) IS
'Internal. Raises sync.storage.invalid_checkpoints (SQLSTATE 22023, details {field}) when partition or name is '
'NULL or empty.';

CREATE OR REPLACE FUNCTION syncular._checkpoint_declarations(checkpoints jsonb)
RETURNS TABLE (partition text, name text, schema_version integer)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d jsonb;
  i integer := 0;
  v numeric;
BEGIN
  IF checkpoints IS NULL OR jsonb_typeof(checkpoints) = 'null' THEN
    RETURN;
  END IF;
  IF jsonb_typeof(checkpoints) <> 'array' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'checkpoint declarations must be an array of {partition, name, schemaVersion}',
      jsonb_build_object('reason', 'not_array'));
  END IF;
  FOR d IN SELECT e.value FROM jsonb_array_elements(checkpoints) WITH ORDINALITY e(value, ord)
           ORDER BY e.ord LOOP
    IF jsonb_typeof(d) <> 'object' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'reason', 'not_object'));
    END IF;
    IF jsonb_typeof(d -> 'partition') IS DISTINCT FROM 'string' OR d ->> 'partition' = '' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'partition'));
    END IF;
    IF jsonb_typeof(d -> 'name') IS DISTINCT FROM 'string' OR d ->> 'name' = '' THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'name'));
    END IF;
    IF jsonb_typeof(d -> 'schemaVersion') IS DISTINCT FROM 'number' THEN
      v := NULL;
    ELSE
      v := (d ->> 'schemaVersion')::numeric;
    END IF;
    IF v IS NULL OR v <> trunc(v) OR v < 1 OR v > 2147483647 THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'checkpoint declarations must be an array of {partition, name, schemaVersion}',
        jsonb_build_object('index', i, 'field', 'schemaVersion'));
    END IF;
    partition := d ->> 'partition';
    name := d ->> 'name';
    schema_version := v::integer;
    RETURN NEXT;
    i := i + 1;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_declarations(jsonb) IS
'Internal. Validates checkpoint declarations (RFC 0007 §3.1): NULL / JSON null = none; otherwise a JSON array of '
'objects {partition: non-empty string, name: non-empty string, schemaVersion: integer 1..2^31-1} (other members '
'ignored). Returns one row per declaration in array order. Bad shape -> sync.storage.invalid_checkpoints '
'(SQLSTATE 22023) with details {reason:"not_array"} or {index (0-based), reason:"not_object"} or {index, field}.';

-- The first checkpoint, in (partition, name) order, that is incomplete at `running_version`
-- (schema_version = running, state <> activated; all partitions) and not covered by a
-- declaration (matched on partition + name only, §3.1).  No row when every one is covered.
CREATE OR REPLACE FUNCTION syncular._first_undeclared_checkpoint(checkpoints jsonb, running_version integer,
  OUT partition text, OUT name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  decl jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', d.partition, 'name', d.name)), '[]'::jsonb)
    INTO decl FROM syncular._checkpoint_declarations(_first_undeclared_checkpoint.checkpoints) d;
  SELECT c.partition, c.name INTO _first_undeclared_checkpoint.partition, _first_undeclared_checkpoint.name
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.schema_version = _first_undeclared_checkpoint.running_version
     AND c.state <> 'activated'
     AND NOT decl @> jsonb_build_array(jsonb_build_object('partition', c.partition, 'name', c.name))
   ORDER BY c.partition COLLATE "C", c.name COLLATE "C"
   LIMIT 1;
END
$$;
COMMENT ON FUNCTION syncular._first_undeclared_checkpoint(jsonb, integer) IS
'Internal. (partition, name) of the first incomplete checkpoint at running_version (all partitions, ordered by '
'(partition, name) COLLATE "C") that the declarations do not cover (partition + name match; schemaVersion not '
'compared, RFC 0007 §3.1); both NULL when none. Raises sync.storage.invalid_checkpoints for a bad declaration list.';

-- install (§3.2): the declared row (never touching an existing one) and the fence raise.
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
COMMENT ON FUNCTION syncular._install_checkpoint(text, text, integer) IS
'Internal (RFC 0007 §3.2 "install"). Inserts the checkpoint row (state declared, watermark/owner_epoch/'
'observed_rows 0, updated_at_ms now) unless (partition, name) exists in any state, then raises '
'sync_writer_fence(partition) to schema_version with max semantics (never lowers). Takes no partition lock.';

-- ---------------------------------------------------------------------------------------------
-- checkpoints

CREATE OR REPLACE FUNCTION syncular.declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  c syncular.sync_backfill_checkpoints;
BEGIN
  PERFORM syncular._checkpoint_args(declare_checkpoint.partition, declare_checkpoint.name);
  IF declare_checkpoint.schema_version IS NULL OR declare_checkpoint.schema_version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a schema version >= 1', jsonb_build_object('field', 'schemaVersion'));
  END IF;
  PERFORM syncular._install_checkpoint(declare_checkpoint.partition, declare_checkpoint.name,
                                       declare_checkpoint.schema_version);
  SELECT * INTO c FROM syncular.sync_backfill_checkpoints k
   WHERE k.partition = declare_checkpoint.partition AND k.name = declare_checkpoint.name;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.checkpoint_not_declared', 'backfill checkpoint is not declared',
      jsonb_build_object('partition', declare_checkpoint.partition, 'name', declare_checkpoint.name));
  END IF;
  RETURN syncular._checkpoint_json(c);
END
$$;
COMMENT ON FUNCTION syncular.declare_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 declareCheckpoint. Installs the checkpoint (partition text, name text: non-empty; schema_version '
'integer >= 1): inserts a declared row unless one exists in any state (ON CONFLICT DO NOTHING) and raises the '
'partition''s writer fence to schema_version, never lowering it; then returns the stored row as JSON {partition, '
'name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs (ms)} whatever its state '
'(re-declaring an activated checkpoint returns it activated). Takes no partition and no migration lock; the fence '
'applies from the caller''s commit. Errors: sync.storage.invalid_checkpoints (22023) for NULL/empty arguments or a '
'version < 1; sync.storage.checkpoint_not_declared (42704) if the row is missing after the install.';

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
COMMENT ON FUNCTION syncular.claim_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 claimCheckpoint. One UPDATE of the (partition, name) row unless it is activated: owner_epoch + 1, '
'declared -> backfilling (backfilling stays: a takeover), schema_version overwritten with the caller''s value '
'(reference behaviour), updated_at_ms = now. Returns the claimed row as JSON (see declare_checkpoint); its '
'ownerEpoch is the caller''s owner epoch. Concurrent claimers serialize on the row lock and get distinct epochs. '
'Errors: sync.storage.checkpoint_not_declared (42704) when the row is absent or activated; '
'sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';

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
COMMENT ON FUNCTION syncular.advance_checkpoint(text, text, bigint, bigint, bigint) IS
'RFC 0007 §3.2 advanceCheckpoint. Compare-and-set on owner_epoch only (state is not checked, as in the reference): '
'sets watermark (a commit_seq), observed_rows and updated_at_ms when the row''s owner_epoch equals owner_epoch. '
'Returns true iff one row changed; a stale owner (or an unknown checkpoint) gets false and never an error. Runs in '
'the caller''s transaction, so a backfill batch can share one transaction with its push: '
'SELECT syncular.advance_checkpoint(...), syncular.handle(...) -- and roll back when it returns false. '
'Errors: sync.storage.invalid_checkpoints (22023) for a NULL watermark or observed_rows.';

-- §3.3 hasSourceChangesAbove
CREATE OR REPLACE FUNCTION syncular._source_changes_above(partition text, tables text[], seq bigint)
RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  horizon bigint;
BEGIN
  SELECT coalesce((SELECT p.horizon_seq FROM syncular.sync_partitions p
                    WHERE p.partition = _source_changes_above.partition), 0)
    INTO horizon;
  IF coalesce(cardinality(_source_changes_above.tables), 0) = 0 THEN
    RETURN 'clean';
  END IF;
  IF EXISTS (SELECT 1 FROM syncular.sync_changes ch
              WHERE ch.partition = _source_changes_above.partition
                AND ch.tbl = ANY (_source_changes_above.tables)
                AND ch.commit_seq > _source_changes_above.seq) THEN
    RETURN 'changed';
  END IF;
  IF horizon > _source_changes_above.seq THEN
    RETURN 'unverifiable';
  END IF;
  RETURN 'clean';
END
$$;
COMMENT ON FUNCTION syncular._source_changes_above(text, text[], bigint) IS
'Internal (RFC 0007 §3.3 hasSourceChangesAbove). ''clean'' for an empty table list; ''changed'' when sync_changes '
'holds a row of the partition for one of the tables with commit_seq > seq; otherwise ''unverifiable'' when the '
'partition''s horizon_seq (0 without a row) is > seq (a pruned window is never clean); otherwise ''clean''.';

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
COMMENT ON FUNCTION syncular.activate_checkpoint(text, text, bigint, bigint, text[]) IS
'RFC 0007 §3.2 activateCheckpoint. Under the partition write lock (sync_partitions row FOR UPDATE, the row is '
'inserted first when missing): (1) the checkpoint must exist and the partition''s fence must be >= its '
'schema_version, else sync.storage.checkpoint_fence_missing (SQLSTATE 55000, details {partition, name, '
'schemaVersion, requiredWriterVersion}); (2) coverage (§3.3) of the source tables (sync_changes.tbl names) above '
'watermark (a commit_seq): changed -> ''stale'', pruned past the watermark -> ''unverifiable'', writing nothing; '
'(3) state = activated, watermark, updated_at_ms where owner_epoch matches and the row is not activated -> '
'''activated'', else ''stale'' (wrong epoch or already activated). Owner epoch 0 activates a never-claimed row. '
'Errors: also sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';

CREATE OR REPLACE FUNCTION syncular.checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._checkpoint_json(c)
    FROM syncular.sync_backfill_checkpoints c
   WHERE c.partition = $1
   ORDER BY c.name COLLATE "C"
$$;
COMMENT ON FUNCTION syncular.checkpoints(text) IS
'RFC 0007 §3.2 readCheckpoints. Every checkpoint of the partition, any state, ordered by name (COLLATE "C"), '
'each as JSON {partition, name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs}. '
'Never raises.';

CREATE OR REPLACE FUNCTION syncular.source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(max(ch.commit_seq), 0)
    FROM syncular.sync_changes ch
   WHERE ch.partition = $1 AND ch.tbl = ANY ($2)
$$;
COMMENT ON FUNCTION syncular.source_coverage_seq(text, text[]) IS
'RFC 0007 §3.2 sourceCoverageSeq. The highest commit_seq in sync_changes of the partition for the listed tables '
'(synced table names); 0 when there is none or the list is empty/NULL. A watermark for activate_checkpoint. '
'Never raises.';


-- ---------------------------------------------------------------------------------------------
-- the serve gate (§4)

CREATE OR REPLACE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]',
  running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_serve_gate';
COMMENT ON FUNCTION syncular.serve_gate(text, jsonb, integer) IS
'RFC 0007 §4 readServeGate + serveGateRefusal. partition: the request''s partition; checkpoints: the caller''s '
'declarations, a JSON array of {partition, name, schemaVersion} (NULL/[] = none; matched on partition + name '
'only); running_version: the served schema version, default sync_settings.compiled->>''version''. Reads in ONE '
'SELECT the stored schema version (0 without a marker), the partition''s log epoch (null without a registry row) '
'and every pending checkpoint (schema_version = running, state <> activated, ALL partitions, ordered by '
'(partition, name) COLLATE "C"). Returns {ready, storedSchemaVersion, runningSchemaVersion, logEpoch, pending: '
'[{partition, name}], refusal}; refusal is null or {kind: "schema" | "checkpoint", code: "sync.schema_not_ready", '
'message: "server schema is not ready for this request", details}, details being '
'{"storedSchemaVersion": n, "runningSchemaVersion": n} (stored > running, checked first) or '
'{"partition": p, "projection": name} (first uncovered pending checkpoint). Never raises for a not-ready state. '
'Errors: sync.storage.invalid_checkpoints (22023) for bad declarations; sync.storage.schema_not_registered (55000) '
'when no running version is given and no compiled schema is registered. STABLE: reads the calling statement''s '
'snapshot. The epoch kind (a token that changed between two reads) is evaluated by the engine, see '
'_serve_gate_check.';

CREATE OR REPLACE FUNCTION syncular._serve_gate_check(partition text, running_version integer,
  token jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_serve_gate_check';
COMMENT ON FUNCTION syncular._serve_gate_check(text, integer, jsonb) IS
'Internal; the C engine''s serve gate as SQL (RFC 0007 §4.4, src/gate.c): the same C code the engine runs at the '
'entry gate of every round, in every push commit right after the partition lock, and in the pull''s snapshot before '
'any subscription is served. STABLE, so its reads use the calling statement''s snapshot. '
'Declarations come from the setting syncular.checkpoints (JSON array text as for serve_gate; unset or empty = '
'none), set by the gateway with SET syncular.checkpoints = ''[...]''. token: NULL, or an earlier read''s token '
'(its members storedSchemaVersion and/or logEpoch are compared; others ignored). Returns the gate token '
'{storedSchemaVersion (0 without a marker), logEpoch (null without a registry row)}. Refusals, in order, all '
'sync.schema_not_ready (SQLSTATE 55000, message "server schema is not ready for this request"): schema, DETAIL '
'{"code":"sync.schema_not_ready","details":{"storedSchemaVersion":n,"runningSchemaVersion":n}}; checkpoint, '
'details {"partition":p,"projection":name}; epoch (a member of token differs from the current read), details '
'{"logEpochChanged":true}. Errors: sync.storage.invalid_checkpoints (22023) for a bad setting. Writes nothing.';

-- ---------------------------------------------------------------------------------------------
-- ensure_schema hooks and the readiness report

CREATE OR REPLACE FUNCTION syncular._checkpoint_barrier(checkpoints jsonb, running_version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  u record;
BEGIN
  SELECT * INTO u FROM syncular._first_undeclared_checkpoint(_checkpoint_barrier.checkpoints,
                                                            _checkpoint_barrier.running_version);
  IF u.name IS NOT NULL THEN
    PERFORM syncular._raise('sync.storage.checkpoint_incomplete',
      'a declared backfill checkpoint is not activated and this caller did not declare it',
      jsonb_build_object('phase', 'backfill_checkpoint', 'partition', u.partition, 'name', u.name));
  END IF;
END
$$;
COMMENT ON FUNCTION syncular._checkpoint_barrier(jsonb, integer) IS
'Internal; ensure_schema''s checkpoint barrier (RFC 0007 §3.4 step 3), to run before the schema marker is read '
'(so also on a same-version open). Raises sync.storage.checkpoint_incomplete (SQLSTATE 55000, message "a declared '
'backfill checkpoint is not activated and this caller did not declare it", details {phase: '
'"backfill_checkpoint", partition, name} of the first offender in (partition, name) order) when a checkpoint with '
'schema_version = running_version and state <> activated, in ANY partition, is not covered by checkpoints (JSON '
'array of {partition, name, schemaVersion}). Errors: sync.storage.invalid_checkpoints (22023). Writes nothing.';

CREATE OR REPLACE FUNCTION syncular._install_checkpoints(checkpoints jsonb, version integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  d record;
BEGIN
  IF _install_checkpoints.version IS NULL OR _install_checkpoints.version < 1 THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'the schema version of a bump must be >= 1', jsonb_build_object('field', 'version'));
  END IF;
  FOR d IN SELECT * FROM syncular._checkpoint_declarations(_install_checkpoints.checkpoints) LOOP
    PERFORM syncular._install_checkpoint(d.partition, d.name, d.schema_version);
  END LOOP;
  -- 0.30.4: every migration raises the fence of every known partition, never lowering one
  INSERT INTO syncular.sync_writer_fence AS f (partition, required_writer_version)
  SELECT p.partition, _install_checkpoints.version FROM syncular.sync_partitions p
  ON CONFLICT (partition) DO UPDATE SET required_writer_version = EXCLUDED.required_writer_version
    WHERE f.required_writer_version < EXCLUDED.required_writer_version;
END
$$;
COMMENT ON FUNCTION syncular._install_checkpoints(jsonb, integer) IS
'Internal; ensure_schema hook, called inside the bump transaction right after the marker write (RFC 0007 §3.4 '
'step 6.4, §5.2). checkpoints: JSON array of {partition, name, schemaVersion} (NULL/[] = none); version: the new '
'schema version. Installs every declaration with its own schemaVersion (declared row unless it exists; fence '
'raised to that version, max semantics), then raises the fence of every partition in sync_partitions to version, '
'never lowering one (0.30.4). Errors: sync.storage.invalid_checkpoints (22023); a failure rolls back with the bump.';

CREATE OR REPLACE FUNCTION syncular._check_physical_layout(compiled jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  msg constant text := 'a synced table does not match the storage layout the running code reads and writes';
  meta_names constant text[] := ARRAY['_sync_partition', '_sync_row_id', '_sync_server_version',
                                      '_sync_scopes', '_sync_payload', '_sync_column_versions'];
  meta_types constant text[] := ARRAY['TEXT', 'TEXT', 'BIGINT', 'JSONB', 'BYTEA', 'BYTEA'];
  meta_notnull constant boolean[] := ARRAY[true, true, true, true, true, false];
  app_schema text;
  t jsonb;
  tname text;
  rel regclass;
  expected text[];
  col text;
  a record;
  i integer;
BEGIN
  app_schema := coalesce(compiled ->> 'appSchema',
                         (SELECT s.app_schema FROM syncular.sync_settings s WHERE s.id = 1));
  IF app_schema IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no app schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  FOR t IN SELECT e.value FROM jsonb_array_elements(coalesce(compiled -> 'tables', '[]'::jsonb))
                                 WITH ORDINALITY e(value, ord) ORDER BY e.ord LOOP
    tname := t ->> 'name';
    -- the relation the row statements use: the quoted, schema-qualified identifier
    rel := to_regclass(format('%I.%I', app_schema, tname));

    -- 1. no catalog columns at all
    IF rel IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute at
                                   WHERE at.attrelid = rel AND at.attnum > 0 AND NOT at.attisdropped) THEN
      PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
        jsonb_build_object('phase', 'storage_migration', 'table', tname, 'reason', 'missing_table'));
    END IF;

    -- 2. every expected column, in table-column order
    expected := ARRAY['_sync_partition', '_sync_row_id'];
    IF coalesce((t ->> 'materialize')::boolean, true) THEN
      expected := expected || ARRAY(SELECT c.value ->> 'name'
                                      FROM jsonb_array_elements(coalesce(t -> 'columns', '[]'::jsonb))
                                           WITH ORDINALITY c(value, ord) ORDER BY c.ord);
    END IF;
    expected := expected || ARRAY['_sync_server_version', '_sync_scopes', '_sync_payload',
                                  '_sync_column_versions'];
    FOREACH col IN ARRAY expected LOOP
      IF NOT EXISTS (SELECT 1 FROM pg_attribute at
                      WHERE at.attrelid = rel AND at.attname = col AND at.attnum > 0
                        AND NOT at.attisdropped) THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', col, 'reason', 'missing_column'));
      END IF;
    END LOOP;

    -- 3. type, then nullability, of the six meta columns in declaration order
    FOR i IN 1 .. 6 LOOP
      SELECT format_type(at.atttypid, at.atttypmod) AS typ, at.attnotnull AS notnull INTO a
        FROM pg_attribute at
       WHERE at.attrelid = rel AND at.attname = meta_names[i] AND at.attnum > 0 AND NOT at.attisdropped;
      IF upper(a.typ) <> meta_types[i] THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', meta_names[i], 'reason', 'type',
                             'expected', meta_types[i], 'actual', a.typ));
      END IF;
      IF a.notnull <> meta_notnull[i] THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', meta_names[i], 'reason', 'nullability',
            'expected', CASE WHEN meta_notnull[i] THEN 'not_null' ELSE 'nullable' END,
            'actual', CASE WHEN a.notnull THEN 'not_null' ELSE 'nullable' END));
      END IF;
    END LOOP;

    -- 4. primary key = (_sync_partition, _sync_row_id), checked for every catalog column
    FOR a IN SELECT at.attname::text AS attname, coalesce(k.ord, 0) AS pkpos
               FROM pg_attribute at
               LEFT JOIN (SELECT u.attnum, u.ord
                            FROM pg_index ix,
                                 unnest(ix.indkey::int2[]) WITH ORDINALITY u(attnum, ord)
                           WHERE ix.indrelid = rel AND ix.indisprimary) k ON k.attnum = at.attnum
              WHERE at.attrelid = rel AND at.attnum > 0 AND NOT at.attisdropped
              ORDER BY at.attnum LOOP
      IF a.pkpos <> (CASE a.attname WHEN '_sync_partition' THEN 1 WHEN '_sync_row_id' THEN 2 ELSE 0 END) THEN
        PERFORM syncular._raise('sync.storage.physical_layout_mismatch', msg,
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', a.attname, 'reason', 'primary_key'));
      END IF;
    END LOOP;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._check_physical_layout(jsonb) IS
'Internal; ensure_schema hook for a same-version open, after the stored-layout check (RFC 0007 §6.2). compiled: '
'the compiled schema (docs/compiled-schema.md). For each table in schema order the relation is resolved exactly '
'as the row statements name it, to_regclass(format(''%I.%I'', appSchema, name)), so mixed-case names work; reads '
'pg_attribute, format_type and pg_index (indisprimary, indkey ordinality). First failure wins, raising '
'sync.storage.physical_layout_mismatch (SQLSTATE 55000, message "a synced table does not match the storage layout '
'the running code reads and writes") with details {phase: "storage_migration", table, reason: "missing_table"} | '
'{phase, table, column, reason: "missing_column"} | {phase, table, column, reason: "type", expected '
'(TEXT/BIGINT/JSONB/BYTEA), actual (format_type text)} | {phase, table, column, reason: "nullability", expected, '
'actual ("not_null"/"nullable")} | {phase, table, column, reason: "primary_key"}. App column types/nullability are not checked; extra non-PK columns are allowed. Also '
'sync.storage.schema_not_registered (55000) when no app schema is known. Writes nothing.';

-- the cause object {code, message, details} of a caught catalogue error, or NULL when the error
-- does not carry this extension's JSON detail
CREATE OR REPLACE FUNCTION syncular._error_cause(message text, detail text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d jsonb;
BEGIN
  IF detail IS NULL OR detail !~ '^\{"code": ' THEN
    RETURN NULL;
  END IF;
  d := detail::jsonb;
  RETURN jsonb_build_object('code', d ->> 'code', 'message', message, 'details', d -> 'details');
END
$$;
COMMENT ON FUNCTION syncular._error_cause(text, text) IS
'Internal. Turns a caught catalogue error (MESSAGE_TEXT, PG_EXCEPTION_DETAIL) into {code, message, details}; '
'NULL when the detail is not {"code": ...} JSON.';

CREATE OR REPLACE FUNCTION syncular.readiness(checkpoints jsonb DEFAULT '[]')
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  running integer;
  stored bigint;
  u record;
  cause jsonb;
  msg text;
  det text;
BEGIN
  -- validate the declarations first: a bad list is a caller error, not a readiness state
  PERFORM count(*) FROM syncular._checkpoint_declarations(readiness.checkpoints);

  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL OR jsonb_typeof(compiled -> 'version') IS DISTINCT FROM 'number' THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'schema_compile', 'schemaVersion', NULL,
      'cause', jsonb_build_object('code', 'sync.storage.schema_not_registered',
                                  'message', 'no compiled schema is registered; call syncular.ensure_schema first',
                                  'details', NULL));
  END IF;
  running := (compiled ->> 'version')::integer;

  -- ensure_schema order (§3.4): the checkpoint barrier, then the marker, then the same-version checks
  SELECT * INTO u FROM syncular._first_undeclared_checkpoint(readiness.checkpoints, running);
  IF u.name IS NOT NULL THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'backfill_checkpoint', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.checkpoint_incomplete',
        'message', 'a declared backfill checkpoint is not activated and this caller did not declare it',
        'details', jsonb_build_object('phase', 'backfill_checkpoint', 'partition', u.partition,
                                      'name', u.name)));
  END IF;

  SELECT m.schema_version INTO stored FROM syncular.sync_schema_meta m WHERE m.id = 1;
  IF stored IS NULL OR stored < running THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.schema_migration_pending',
        'message', 'stored schema version is older than the registered schema; run syncular.ensure_schema',
        'details', jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored,
                                      'runningSchemaVersion', running)));
  ELSIF stored > running THEN
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
      'cause', jsonb_build_object('code', 'sync.storage.schema_newer',
        'message', 'stored schema version is newer than the running schema; refusing to run an older server',
        'details', jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored,
                                      'runningSchemaVersion', running)));
  END IF;

  BEGIN
    PERFORM syncular._check_stored_layout(compiled);
    PERFORM syncular._check_physical_layout(compiled);
  EXCEPTION WHEN object_not_in_prerequisite_state THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    cause := syncular._error_cause(msg, det);
    IF cause IS NULL THEN
      RAISE;
    END IF;
    RETURN jsonb_build_object('ready', false, 'phase', 'storage_migration', 'schemaVersion', running,
                              'cause', cause);
  END;

  RETURN jsonb_build_object('ready', true, 'phase', NULL, 'schemaVersion', running, 'cause', NULL);
END
$$;
COMMENT ON FUNCTION syncular.readiness(jsonb) IS
'RFC 0007 §7 ensureSyncServerReady, read-only. checkpoints: this process''s declarations (JSON array of '
'{partition, name, schemaVersion}). Returns {ready, phase, schemaVersion, cause}: phase null when ready; '
'"schema_compile" when no compiled schema is registered; "backfill_checkpoint" when a checkpoint at the running '
'version, in any partition, is neither activated nor declared (cause code sync.storage.checkpoint_incomplete); '
'"storage_migration" when the stored schema is newer (sync.storage.schema_newer) or older / absent '
'(sync.storage.schema_migration_pending), or the same-version stored-layout (sync.storage.stored_layout_mismatch) '
'or physical check (sync.storage.physical_layout_mismatch) fails. schemaVersion: the registered (running) '
'version; cause: {code, message, details} of the underlying error. Never raises for a not-ready state; raises '
'sync.storage.invalid_checkpoints (22023) for a bad declaration list. Writes nothing. SECURITY DEFINER (serving '
'surface, see 90_grants.sql): it only reads the catalog.';
