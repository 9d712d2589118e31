-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- syncular._raise with an errhint; schema registration errors say what to do;
-- syncular.unregister_schema (src/sql/05_errors.sql, 10_schema.sql, 12_unregister.sql).
CREATE FUNCTION syncular._raise(code text, message text, details jsonb, hint text)
RETURNS void LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_raise';
COMMENT ON FUNCTION syncular._raise(text, text, jsonb, text) IS
'Internal. syncular._raise(code, message, details) with an errhint (NULL = none): what the operator can do '
'about the error. Used by schema registration.';

CREATE FUNCTION syncular._schema_change_hint() RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT 'A registered schema changes only by an append-only bump: raise its version (schemaVersion '
         'or version) and only add tables, retire tables or append nullable columns. To discard the '
         'registration instead (test data), SELECT syncular.unregister_schema(<app schema>, '
         'drop_tables => true) and ensure_schema again.'
$$;
COMMENT ON FUNCTION syncular._schema_change_hint() IS
  'Internal. The errhint text of sync.storage.stored_layout_mismatch and sync.storage.schema_not_append_only raised by ensure_schema: how to change a registered schema (an append-only version bump) or discard it (syncular.unregister_schema).';

CREATE OR REPLACE FUNCTION syncular._verify_stored_layouts(compiled jsonb, stored jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     jsonb;
  st    jsonb;
  c     jsonb;
  s     jsonb;
  n     integer;
  k     text;
  names text[] := '{}';
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    names := names || (t ->> 'name');
    st := stored -> (t ->> 'name');
    IF st IS NULL OR jsonb_typeof(st) <> 'array' THEN
      st := '[]';
    END IF;
    n := greatest(jsonb_array_length(t -> 'columns'), jsonb_array_length(st));
    FOR i IN 0 .. n - 1 LOOP
      c := t -> 'columns' -> i;
      s := st -> i;
      IF NOT syncular._layout_entry_equal(c, s) THEN
        PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
          'stored schema layouts disagree with the configured schema at the same version',
          jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                             'column', coalesce(c ->> 'name', s ->> 'name', '')),
          syncular._schema_change_hint());
      END IF;
    END LOOP;
  END LOOP;
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (names)) THEN
      PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
        'stored schema layouts disagree with the configured schema at the same version',
        jsonb_build_object('phase', 'storage_migration', 'table', k),
        syncular._schema_change_hint());
    END IF;
  END LOOP;
END
$$;
COMMENT ON FUNCTION syncular._verify_stored_layouts(jsonb, jsonb) IS
  'Internal. Same-version check of the stored layouts (jsonb object) against a compiled schema: per configured table in order, positions 0..max(n)-1 must agree in name, type and nullable, then no stored table may be unconfigured. Raises sync.storage.stored_layout_mismatch (SQLSTATE 55000) with details {phase: "storage_migration", table, column} or {phase, table}. barrier-rfc0007.md §6.1.';

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

CREATE FUNCTION syncular.unregister_schema(app_schema text, drop_tables boolean DEFAULT false)
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
           syncular.sync_leases;

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
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
Returns {appSchema, schemaVersion, droppedTables, keptTables, partitions, commits} (partitions and commits discarded).
Errors: sync.storage.schema_not_registered (55000) when nothing is registered; sync.storage.schema_invalid (22023; details {rule: "app_schema", registeredSchema, appSchema}) when app_schema is not the registered schema; both with an errhint. Owner-only (EXECUTE revoked from PUBLIC).$$;

COMMENT ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) IS
$$Registers, verifies or migrates the app's synced tables (data-model-and-storage.md §2, §6, §7, §8; docs/compiled-schema.md).
Arguments: ir = schema IR, typegen (irVersion 1: schemaVersion, tables[{name, primaryKey, columns[{name, type, nullable, crdtType?, encrypted?}], scopes[{pattern, variable, column}], indexes?, references?[{column, parentTable, onDelete}], materialize?}]) or the plain server shape (version, scopes as "prefix:{variable}" or {pattern, column}); checkpoints = JSON array of RFC 0007 backfill-checkpoint declarations (accepted; installed by the barrier code); app_schema = schema holding the synced tables (default: the registered one, else the caller's current_schema()); one app schema per database.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE, then reads the marker: none -> creates every table and index and writes sync_schema_meta and sync_settings ("created"); same version -> verifies the stored layouts, writes nothing ("verified"); older -> append-only bump in the caller's transaction: retired tables dropped, new tables created, nullable columns added, sync_ix_* indexes rebuilt, payloads re-encoded with trailing NULLs (batches of 500), projection backfilled when materialize was turned on ("migrated").
Returns {schemaVersion, action, appSchema, tables[, previousSchemaVersion, created, dropped, altered, rewrittenRows]}.
Errors: sync.storage.schema_invalid (22023; details {table?, column?, rule}), sync.storage.checkpoint_incomplete (55000; {phase: "backfill_checkpoint", partition, name}), sync.storage.schema_newer (55000; {phase: "storage_migration", storedSchemaVersion, runningSchemaVersion}), sync.storage.schema_not_append_only (22023; {phase: "storage_migration", table, column, reason}), sync.storage.stored_layout_mismatch (55000; {phase: "storage_migration", table, column} | {phase, table}), sync.storage.physical_layout_mismatch (55000; {phase: "storage_migration", table, reason, ...}); DDL errors of PostgreSQL pass through. A refused second, different registration (another app_schema, a changed layout at the same version, a non-append-only change, an older version, a table left in the way) carries an errhint with the way out: an append-only version bump, the registered app_schema, or syncular.unregister_schema.$$;

REVOKE EXECUTE ON FUNCTION syncular._raise(text, text, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular._schema_change_hint() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.unregister_schema(text, boolean) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- What each catalog table holds (psql \dt+ syncular.*).  Writers are the engine and the SQL
-- surface; app roles never write them (90_grants.sql).
COMMENT ON TABLE syncular.sync_partitions IS
'One row per partition (tenant): max_commit_seq = the last commit sequence appended, horizon_seq = the pruning horizon (SPEC §4.6: a cursor below it resets). Every push locks its row FOR UPDATE; ensure_schema and unregister_schema take LOCK TABLE IN EXCLUSIVE MODE.';
COMMENT ON TABLE syncular.sync_partition_registry IS
'The log epoch of each partition (SPEC §2.1): a client whose logEpoch differs is told to reset. Written on first use of a partition and by syncular.rotate_log_epoch; last_authenticated_at_ms = the last authenticated round.';
COMMENT ON TABLE syncular.sync_row_scopes IS
'Inverted index over the current synced rows: one row per (partition, table, scope variable, value, row id); bootstrap pages and scope checks read it. Kept in step with the synced tables by the engine.';
COMMENT ON TABLE syncular.sync_commits IS
'The commit log (SPEC §2.1): one row per applied commit, (partition, commit_seq) with the client, clientCommitId, actor and time; writer_version is the RFC 0007 writer fence value (trigger sync_commits_writer_fence). Pruned by syncular.prune.';
COMMENT ON TABLE syncular.sync_changes IS
'The changes of each logged commit (SPEC §2.2), in order (idx): table, row id, op (1 upsert, 2 delete), row version, stored scopes and the full-row payload; incremental pulls serve them. Pruned with their commit.';
COMMENT ON TABLE syncular.sync_change_scopes IS
'Inverted index over the log: which commits changed rows of a (table, scope variable, value), for incremental pulls. Pruned with the log.';
COMMENT ON TABLE syncular.sync_push_results IS
'Idempotency records (SPEC §2.3, §6.3): the outcome of each pushed (client, clientCommitId), applied or rejected, replayed unchanged to a retry. Kept by default; syncular.prune drops them only when asked (pushResultsOlderThanMs).';
COMMENT ON TABLE syncular.sync_reactions IS
'Durable reactions (SPEC §6.9) planned by the reaction planner in the commit transaction and drained by claim_reactions / complete_reaction / fail_reaction: status pending, leased, completed or dead-letter, with leases, attempts and backoff. View: syncular.reactions.';
COMMENT ON TABLE syncular.sync_clients IS
'Client records (SPEC §4.5): per (partition, client id) the bound actor, wire version, last cursor, subscriptions and time of the last round. A client id bound to another actor is refused. View: syncular.clients.';
COMMENT ON TABLE syncular.sync_blob_refs IS
'The blob ids referenced by blob_ref values of current rows (SPEC §5.9.4), per (partition, table, row id). Indexed only: this server has no blob store.';
COMMENT ON TABLE syncular.sync_tombstones IS
'Tombstones of deleted rows (delete precedence): the commit that deleted (partition, table, row id). An unversioned wire-3 upsert onto a tombstoned row answers sync.row_deleted; an insert clears it. Pruned with the log.';
COMMENT ON TABLE syncular.sync_backfill_checkpoints IS
'RFC 0007 backfill checkpoints per (partition, name): the schema version they gate, state declared / backfilling / activated, owner epoch, watermark and observed rows. A pending checkpoint refuses rounds with sync.schema_not_ready. API: declare/claim/advance/activate_checkpoint.';
COMMENT ON TABLE syncular.sync_writer_fence IS
'RFC 0007 writer fence: the lowest writer version allowed to append commits to a partition (trigger sync_commits_writer_fence). Raised by checkpoint declarations and schema bumps.';
COMMENT ON TABLE syncular.sync_schema_meta IS
'The stored schema marker (singleton id 1): the registered schema version and the stored column layouts of every synced table, checked by ensure_schema and readiness (barrier-rfc0007 storage checks).';
COMMENT ON TABLE syncular.sync_settings IS
'The registration (singleton id 1): the app schema holding the synced tables, the compiled schema the C engine reads (docs/compiled-schema.md), and the hooks: scope resolver, commit validator, reaction planner. Written by ensure_schema and the set_* functions; emptied by unregister_schema.';
COMMENT ON TABLE syncular.sync_row_validators IS
'The row validator of each synced table (docs/hooks.md), registered with syncular.set_row_validator.';

-- ---------------------------------------------------------------------------------------------
-- COMMENTs of the public surface cite public SPEC sections.
COMMENT ON FUNCTION syncular.error_catalog() IS
'The Syncular error catalogue as this extension uses it (SPEC §10, plus the host storage codes sync.storage.*): one row per code '
'with category, retryable, recommendedAction, HTTP status (NULL for host sync.storage.* codes, which never travel '
'on the wire) and the SQLSTATE used when the code is raised. Never raises.';
COMMENT ON FUNCTION syncular.ensure_schema(jsonb, jsonb, text) IS
$$Registers, verifies or migrates the app's synced tables (SPEC §2.4 schema IR, §7.4 schema bumps; docs/compiled-schema.md).
Arguments: ir = schema IR, typegen (irVersion 1: schemaVersion, tables[{name, primaryKey, columns[{name, type, nullable, crdtType?, encrypted?}], scopes[{pattern, variable, column}], indexes?, references?[{column, parentTable, onDelete}], materialize?}]) or the plain server shape (version, scopes as "prefix:{variable}" or {pattern, column}); checkpoints = JSON array of RFC 0007 backfill-checkpoint declarations (accepted; installed by the barrier code); app_schema = schema holding the synced tables (default: the registered one, else the caller's current_schema()); one app schema per database.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE, then reads the marker: none -> creates every table and index and writes sync_schema_meta and sync_settings ("created"); same version -> verifies the stored layouts, writes nothing ("verified"); older -> append-only bump in the caller's transaction: retired tables dropped, new tables created, nullable columns added, sync_ix_* indexes rebuilt, payloads re-encoded with trailing NULLs (batches of 500), projection backfilled when materialize was turned on ("migrated").
Returns {schemaVersion, action, appSchema, tables[, previousSchemaVersion, created, dropped, altered, rewrittenRows]}.
Errors: sync.storage.schema_invalid (22023; details {table?, column?, rule}), sync.storage.checkpoint_incomplete (55000; {phase: "backfill_checkpoint", partition, name}), sync.storage.schema_newer (55000; {phase: "storage_migration", storedSchemaVersion, runningSchemaVersion}), sync.storage.schema_not_append_only (22023; {phase: "storage_migration", table, column, reason}), sync.storage.stored_layout_mismatch (55000; {phase: "storage_migration", table, column} | {phase, table}), sync.storage.physical_layout_mismatch (55000; {phase: "storage_migration", table, reason, ...}); DDL errors of PostgreSQL pass through. A refused second, different registration (another app_schema, a changed layout at the same version, a non-append-only change, an older version, a table left in the way) carries an errhint with the way out: an append-only version bump, the registered app_schema, or syncular.unregister_schema.$$;
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (SPEC §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
COMMENT ON FUNCTION syncular.set_row_validator(text, regprocedure) IS
$$Registers the §6.7 row validator of one synced table (SPEC §6.7; docs/hooks.md), replacing any previous one, or unregisters it when fn is NULL.
tbl must name a table of the compiled schema (syncular.sync_settings.compiled); fn must be a plain, non-STRICT function (op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it in the push transaction, before the row write, with op 'upsert' or 'delete', the row that will persist (NULL for a delete) and the stored row (NULL for an insert), both as syncular.decode_row JSON; it rejects with RAISE ... USING ERRCODE = 'SY001' (see syncular._validator_rejection).
Stored in syncular.sync_row_validators; rewrites the sync_settings row so that cached hooks reload. Owner-only.
Errors: sync.unknown_table (SQLSTATE 42P01; details {table}) when tbl is NULL, no schema is registered or the table is not in it (also when unregistering); sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a window, set-returning or variadic function.$$;
COMMENT ON FUNCTION syncular.set_commit_validator(regprocedure) IS
$$Registers the §6.8 whole-commit validator (SPEC §6.8; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it once per new commit, after every operation and the reference pass, before the append, in the push transaction; operations is the ordered evidence [{opIndex, op, table, rowId, row, stored, storedServerVersion, nextServerVersion}] (docs/hooks.md). It rejects with RAISE ... USING ERRCODE = 'SY001', DETAIL = '{"code": ..., "opIndex": n}' (see syncular._validator_rejection).
Stored in syncular.sync_settings.commit_validator (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;
COMMENT ON FUNCTION syncular.set_reaction_planner(regprocedure) IS
$$Registers the §6.9 reaction planner (SPEC §6.9; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb (argument names are free), called like the commit validator but only for a new commit that passed every validator; it returns a JSON array of reaction records [{key, type, version, payload, maxAttempts?}] (or NULL / [] for none), which the engine hands to syncular._enqueue_reactions in the same transaction. Any error it raises, or an invalid record, aborts the commit as a server failure (sync.internal_error, nothing persisted).
Stored in syncular.sync_settings.reaction_planner (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, delivered at commit. '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response. Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';
COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'POST /sync as one row (SPEC §1.1): runs syncular.handle in a subtransaction and returns exactly what the '
'HTTP endpoint answers. Success: 200, application/vnd.syncular.sync.v2, the SSP2 response. A content_type whose '
'part before '';'' is not application/vnd.syncular.sync.v2: 415 with a sync.invalid_request JSON body. A catalogue '
'error raised by the round: its catalogue HTTP status (SPEC §10) and the JSON body {code, category, retryable, '
'recommendedAction, message, details?}, nothing written. Any other error: 500 sync.internal_error with a fixed '
'message (the database text goes to the server log only). Query cancellation is re-raised. SECURITY DEFINER like '
'syncular.handle.';
COMMENT ON FUNCTION syncular.prune(text, jsonb) IS
$$Prunes one partition's commit log (SPEC §4.6). Nothing prunes automatically: schedule it (hourly to daily).
retention (JSON object, all keys optional, non-negative integers): activeWindowMs (default 1209600000 = 14 d; clients updated within it hold the floor at their minimum cursor, a cursor of -1 holds everything), forceAgeMs (default 2592000000 = 30 d; commits created before now - forceAgeMs may be pruned regardless of cursors), minRetainedCommits (default 1000; the newest commits always kept), pushResultsOlderThanMs (absent by default = never; when set, also deletes the sync_push_results of commits still in the log created before now - value, before the log is cut), nowMs (clock override, for tests and replays).
target = min(max(floor, forcedSeq), maxSeq - minRetainedCommits); horizon = max(old horizon, target, 0); deletes sync_commits, sync_changes, sync_change_scopes and sync_tombstones with commit_seq <= horizon. With no active client the floor is maxSeq. Locks the sync_partitions row, then the registry row (FOR UPDATE). Safe to repeat.
Returns {previousHorizonSeq, horizonSeq, removedCommits[, removedPushResults]}.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}); sync.storage.invalid_limit (22023; details {key} for an unknown key, {key, value} for a bad value, {value} when retention is not an object).$$;
COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
$$Rotates a partition's log epoch, e.g. after a backup restore and before traffic resumes (SPEC §2.1, §4.6).
Under the partition lock (sync_partitions row, then registry row, FOR UPDATE): sets a new random epoch (gen_random_uuid()::text), epoch_required = true, and deletes every sync_clients row of the partition; clients then reset and re-bootstrap. Returns the new epoch.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) for a partition without a registry row.$$;
COMMENT ON VIEW syncular.partitions IS
  'Read-only. One row per known partition (counter row and/or registry row): max_commit_seq, horizon_seq (0 when the partition never pushed), log_epoch and last_authenticated_at_ms (NULL when unregistered), clients = number of client records. SPEC §4.6.';
COMMENT ON VIEW syncular.clients IS
  'Read-only. The client records (SPEC §4.5) plus behind_horizon: true when 0 <= cursor < the partition''s horizon_seq (its next pull resets with sync.cursor_expired).';
COMMENT ON VIEW syncular.commits IS
  'Read-only. The commit log (SPEC §2.1; table sync_commits) with changes = number of sync_changes rows and tables = the distinct tables they touch.';
COMMENT ON FUNCTION syncular.claim_reactions(text, text, integer, bigint, bigint) IS
$$Claims due reactions of a partition for a worker (SPEC §6.9, delivery): in one statement, a FOR UPDATE SKIP LOCKED CTE picks up to "limit" rows that are pending with available_at_ms <= now, or leased with lease_expires_at_ms <= now (an expired lease), in (available_at_ms, created_at_ms, idempotency_key) order, skipping rows another transaction holds; each becomes status leased, lease_owner = owner, lease_expires_at_ms = now + lease_ms, attempts + 1 (every claim counts as an attempt).
Arguments: owner = the worker's lease identity (non-empty); limit 1..1000 (default 10); lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock).
Returns the claimed rows (sync_reactions columns, after the update) in claim order. Concurrent claimers never receive the same row while its lease is live. SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for limit or lease_ms; sync.storage.invalid_reaction (22023; details {argument: "owner"}) for a NULL or empty owner.$$;
COMMENT ON FUNCTION syncular.renew_reaction_lease(text, text, text, bigint, bigint) IS
$$Extends a worker's lease (SPEC §6.9): when the row is leased and lease_owner = owner, sets lease_expires_at_ms = now + lease_ms and returns true; otherwise (another owner reclaimed it, it was completed, failed or dead-lettered, or it does not exist) changes nothing and returns false. A lease that expired but was not reclaimed yet is still the owner's and can be renewed.
Arguments: lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for lease_ms.$$;
COMMENT ON FUNCTION syncular.complete_reaction(text, text, text, bigint) IS
$$Marks a delivered reaction completed (SPEC §6.9): only when the row is leased and lease_owner = owner (the current lease holder; an expired lease not yet reclaimed still counts). Sets status completed, completed_at_ms = now, clears lease_owner and lease_expires_at_ms, returns true; otherwise changes nothing and returns false (a stale owner after a reclaim, a row already completed, pending or dead-lettered, an unknown key).
now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role. Raises nothing of its own.$$;
COMMENT ON FUNCTION syncular.fail_reaction(text, text, text, jsonb, boolean, bigint, bigint, bigint) IS
$$Records a failed delivery (SPEC §6.9): only when the row is leased and lease_owner = owner. Stores failure in last_failure (as given, NULL included) and clears the lease; then, when permanent is true or attempts >= max_attempts, status dead-letter with available_at_ms = now (the dead-letter time, which prune_reactions ages); otherwise status pending with available_at_ms = now + min(base_ms * 2^(attempts - 1), cap_ms), where attempts counts the claims so far (1 after the first claim: base_ms, then 2*base_ms, 4*base_ms, ... up to cap_ms).
Arguments: failure = any JSON the worker wants to keep (e.g. {"message": ...}); permanent (default false); base_ms 0..2^53-1 (default 1,000); cap_ms 0..2^53-1 (default 300,000); now_ms = epoch ms (NULL = wall clock).
Returns the new status ('pending' or 'dead-letter'), or NULL when the caller is not the current lease owner (nothing changes). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for base_ms or cap_ms.$$;
COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text, text, bigint) IS
$$Operator action (SPEC §6.9, dead letters): a dead-letter row becomes pending again with attempts 0 and available_at_ms = now (claimable at once); last_failure is kept until the next failure. Returns true when a dead-letter row was moved, false otherwise (unknown key, or a row in another status: nothing changes).
now_ms = epoch ms (NULL = wall clock). Owner-only. Raises nothing of its own.$$;
COMMENT ON FUNCTION syncular.prune_reactions(text, bigint, bigint, integer, bigint) IS
$$Operator maintenance (SPEC §6.9, pruning): deletes, in one bounded pass, completed rows with completed_at_ms < now - completed_older_than_ms (oldest first), then, with the rest of the budget, dead-letter rows dead-lettered before now - dead_letter_older_than_ms (available_at_ms, oldest first); at most max_rows in total. Rows locked by another transaction are skipped (FOR UPDATE SKIP LOCKED); pending and leased rows are never touched. Reactions are independent of the commit log and survive its pruning.
Arguments: completed_older_than_ms 0..2^53-1 (default 30 days = 2,592,000,000); dead_letter_older_than_ms 0..2^53-1 (default 90 days = 7,776,000,000); max_rows 1..100,000 (default 1,000); now_ms = epoch ms (NULL = wall clock).
Returns the number of rows deleted; call again while it returns max_rows. Owner-only.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}).$$;
COMMENT ON VIEW syncular.reactions IS
  'Read-only. The durable reactions (SPEC §6.9; sync_reactions) with key = the planner''s record key (element 3 of the idempotency key) and due = claimable now by the wall clock (pending and available, or leased with an expired lease). Times in epoch ms; for a dead-letter row available_at_ms is the time it was dead-lettered. Owner-only until granted.';
COMMENT ON FUNCTION syncular.syncular_writer_fence() IS
'Trigger function of sync_commits_writer_fence (BEFORE INSERT on syncular.sync_commits; RFC 0007 writer fence): '
'refuses a commit whose writer_version is NULL or below '
'sync_writer_fence.required_writer_version for its partition, raising sync.storage.writer_fence_rejected '
'(SQLSTATE P0001, message = the code, DETAIL {"code": "sync.storage.writer_fence_rejected", "details": '
'{"partition", "writerVersion", "requiredWriterVersion"}}, the catalogue form). Partitions without a fence row are '
'not fenced. Through the engine: raised as is by syncular.handle / syncular.push / CALL syncular.sync; '
'syncular.handle_http answers 500 sync.internal_error with a fixed message.';

-- COMMENTs merged from main (scope read rule, debug_render escapes).
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (SPEC §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;
COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';

-- Realtime (SPEC §8): the functions a gateway calls for hello, fanout, acks and presence.
-- syncular install script, part 55: realtime (src/realtime.c, src/fanout.c; docs/realtime.md).
-- The extension side of SPEC §8: a stateless gateway holds the WebSockets and calls these.

CREATE FUNCTION syncular.realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_connect';

CREATE FUNCTION syncular.realtime_fanout(partition text, commit_seq bigint, connections jsonb)
RETURNS TABLE(conn bigint, action text, reason text, body bytea, next_cursor bigint)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_fanout';

CREATE FUNCTION syncular.realtime_ack(partition text, actor_id text, client_id text, cursor bigint,
                                      log_epoch text)
RETURNS boolean LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_ack';

CREATE FUNCTION syncular.presence_authorize(partition text, actor_id text, client_id text,
                                            scope_keys text[])
RETURNS text[] LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_presence_authorize';

COMMENT ON FUNCTION syncular.realtime_connect(text, text, text) IS
'Realtime connect (SPEC §8.1, §8.7; docs/realtime.md §1): the hello data and the registration of one WebSocket. '
'Call at upgrade and again when a socket round with a PULL_HEADER completes. partition: the authenticated tenant; '
'actor_id: the authenticated actor; client_id: the socket''s clientId. Loads the subscriptions the client''s most recent '
'successful pull persisted, resolves the grant once (the scope resolver) and computes each subscription''s effective '
'scopes as a pull does (revoked ones are left out). Returns {actorId, clientId, cursor (the client record''s cursor, -1 '
'without a record), latestCursor (the partition''s max commit_seq), requiresSync (no record, nothing persisted, a '
'persisted subscription revoked now, or cursor < latestCursor), logEpoch, schemaVersion, wireVersion (the record''s, 3 '
'without one), scopeKeys (sorted distinct "prefix:value" keys: the presence grant, §8.6.3), registration (opaque: pass '
'it back to realtime_fanout)}. Writes nothing but the registry row of a partition never seen (as a round does). '
'Errors: sync.invalid_request (22023: NULL or empty argument), sync.invalid_client_id (22023: reserved '
'["remote-command", prefix or bound to another actor), sync.schema_not_ready (55000: no schema registered), '
'sync.invalid_subscription (22023: the resolver returned an undeclared variable). A failing resolver revokes every '
'subscription (fail closed) and does not raise. SECURITY DEFINER like syncular.handle.';

COMMENT ON FUNCTION syncular.realtime_fanout(text, bigint, jsonb) IS
'Realtime fanout (SPEC §8.2, §8.3; docs/realtime.md §2): ONE call per commit notification per gateway. partition: '
'the notified partition; commit_seq: the notified commitSeq; connections: JSON array of {conn: integer id of the '
'socket (echoed), cursor: the socket''s delivered cursor, registration: from realtime_connect}. Reads the partition '
'state, the serve gate and the commit window once in the statement''s snapshot and matches the window against every '
'registration in memory. Returns one row per element, in input order: action ''delta'' (body = a complete SSP2 '
'response in the registration''s wire version: RESP_HEADER, then per subscription with matching changes SUB_START / '
'COMMIT(s) / SUB_END with nextCursor = next_cursor, END; covers (cursor, min(commit_seq, max commit_seq)] '
'cursor-contiguously), ''wake'' with reason ''reset-required'' (log epoch rotated, schema version changed, schema '
'refusal of the serve gate, cursor behind the pruning horizon), ''catchup-required'' (cursor < 0, window longer than '
'syncular.realtime_max_window_commits commits or past the syncular.realtime_max_window_changes changes read, a '
'pending backfill checkpoint, or the live grant - the scope resolver, once per (actor, client) per call, or reused '
'within syncular.realtime_grant_cache_ms - no longer gives the registered effective scopes) or '
'''delta-too-large'' (over syncular.realtime_max_delta_bytes); next_cursor = the input cursor for wakes; ''none'' when '
'nothing in the window matches (next_cursor = window end) or the notification is not new (next_cursor = cursor). '
'Errors: sync.invalid_request (22023: NULL argument, empty partition, connections not an array, a malformed element '
'or registration, a registration of another partition; details {index, field}), sync.schema_not_ready (55000: no '
'schema registered). The registration is trusted input: grant EXECUTE only to the gateway role. SECURITY DEFINER '
'like syncular.handle.';

COMMENT ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) IS
'Realtime ack (SPEC §8.2; docs/realtime.md §3): {"type":"ack","cursor":n} of a socket. partition, actor_id, '
'client_id: the socket''s; cursor: n (a commitSeq); log_epoch: the logEpoch of the socket''s registration. One UPDATE '
'of the existing client record: cursor = GREATEST(cursor, n) and updated_at_ms = GREATEST(updated_at_ms, now in epoch '
'ms), only when the record belongs to actor_id, log_epoch is the partition''s current epoch and n is not beyond the '
'partition''s max commit_seq; subscriptions, actor and wire version are never written and a missing record is never '
'created. Returns true when the record was updated, false otherwise. Errors: sync.invalid_request (22023: NULL or '
'empty argument, cursor < 0 or > 2^53-1). SECURITY DEFINER like syncular.handle.';

COMMENT ON FUNCTION syncular.presence_authorize(text, text, text, text[]) IS
'Presence authorization (SPEC §8.6.3; docs/realtime.md §4): the subset of scope_keys ("prefix:value", input order, '
'NULLs and duplicates dropped) the client is registered on under its current grant, i.e. in the scopeKeys '
'realtime_connect would return now. Arguments and errors as realtime_connect, plus sync.invalid_request (22023) for '
'a NULL or multi-dimensional scope_keys. SECURITY DEFINER like syncular.handle.';

-- Cluster-wide calls through the syncular_router extension (src/sql/80_cluster.sql).
-- syncular install script, part 80: the shard side of cluster-wide calls.
--
-- A sharded deployment (docs/scaling.md: the syncular_router extension and PL/Proxy) runs
-- schema registration and hook registration on every shard.  PL/Proxy runs each remote call in
-- its own transaction, with no two-phase commit, so "fail as a whole" is built in two rounds:
-- first every shard checks the call (runs it and rolls it back), then, only when every shard
-- accepted, every shard applies it.  cluster_call is the one shard entry point for both rounds.

CREATE FUNCTION syncular._cluster_dispatch(call text, args jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF args IS NULL OR jsonb_typeof(args) <> 'object' THEN
    PERFORM syncular._raise('sync.invalid_request', 'cluster call arguments must be a JSON object',
                            jsonb_build_object('call', call));
  END IF;
  CASE call
  WHEN 'ensure_schema' THEN
    -- no caller schema crosses the router: the app schema is the registered one, the one given,
    -- or public (10_schema.sql: app_schema, else the registered schema, else the caller's).
    -- A checkpoint declaration the router tagged with the database of its partition's shard is
    -- installed on that shard only: elsewhere it would never be activated and would close the
    -- serve gate of every partition there.
    RETURN syncular._ensure_schema(args -> 'ir',
             CASE WHEN jsonb_typeof(args -> 'checkpoints') = 'array'
                  THEN (SELECT coalesce(jsonb_agg(d - 'shardDatabase' ORDER BY i), '[]'::jsonb)
                          FROM jsonb_array_elements(args -> 'checkpoints') WITH ORDINALITY x(d, i)
                         WHERE jsonb_typeof(d) <> 'object' OR NOT d ? 'shardDatabase'
                            OR d ->> 'shardDatabase' = current_database())
                  ELSE coalesce(args -> 'checkpoints', '[]'::jsonb) END,
             syncular._jstr(args, 'appSchema'), 'public');
  WHEN 'set_scope_resolver' THEN
    PERFORM syncular.set_scope_resolver(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_row_validator' THEN
    PERFORM syncular.set_row_validator(syncular._jstr(args, 'table'), syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_commit_validator' THEN
    PERFORM syncular.set_commit_validator(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_reaction_planner' THEN
    PERFORM syncular.set_reaction_planner(syncular._jstr(args, 'fn')::regprocedure);
  ELSE
    PERFORM syncular._raise('sync.invalid_request', 'unknown cluster call', jsonb_build_object('call', call));
  END CASE;
  RETURN jsonb_build_object('call', call);
END
$$;
COMMENT ON FUNCTION syncular._cluster_dispatch(text, jsonb) IS
'Internal. Runs one cluster-wide call by name (ensure_schema, set_scope_resolver, set_row_validator, '
'set_commit_validator, set_reaction_planner) with its arguments from a JSON object. See syncular.cluster_call.';

CREATE FUNCTION syncular.cluster_call(call text, args jsonb, apply boolean DEFAULT true) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  result jsonb;
BEGIN
  IF apply THEN
    RETURN syncular._cluster_dispatch(call, args);
  END IF;
  -- the check round: run the call in a subtransaction and roll it back (its locks go with it);
  -- an error of the call itself propagates unchanged
  BEGIN
    result := syncular._cluster_dispatch(call, args);
    RAISE EXCEPTION 'cluster call checked' USING ERRCODE = 'SYCHK';
  EXCEPTION WHEN SQLSTATE 'SYCHK' THEN
    NULL;
  END;
  RETURN result;
END
$$;
COMMENT ON FUNCTION syncular.cluster_call(text, jsonb, boolean) IS
'One shard''s part of a cluster-wide call made through the syncular_router extension (docs/scaling.md). '
'call: "ensure_schema" (args {ir, checkpoints?, appSchema?}; returns ensure_schema''s result; the app schema is '
'appSchema, else the registered one, else public; a checkpoint declaration carrying "shardDatabase" is installed only '
'when that is current_database(), the member removed), "set_scope_resolver" / "set_commit_validator" / '
'"set_reaction_planner" (args {fn}: a schema-qualified regprocedure text, or null to unregister), '
'"set_row_validator" (args {table, fn}); the setters return {"call": call}. apply false: the check round, '
'which runs the call and rolls it back, returning what it would return and raising what it would raise '
'(writes nothing; an ensure_schema bump does its DDL and row rewrites, then undoes them). Raises what the '
'named function raises, and sync.invalid_request (22023) for an unknown call or args that are not an object. '
'Owner-only, like the calls it runs. RFC 0007 §3.4 (ensureSchema), hooks.md.';

-- handle documents the request limits and the hot-standby refusal (comment only).
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, delivered at commit. '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response; a commit whose row is over syncular.max_row_bytes or whose rowId, scope value or '
'index key is over its maximum is a durable rejection (sync.invalid_request, reason row_too_large / key_too_large), '
'and pull sections stop at syncular.max_response_bytes with a resume token or their last delivered commit '
'(docs/limits.md). Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments; a request over syncular.max_request_bytes, checked before '
'decoding, details {maxRequestBytes, requestBytes}; more than syncular.max_subscriptions_per_request '
'subscriptions, details {maxSubscriptions, subscriptions}; a partition, clientId or clientCommitId over 256 bytes, '
'details {field, maxBytes, bytes}), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered; a round with pushes on a hot standby, details {"hotStandby": true}, where pull-only rounds are '
'served and write nothing), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';

-- The gateway's SQL authentication (src/sql/22_authenticator.sql).
-- syncular install script, part 22: host authentication in SQL (SPEC §1.1: "the host's
-- authenticate(request) runs on every HTTP request and WebSocket upgrade; its result supplies
-- actorId and the partition").  syncular-gateway uses it when it is not given a JWT key: the
-- registered function sees the request's method, path, headers and query and answers who is
-- calling, inside the same transaction as the round it authorizes.

ALTER TABLE syncular.sync_settings ADD COLUMN authenticator REGPROCEDURE;

CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('authenticator', fn,
      ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[], 'jsonb'::regtype, true,
      '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
COMMENT ON FUNCTION syncular.set_authenticator(regprocedure) IS
$$Registers the request authenticator (SPEC §1.1 host authentication), or unregisters it when fn is NULL.
fn must be a plain function (method text, path text, headers jsonb, query jsonb) RETURNS jsonb. It is called with the HTTP method ('POST' for /sync, 'GET' for the realtime upgrade), the request path, the request headers as a JSON object (lower-case names, string values) and the query arguments as a JSON object (string values), and answers {"actorId": text, "partition": text} for an authenticated caller or NULL to refuse (HTTP 401 sync.auth_required). It runs as the extension owner inside the round's transaction (SECURITY DEFINER callers): write it with a fixed search_path and qualified names.
Stored in syncular.sync_settings.authenticator (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;

CREATE FUNCTION syncular.authenticate(method text, path text, headers jsonb, query jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  fn regprocedure;
  answer jsonb;
BEGIN
  SELECT s.authenticator INTO fn FROM syncular.sync_settings s WHERE s.id = 1;
  IF fn IS NULL THEN
    RETURN NULL;                -- nothing registered: nobody is authenticated
  END IF;
  -- fn::oid::regproc renders the qualified name; the argument types pick this overload
  EXECUTE format('SELECT %s($1, $2, $3, $4)', fn::oid::regproc)
    INTO answer USING method, path, coalesce(headers, '{}'), coalesce(query, '{}');
  IF answer IS NULL OR jsonb_typeof(answer) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(answer) IS DISTINCT FROM 'object'
     OR jsonb_typeof(answer -> 'actorId') IS DISTINCT FROM 'string' OR answer ->> 'actorId' = ''
     OR jsonb_typeof(answer -> 'partition') IS DISTINCT FROM 'string' OR answer ->> 'partition' = '' THEN
    PERFORM syncular._raise('sync.internal_error',
      'the authenticator must answer {"actorId": text, "partition": text} or NULL',
      jsonb_build_object('authenticator', fn::text));
  END IF;
  RETURN jsonb_build_object('actorId', answer ->> 'actorId', 'partition', answer ->> 'partition');
END
$$;
COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered with syncular.set_authenticator for one request (SPEC §1.1). method, path: '
'the HTTP request line; headers, query: JSON objects of strings (NULL means {}). Returns {"actorId", "partition"} '
'(only those two keys) or NULL when the authenticator refuses or none is registered. Errors: sync.internal_error '
'(XX000) when the authenticator answers anything else than NULL or an object with non-empty string actorId and '
'partition; whatever the authenticator raises. syncular-gateway calls it once at each realtime WebSocket '
'upgrade (SPEC §8.1). SECURITY DEFINER: the authenticator runs as the extension owner.';

CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb,
                                                   query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  who jsonb;
  msg text;
  err_code text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    err_code := 'sync.internal_error';
    msg := 'internal server error';
  END;
  IF err_code IS NULL AND who IS NULL THEN
    err_code := 'sync.auth_required';
    msg := 'authentication required';
  END IF;
  IF err_code IS NOT NULL THEN
    RETURN QUERY
      SELECT c.http_status, 'application/json'::text,
             convert_to(json_build_object('code', c.code, 'category', c.category, 'retryable', c.retryable,
                                          'recommendedAction', c.recommended_action, 'message', msg)::text,
                        'UTF8')
        FROM syncular.error_catalog() c WHERE c.code = err_code;
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular.handle_http(request, who ->> 'partition', who ->> 'actorId',
                              request_content_type) h;
END
$$;
COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication (SPEC §1.1) in one transaction: runs syncular.authenticate(method, path, '
'headers, query), then syncular.handle_http(request, partition, actorId, request_content_type) with its answer. Returns '
'what the HTTP endpoint answers: NULL from the authenticator (or none registered) gives 401 with a '
'sync.auth_required JSON body; an error raised by the authenticator gives 500 sync.internal_error with a fixed '
'message (the text goes to the server log); otherwise exactly what syncular.handle_http returns. Query '
'cancellation is re-raised. SECURITY DEFINER like syncular.handle_http; used by syncular-gateway.';

-- ---------------------------------------------------------------------------------------------
-- CRDT columns (SPEC §5.10): the merger registry, syncular.crdt_merge, and ensure_schema's
-- crdtType rule (yjs-doc or a registered type).  Same text as src/sql/26_crdt.sql and
-- syncular._compile_schema in src/sql/10_schema.sql.

CREATE TABLE syncular.sync_crdt_mergers (
  crdt_type TEXT PRIMARY KEY CHECK (crdt_type <> ''),
  fn        REGPROCEDURE NOT NULL
);
COMMENT ON TABLE syncular.sync_crdt_mergers IS
  'CRDT merger registry (SPEC §5.10.2): crdtType -> fn(stored bytea, incoming bytea) RETURNS bytea. Written by syncular.set_crdt_merger; read by every push that merges a crdt column.';
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_crdt_mergers', '');
REVOKE ALL ON syncular.sync_crdt_mergers FROM PUBLIC;

CREATE FUNCTION syncular._crdt_type_known(crdt_type text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT crdt_type = 'yjs-doc'
      OR EXISTS (SELECT 1 FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = _crdt_type_known.crdt_type)
$$;
COMMENT ON FUNCTION syncular._crdt_type_known(text) IS
  'Internal. True when crdt_type has a merger: the built-in yjs-doc or a type registered in syncular.sync_crdt_mergers (SPEC §5.10.1: ensure_schema refuses any other). NULL for NULL; raises nothing.';

CREATE FUNCTION syncular.set_crdt_merger(crdt_type text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF crdt_type IS NULL OR crdt_type = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'crdt_type must be a non-empty string',
                            jsonb_build_object('crdtType', crdt_type));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = set_crdt_merger.crdt_type;
  ELSE
    PERFORM syncular._check_hook_signature('crdt_merger', fn,
      ARRAY['bytea', 'bytea']::regtype[], 'bytea'::regtype, false,
      '(stored bytea, incoming bytea) RETURNS bytea, not STRICT');
    INSERT INTO syncular.sync_crdt_mergers AS m (crdt_type, fn) VALUES (set_crdt_merger.crdt_type, fn)
      ON CONFLICT ON CONSTRAINT sync_crdt_mergers_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
END
$$;
COMMENT ON FUNCTION syncular.set_crdt_merger(text, regprocedure) IS
$$Registers the merger of one crdtType (SPEC §5.10.2), replacing any previous one, or unregisters it when fn is NULL.
fn must be a plain, non-STRICT function (stored bytea, incoming bytea) RETURNS bytea (argument names are free); stored is NULL for a new row or a NULL column. It must be commutative, associative and idempotent over the values it merges. Every applied upsert that presents the column stores, logs and serves fn(stored, incoming) (§5.10.3), called in the push transaction inside an internal subtransaction.
yjs-doc needs no registration (the built-in C merger); registering yjs-doc replaces the built-in, unregistering it restores it. ensure_schema refuses a crdt column whose crdtType is neither yjs-doc nor registered: register before ensure_schema. Unregistering a type the schema still uses is allowed; a push that presents such a column is then rejected with sync.crdt_merge_failed ("no CRDT merger registered"), as is a registration whose function was dropped.
At run time a merger that raises (the text goes to the server log) or returns NULL rejects the commit with sync.crdt_merge_failed ("CRDT merger failed"); serialization failures, resource errors, cancels and internal errors are re-raised.
Stored in syncular.sync_crdt_mergers. Owner-only.
Errors: sync.invalid_request (SQLSTATE 22023; details {crdtType}) for a NULL or empty crdt_type; sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a set-returning or variadic function.$$;

CREATE FUNCTION syncular.crdt_merge(crdt_type text, stored bytea, incoming bytea) RETURNS bytea
LANGUAGE c SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_crdt_merge';
COMMENT ON FUNCTION syncular.crdt_merge(text, bytea, bytea) IS
$$The merge a push applies to a crdt column (SPEC §5.10.2, §5.10.3): merge(stored, incoming) with the merger registered for crdt_type, else the built-in yjs-doc merger for 'yjs-doc'. stored NULL = no state yet.
yjs-doc: stored and incoming are Yjs updates (format v1; a document state is an update; empty bytes = the empty update); the result is one update equivalent to applying both: the structs of both unioned per client in clock order (a range present in both written once, a partly covered struct sliced, gaps kept as Skip structs) and the delete sets unioned. The result is canonical, so merge(a, b) = merge(b, a) and merge(m, m) = m byte for byte, and associative in document state. Bounds: at most 1048576 structs and 1048576 delete ranges over both inputs, `any` values nested at most 64 deep, JSON at most 512 deep; strings must be UTF-8, JSON contents valid JSON, clocks below 2^53.
Errors: sync.crdt_merge_failed (SQLSTATE XX000; details {crdtType, reason}) with message "no CRDT merger registered" (unknown type, or its registered function was dropped) or "CRDT merger failed" (a malformed update, e.g. reason "malformed Yjs update: truncated integer at byte 9", or a merger that raised or returned NULL); sync.invalid_request (SQLSTATE 22023) when crdt_type or incoming is NULL. Owner-only.$$;
REVOKE EXECUTE ON FUNCTION syncular._crdt_type_known(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.set_crdt_merger(text, regprocedure) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.crdt_merge(text, bytea, bytea) FROM PUBLIC;

CREATE OR REPLACE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_version     jsonb;
  v_tables      jsonb;
  t             jsonb;
  tname         text;
  tnames        text[] := '{}';
  c             jsonb;
  cname         text;
  ctype         text;
  cnull         boolean;
  cenc          boolean;
  ccrdt         text;
  cols          jsonb;
  colnames      text[];
  pk            text;
  pk_idx        integer;
  s             jsonb;
  pattern       text;
  m             text[];
  svar          text;
  scol          text;
  sidx          integer;
  scopes        jsonb;
  tvars         text[];
  tscols        text[];
  var_cols      jsonb := '{}';       -- variable -> column, across the whole schema
  ix            jsonb;
  ixname        text;
  ixcols        jsonb;
  ixcol         jsonb;
  indexes       jsonb;
  ixnames       text[] := '{}';      -- declared index names, across the whole schema
  mat           boolean;
  compiled_tbls jsonb := '[]';
  raw_refs      jsonb := '{}';       -- table -> raw references array (checked in pass 2)
  r             jsonb;
  rcol          text;
  rcol_idx      integer;
  rparent       text;
  parent        jsonb;
  ondel         text;
  refs          jsonb;
  refcols       text[];
  i             integer;
  v_out         jsonb;
BEGIN
  IF ir IS NULL OR jsonb_typeof(ir) <> 'object' THEN
    PERFORM syncular._schema_invalid('schema IR must be a JSON object', 'shape');
  END IF;

  -- the two input shapes differ in the version member and in the scope notation
  IF ir ? 'irVersion' THEN
    IF ir -> 'irVersion' <> '1'::jsonb THEN
      PERFORM syncular._schema_invalid('unsupported irVersion (only 1 is known)', 'ir_version');
    END IF;
    v_version := ir -> 'schemaVersion';
  ELSE
    v_version := ir -> 'version';
  END IF;
  IF v_version IS NULL OR jsonb_typeof(v_version) <> 'number'
     OR v_version::text::numeric <> trunc(v_version::text::numeric)
     OR v_version::text::numeric < 1 OR v_version::text::numeric > 2147483647 THEN
    PERFORM syncular._schema_invalid('schema version must be an integer between 1 and 2147483647',
                                     'version');
  END IF;

  v_tables := ir -> 'tables';
  IF v_tables IS NULL OR jsonb_typeof(v_tables) <> 'array' THEN
    PERFORM syncular._schema_invalid('schema IR must have a tables array', 'tables');
  END IF;

  -- pass 1: tables, columns, primary key, scopes, indexes
  FOR t IN SELECT value FROM jsonb_array_elements(v_tables) WITH ORDINALITY ORDER BY ordinality LOOP
    IF jsonb_typeof(t) <> 'object' THEN
      PERFORM syncular._schema_invalid('a table must be a JSON object', 'table_shape');
    END IF;
    tname := syncular._jstr(t, 'name');
    PERFORM syncular._check_identifier(tname, tname, NULL);
    IF tname = ANY (tnames) THEN
      PERFORM syncular._schema_invalid('duplicate table name', 'duplicate_table', tname);
    END IF;
    tnames := tnames || tname;

    -- columns
    IF jsonb_typeof(t -> 'columns') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'columns') = 0 THEN
      PERFORM syncular._schema_invalid('a table must have a non-empty columns array', 'columns', tname);
    END IF;
    cols := '[]';
    colnames := '{}';
    FOR c IN SELECT value FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(c) <> 'object' THEN
        PERFORM syncular._schema_invalid('a column must be a JSON object', 'column_shape', tname);
      END IF;
      cname := syncular._jstr(c, 'name');
      PERFORM syncular._check_identifier(cname, tname, cname);
      IF cname = ANY (colnames) THEN
        PERFORM syncular._schema_invalid('duplicate column name', 'duplicate_column', tname, cname);
      END IF;
      colnames := colnames || cname;
      ctype := syncular._jstr(c, 'type');
      IF ctype IS NULL OR syncular._pg_type(ctype) IS NULL THEN
        PERFORM syncular._schema_invalid('unknown column type', 'column_type', tname, cname,
                                         jsonb_build_object('type', c -> 'type'));
      END IF;
      IF jsonb_typeof(c -> 'nullable') IS DISTINCT FROM 'boolean' THEN
        PERFORM syncular._schema_invalid('column nullable must be a boolean', 'column_nullable',
                                         tname, cname);
      END IF;
      cnull := (c -> 'nullable')::text::boolean;
      IF coalesce(jsonb_typeof(c -> 'encrypted'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('column encrypted must be a boolean', 'column_encrypted',
                                         tname, cname);
      END IF;
      cenc := coalesce((c ->> 'encrypted')::boolean, false);
      ccrdt := NULL;
      IF ctype = 'crdt' THEN
        IF cenc THEN
          PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                           tname, cname);
        END IF;
        -- §5.10.1: an unknown crdtType is refused here, before serving (known: the built-in
        -- yjs-doc and every type registered with set_crdt_merger, so register first)
        ccrdt := syncular._jstr(c, 'crdtType');
        IF ccrdt IS NULL OR NOT syncular._crdt_type_known(ccrdt) THEN
          PERFORM syncular._schema_invalid('a crdt column must declare a known crdtType', 'crdt_type',
                                           tname, cname, jsonb_build_object('crdtType', ccrdt));
        END IF;
      ELSIF coalesce(jsonb_typeof(c -> 'crdtType'), 'null') <> 'null' THEN
        PERFORM syncular._schema_invalid('crdtType is only allowed on a crdt column', 'crdt_type',
                                         tname, cname);
      END IF;
      IF cenc AND syncular._jstr(c, 'declaredType') = 'crdt' THEN
        PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                         tname, cname);
      END IF;
      cols := cols || jsonb_build_array(jsonb_build_object(
                'name', cname,
                'type', CASE WHEN cenc THEN 'bytes' ELSE ctype END,
                'nullable', cnull,
                'crdtType', ccrdt,
                'encrypted', cenc));
    END LOOP;

    -- primary key
    pk := syncular._jstr(t, 'primaryKey');
    pk_idx := array_position(colnames, pk) - 1;
    IF pk IS NULL OR pk_idx IS NULL THEN
      PERFORM syncular._schema_invalid('primary key must name a column of the table', 'primary_key',
                                       tname, pk);
    END IF;
    IF (cols -> pk_idx -> 'encrypted')::text::boolean THEN
      PERFORM syncular._schema_invalid('the primary key cannot be encrypted', 'primary_key_encrypted',
                                       tname, pk);
    END IF;
    IF cols -> pk_idx ->> 'type' NOT IN ('string', 'integer', 'boolean', 'json') THEN
      PERFORM syncular._schema_invalid('primary key type must be string, integer, boolean or json',
                                       'primary_key_type', tname, pk,
                                       jsonb_build_object('type', cols -> pk_idx -> 'type'));
    END IF;

    -- scopes (declaration order)
    IF jsonb_typeof(t -> 'scopes') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'scopes') = 0 THEN
      PERFORM syncular._schema_invalid('a table must declare at least one scope', 'scopes_missing', tname);
    END IF;
    scopes := '[]';
    tvars := '{}';
    tscols := '{}';
    FOR s IN SELECT value FROM jsonb_array_elements(t -> 'scopes') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(s) = 'string' THEN
        pattern := s #>> '{}';
        scol := NULL;
        svar := NULL;
      ELSIF jsonb_typeof(s) = 'object' THEN
        pattern := syncular._jstr(s, 'pattern');
        scol := syncular._jstr(s, 'column');
        svar := syncular._jstr(s, 'variable');
        IF (s ? 'column' AND scol IS NULL) OR (s ? 'variable' AND svar IS NULL) THEN
          PERFORM syncular._schema_invalid('scope column and variable must be strings', 'scope_shape',
                                           tname);
        END IF;
      ELSE
        PERFORM syncular._schema_invalid('a scope must be a pattern string or an object with a pattern',
                                         'scope_shape', tname);
      END IF;
      m := regexp_match(pattern, '^([^{}]+):\{([^{}:]+)\}$');
      IF pattern IS NULL OR m IS NULL THEN
        PERFORM syncular._schema_invalid(
          'scope pattern must be prefix:{variable} with exactly one variable (no braces in the prefix, no braces or colons in the variable)',
          'scope_pattern', tname, NULL, jsonb_build_object('pattern', pattern));
      END IF;
      IF svar IS NOT NULL AND svar <> m[2] THEN
        PERFORM syncular._schema_invalid('scope variable does not match its pattern', 'scope_variable',
                                         tname, NULL, jsonb_build_object('pattern', pattern, 'variable', svar));
      END IF;
      svar := m[2];
      scol := coalesce(scol, svar);
      sidx := array_position(colnames, scol) - 1;
      IF sidx IS NULL THEN
        PERFORM syncular._schema_invalid('scope names no column of the table', 'scope_column',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      IF (cols -> sidx -> 'encrypted')::text::boolean THEN
        PERFORM syncular._schema_invalid('a scope column cannot be encrypted', 'scope_encrypted',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      -- one variable <-> exactly one column
      IF svar = ANY (tvars) OR scol = ANY (tscols)
         OR (var_cols ? svar AND var_cols ->> svar <> scol) THEN
        PERFORM syncular._schema_invalid('a scope variable must map to exactly one column',
                                         'scope_variable_column', tname, scol,
                                         jsonb_build_object('variable', svar));
      END IF;
      tvars := tvars || svar;
      tscols := tscols || scol;
      var_cols := var_cols || jsonb_build_object(svar, scol);
      scopes := scopes || jsonb_build_array(jsonb_build_object(
                  'pattern', m[1] || ':{' || m[2] || '}', 'prefix', m[1], 'variable', svar,
                  'column', scol, 'columnIndex', sidx));
    END LOOP;

    -- indexes
    IF coalesce(jsonb_typeof(t -> 'indexes'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('indexes must be an array', 'index_shape', tname);
    END IF;
    indexes := '[]';
    FOR ix IN SELECT value FROM jsonb_array_elements(coalesce(t -> 'indexes', '[]'))
                WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(ix) <> 'object' THEN
        PERFORM syncular._schema_invalid('an index must be a JSON object', 'index_shape', tname);
      END IF;
      ixname := syncular._jstr(ix, 'name');
      PERFORM syncular._check_identifier(ixname, tname, NULL, jsonb_build_object('index', ixname));
      IF ixname = ANY (ixnames) THEN
        PERFORM syncular._schema_invalid('duplicate index name', 'duplicate_index', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      ixnames := ixnames || ixname;
      ixcols := ix -> 'columns';
      IF jsonb_typeof(ixcols) IS DISTINCT FROM 'array' OR jsonb_array_length(ixcols) = 0 THEN
        PERFORM syncular._schema_invalid('an index must list at least one column', 'index_shape',
                                         tname, NULL, jsonb_build_object('index', ixname));
      END IF;
      FOR ixcol IN SELECT value FROM jsonb_array_elements(ixcols) LOOP
        IF jsonb_typeof(ixcol) <> 'string' OR NOT ((ixcol #>> '{}') = ANY (colnames)) THEN
          PERFORM syncular._schema_invalid('index names no column of the table', 'index_column',
                                           tname, ixcol #>> '{}', jsonb_build_object('index', ixname));
        END IF;
      END LOOP;
      IF (SELECT count(DISTINCT value) FROM jsonb_array_elements(ixcols)) <> jsonb_array_length(ixcols) THEN
        PERFORM syncular._schema_invalid('an index lists a column twice', 'index_column', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      IF coalesce(jsonb_typeof(ix -> 'unique'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('index unique must be a boolean', 'index_shape', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      indexes := indexes || jsonb_build_array(jsonb_build_object(
                   'name', ixname, 'columns', ixcols,
                   'unique', coalesce((ix ->> 'unique')::boolean, false),
                   'physical', syncular._physical_index_name(ixname)));
    END LOOP;

    -- materialize: default true, except when every non-PK, non-scope column is encrypted
    -- (decision: a table with no such column at all stays materialized)
    IF coalesce(jsonb_typeof(t -> 'materialize'), 'null') NOT IN ('null', 'boolean') THEN
      PERFORM syncular._schema_invalid('materialize must be a boolean', 'materialize', tname);
    END IF;
    IF jsonb_typeof(t -> 'materialize') = 'boolean' THEN
      mat := (t -> 'materialize')::text::boolean;
    ELSE
      SELECT NOT (count(*) > 0 AND bool_and((e.value -> 'encrypted')::text::boolean))
        INTO mat
        FROM jsonb_array_elements(cols) WITH ORDINALITY AS e(value, n)
       WHERE e.n - 1 <> pk_idx AND NOT ((e.value ->> 'name') = ANY (tscols));
    END IF;

    IF coalesce(jsonb_typeof(t -> 'references'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('references must be an array', 'reference_shape', tname);
    END IF;
    raw_refs := raw_refs || jsonb_build_object(tname, coalesce(t -> 'references', '[]'));

    compiled_tbls := compiled_tbls || jsonb_build_array(jsonb_build_object(
      'name', tname, 'materialize', mat, 'primaryKey', pk, 'pkIndex', pk_idx,
      'columns', cols, 'scopes', scopes, 'indexes', indexes, 'references', '[]'::jsonb));
  END LOOP;

  -- pass 2: declared references (§2.5); every table is known now
  FOR i IN 0 .. jsonb_array_length(compiled_tbls) - 1 LOOP
    t := compiled_tbls -> i;
    tname := t ->> 'name';
    SELECT array_agg(e ->> 'name' ORDER BY n) INTO colnames
      FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY AS x(e, n);
    refs := '[]';
    refcols := '{}';
    FOR r IN SELECT value FROM jsonb_array_elements(raw_refs -> tname) WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(r) <> 'object' THEN
        PERFORM syncular._schema_invalid('a reference must be a JSON object', 'reference_shape', tname);
      END IF;
      rcol := syncular._jstr(r, 'column');
      rcol_idx := array_position(colnames, rcol) - 1;
      IF rcol_idx IS NULL THEN
        PERFORM syncular._schema_invalid('reference names no column of the table', 'reference_column',
                                         tname, rcol);
      END IF;
      IF rcol = ANY (refcols) THEN
        PERFORM syncular._schema_invalid('a column declares more than one reference', 'duplicate_reference',
                                         tname, rcol);
      END IF;
      refcols := refcols || rcol;
      rparent := syncular._jstr(r, 'parentTable');
      SELECT e INTO parent FROM jsonb_array_elements(compiled_tbls) e WHERE e ->> 'name' = rparent;
      IF rparent IS NULL OR parent IS NULL THEN
        PERFORM syncular._schema_invalid('reference names an unknown parent table', 'reference_parent',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      IF parent -> 'columns' -> (parent ->> 'pkIndex')::int ->> 'type'
         IS DISTINCT FROM t -> 'columns' -> rcol_idx ->> 'type' THEN
        PERFORM syncular._schema_invalid('reference column type differs from the parent primary key type',
                                         'reference_type', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(parent -> 'scopes') e)
         IS DISTINCT FROM
         (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(t -> 'scopes') e) THEN
        PERFORM syncular._schema_invalid('a child table must declare the same scope patterns as its parent',
                                         'reference_scopes', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF r ? 'onDelete' AND jsonb_typeof(r -> 'onDelete') <> 'null' THEN
        ondel := lower(btrim(syncular._jstr(r, 'onDelete')));
      ELSE
        ondel := 'restrict';
      END IF;
      ondel := CASE ondel WHEN 'restrict' THEN 'restrict' WHEN 'cascade' THEN 'cascade'
                          WHEN 'set null' THEN 'set_null' WHEN 'set_null' THEN 'set_null' END;
      IF ondel IS NULL THEN
        PERFORM syncular._schema_invalid('reference onDelete must be restrict, cascade or set null',
                                         'reference_on_delete', tname, rcol,
                                         jsonb_build_object('onDelete', r -> 'onDelete'));
      END IF;
      IF ondel = 'set_null' AND NOT (t -> 'columns' -> rcol_idx -> 'nullable')::text::boolean THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL needs a nullable column', 'reference_set_null',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      -- a cascaded SET NULL keeps the row's stored scopes, so it must never clear a scope column
      IF ondel = 'set_null' AND EXISTS (SELECT 1 FROM jsonb_array_elements(t -> 'scopes') e
                                         WHERE e ->> 'column' = rcol) THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL cannot clear a scope column',
                                         'reference_set_null_scope', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      refs := refs || jsonb_build_array(jsonb_build_object(
                'column', rcol, 'columnIndex', rcol_idx, 'parentTable', rparent, 'onDelete', ondel));
    END LOOP;
    compiled_tbls := jsonb_set(compiled_tbls, ARRAY[i::text, 'references'], refs);
  END LOOP;

  v_out := jsonb_build_object('version', v_version::text::integer, 'appSchema', app_schema,
                              'tables', compiled_tbls);

  -- physical index names (declared and reference indexes) must not collide
  IF (SELECT count(*) <> count(DISTINCT physical) FROM syncular._index_plan(v_out)) THEN
    PERFORM syncular._schema_invalid('two indexes map to the same physical index name',
                                     'duplicate_index');
  END IF;
  RETURN v_out;
END
$$;

-- 0.2.0: the blob store (58_blobs.sql)
COMMENT ON TABLE syncular.sync_blob_refs IS
'The blob reference index (SPEC §5.9.4): the blob ids referenced by blob_ref values of current rows, per (partition, table, row id); replaced by every applied upsert, removed with the row. Read by blob_get (download authorization) and blob_gc (orphans).';

-- syncular install script, part 58: the blob store (SPEC §5.9; src/blobs.c; docs/blobs.md).

CREATE SEQUENCE syncular.sync_blob_upload_seq;

CREATE TABLE syncular.sync_blobs (
  partition      TEXT NOT NULL,
  blob_id        TEXT NOT NULL CHECK (blob_id ~ '^sha256:[0-9a-f]{64}$'),
  byte_length    BIGINT NOT NULL CHECK (byte_length >= 0),
  uploader       TEXT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  upload_id      BIGINT NOT NULL UNIQUE,
  PRIMARY KEY (partition, blob_id)
);
CREATE INDEX sync_blobs_gc ON syncular.sync_blobs (created_at_ms);

CREATE TABLE syncular.sync_blob_chunks (
  upload_id  BIGINT NOT NULL,
  seq        INTEGER NOT NULL,
  data       BYTEA NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
-- out of line and never compressed: blobs are mostly compressed media, and a chunk is read whole
ALTER TABLE syncular.sync_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blobs', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_chunks', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_upload_seq', '');
REVOKE ALL ON syncular.sync_blobs, syncular.sync_blob_chunks, syncular.sync_blob_upload_seq FROM PUBLIC;

COMMENT ON TABLE syncular.sync_blobs IS
'The blob store (SPEC §5.9.2): one row per stored blob, content-addressed per partition (blob_id = "sha256:" + hex of the bytes), with its length, uploader (actor), upload time and the upload_id whose sync_blob_chunks rows hold the bytes. Written by blob_upload_finish / put_blob after the content address was verified; deleted by blob_gc.';
COMMENT ON TABLE syncular.sync_blob_chunks IS
'The bytes of stored blobs (SPEC §5.9.2): chunks of at most 1 MiB per (upload_id, seq), in order; STORAGE EXTERNAL. Written in the uploading transaction, deleted with their blob by blob_gc.';

CREATE FUNCTION syncular.blob_upload_begin(partition text, actor_id text, blob_id text,
                                           byte_length bigint DEFAULT NULL)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_begin';

CREATE FUNCTION syncular.blob_upload_append(upload bigint, chunk bytea)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_append';

CREATE FUNCTION syncular.blob_upload_finish(upload bigint)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_finish';

CREATE FUNCTION syncular.put_blob(partition text, actor_id text, blob_id text, body bytea)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_put_blob';

CREATE FUNCTION syncular.blob_get(partition text, actor_id text, blob_id text,
                                  client_id text DEFAULT '')
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_get';

CREATE FUNCTION syncular.blob_gc(partition text DEFAULT NULL, grace_ms bigint DEFAULT 86400000,
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
  cutoff := (extract(epoch FROM clock_timestamp()) * 1000)::bigint - grace_ms;
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

COMMENT ON FUNCTION syncular.blob_upload_begin(text, text, text, bigint) IS
'Blob upload, step 1 (SPEC §5.9.3; docs/blobs.md): PUT <mount>/blobs/{blobId}. partition: the authenticated tenant; actor_id: the uploader (recorded; upload is host authentication only, no scope check); blob_id: "sha256:" + 64 lowercase hex; byte_length: the request''s Content-Length in bytes, or NULL. Returns the upload handle for blob_upload_append / blob_upload_finish, valid in this transaction only (a transaction that began an upload cannot commit without finishing it). '
'Errors: sync.invalid_request (22023: NULL or empty argument, malformed blob_id, negative byte_length), blob.too_large (22023, HTTP 413: byte_length over syncular.blob_max_bytes). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_upload_append(bigint, bytea) IS
'Blob upload, step 2 (SPEC §5.9.3; docs/blobs.md): hash and store the next piece of the body (any size; stored as chunks of at most 1 MiB). upload: the handle of blob_upload_begin; chunk: the bytes. Returns the bytes received so far. Errors: sync.invalid_request (22023: NULL argument, unknown or finished handle), blob.too_large (22023, HTTP 413: the streamed count over syncular.blob_max_bytes). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_upload_finish(bigint) IS
'Blob upload, step 3 (SPEC §5.9.3; docs/blobs.md): compare "sha256:" + hex(SHA-256 of the received bytes) with the blob_id and store the blob. Returns {"blobId", "byteLength", "stored": false when the blob was already stored (idempotent success, nothing written)}. Errors: blob.hash_mismatch (22023, HTTP 400: nothing is stored once the transaction rolls back), sync.invalid_request (22023: NULL argument, unknown or finished handle, an append rolled back by a savepoint). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.put_blob(text, text, text, bytea) IS
'Blob upload in one call (SPEC §5.9.3; docs/blobs.md): blob_upload_begin + blob_upload_append + blob_upload_finish over body (memory: body once plus one 1 MiB slice). Arguments as blob_upload_begin, body the bytes. Returns and errors as the three steps. SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_get(text, text, text, text) IS
'Blob download (SPEC §5.9.5; docs/blobs.md): GET <mount>/blobs/{blobId}. partition, actor_id: the authenticated tenant and actor; blob_id: the path parameter; client_id: passed to the scope resolver (default ''''). Re-authorizes on every call from the referencing rows (sync_blob_refs): allowed when one of them passes the write-authorization rule (SPEC §3.4) under the actor''s grant. '
'Returns status 200 rows, one per stored chunk in order (content_type application/octet-stream, byte_length the total size in bytes, body the chunk; one empty row for an empty blob), or one row with status 404 blob.not_found (no such blob in the partition, or a malformed id) / 403 blob.forbidden (no referencing row passes, or the resolver failed), content_type application/json, byte_length NULL and the JSON error body. Errors: sync.invalid_request (22023: NULL or empty partition, actor_id or blob_id). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_gc(text, bigint, integer) IS
'Blob garbage collection (SPEC §5.9.2; docs/blobs.md): deletes blobs of partition (every partition when NULL) that no row references (sync_blob_refs) and that were uploaded more than grace_ms milliseconds ago (default 24 h), with their chunks, at most max_blobs per call. Each candidate is locked FOR UPDATE SKIP LOCKED and re-checked after the lock, so a blob a concurrent push references is kept. Returns {"deletedBlobs", "deletedChunks", "mayHaveMore"}. Errors: sync.invalid_request (22023: grace_ms < 0, max_blobs < 1, or an isolation level other than READ COMMITTED). Owner only.';

-- 0.2.0: auth leases (59_leases.sql)
-- syncular install script, part 59: auth leases (SPEC §7.3; src/leases.c; README "Auth leases").

CREATE TABLE syncular.sync_leases (
  partition       TEXT NOT NULL,
  client_id       TEXT NOT NULL,
  lease_id        TEXT NOT NULL UNIQUE,
  actor_id        TEXT NOT NULL,
  allowed_scopes  JSONB NOT NULL,
  issued_at_ms    BIGINT NOT NULL,
  expires_at_ms   BIGINT NOT NULL,
  revoked_at_ms   BIGINT,
  PRIMARY KEY (partition, client_id)
);
CREATE INDEX sync_leases_by_actor ON syncular.sync_leases (partition, actor_id);
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_leases', '');
REVOKE ALL ON syncular.sync_leases FROM PUBLIC;
COMMENT ON TABLE syncular.sync_leases IS
'Auth leases (SPEC §7.3.1): per (partition, client id) the leaseId, the actor, the allowed scopes the resolver returned at issuance and issued/expires (epoch ms); revoked_at_ms once revoked. Issued and slid by rounds while syncular.lease_ttl_ms > 0; read when the resolver signals an outage; revoked by revoke_lease / revoke_leases, deleted by clear_lease and unregister_schema.';

CREATE FUNCTION syncular.revoke_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  UPDATE syncular.sync_leases l
     SET revoked_at_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE l.partition = revoke_lease.partition AND l.lease_id = revoke_lease.lease_id
     AND l.revoked_at_ms IS NULL
  RETURNING true
$$;

CREATE FUNCTION syncular.revoke_leases(partition text, actor_id text) RETURNS integer
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  WITH r AS (
    UPDATE syncular.sync_leases l
       SET revoked_at_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
     WHERE l.partition = revoke_leases.partition AND l.actor_id = revoke_leases.actor_id
       AND l.revoked_at_ms IS NULL
    RETURNING 1)
  SELECT count(*)::integer FROM r
$$;

CREATE FUNCTION syncular.clear_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  DELETE FROM syncular.sync_leases l
   WHERE l.partition = clear_lease.partition AND l.lease_id = clear_lease.lease_id
  RETURNING true
$$;

COMMENT ON FUNCTION syncular.revoke_lease(text, text) IS
'Revokes one auth lease (SPEC §7.3.4): partition and the leaseId of the LEASE frame. Durable: the client''s next round that would be lease-authorized (resolver outage) fails with sync.auth_lease_revoked (HTTP 401), and authorized rounds neither slide it nor issue a new one until clear_lease removes it; local data is not purged. Returns true when a live lease was revoked, NULL when none matched (unknown or already revoked). Owner only.';
COMMENT ON FUNCTION syncular.revoke_leases(text, text) IS
'Revokes every live auth lease of an actor in a partition (SPEC §7.3.4), as revoke_lease does for one. Returns how many were revoked. Owner only.';
COMMENT ON FUNCTION syncular.clear_lease(text, text) IS
'Deletes one auth lease record (SPEC §7.3.4: the host clears a revocation), revoked or not: the client''s next authorized round mints a new leaseId. partition, lease_id as revoke_lease. Returns true when a record was deleted, NULL otherwise. Owner only.';
-- 45_stats: activity statistics (src/stats.c) and lag views.
--
-- The counters live in shared memory: they are collected only when the library is in
-- shared_preload_libraries.  Conventions of pg_stat_statements: superuser or pg_read_all_stats
-- reads them, the owner resets them.  docs/operations.md says what every figure means.

CREATE FUNCTION syncular._stats(
  OUT preloaded boolean, OUT dbid oid,
  OUT rounds_ok bigint, OUT rounds_refused bigint,
  OUT push_commits_applied bigint, OUT push_commits_cached bigint, OUT push_commits_rejected bigint,
  OUT push_conflicts bigint, OUT push_operations bigint,
  OUT pull_sections_incremental bigint, OUT pull_sections_bootstrap bigint,
  OUT pull_sections_reset bigint, OUT pull_sections_revoked bigint,
  OUT pull_commits_served bigint, OUT pull_changes_served bigint, OUT pull_rows_served bigint,
  OUT response_bytes bigint,
  OUT rounds_refused_by_code jsonb, OUT push_rejected_by_code jsonb,
  OUT time_buckets_ms double precision[],
  OUT push_time_buckets bigint[], OUT push_time_sum_ms double precision,
  OUT pull_time_buckets bigint[], OUT pull_time_sum_ms double precision,
  OUT stats_reset timestamptz)
RETURNS SETOF record LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats';
COMMENT ON FUNCTION syncular._stats() IS
'Internal: the rows of the view syncular.stats (one per database with counters; without shared_preload_libraries '
'one row for the current database with preloaded = false, every figure NULL, and a NOTICE). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';

CREATE FUNCTION syncular._stats_tables(
  OUT dbid oid, OUT table_name text,
  OUT push_operations bigint, OUT push_conflicts bigint, OUT push_rejected bigint,
  OUT pull_sections_incremental bigint, OUT pull_sections_bootstrap bigint,
  OUT pull_sections_reset bigint, OUT pull_sections_revoked bigint,
  OUT pull_commits_served bigint, OUT pull_changes_served bigint, OUT pull_rows_served bigint)
RETURNS SETOF record LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_tables';
COMMENT ON FUNCTION syncular._stats_tables() IS
'Internal: the rows of the view syncular.stats_tables (one per database and synced table with counters; none and a '
'NOTICE without shared_preload_libraries). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';

CREATE FUNCTION syncular.stats_reset() RETURNS void
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_reset';
COMMENT ON FUNCTION syncular.stats_reset() IS
'Sets every counter of syncular.stats and syncular.stats_tables back to zero, for every database of the cluster, '
'and records the time in stats_reset. No arguments; returns nothing. Owner-only (EXECUTE is not granted to PUBLIC). '
'Without shared_preload_libraries it does nothing and says so with a NOTICE. Never raises. '
'Host operations, no SPEC section; docs/operations.md.';

CREATE VIEW syncular.stats AS
SELECT s.preloaded, s.dbid, d.datname,
       s.rounds_ok + s.rounds_refused AS rounds, s.rounds_ok, s.rounds_refused, s.rounds_refused_by_code,
       s.push_commits_applied, s.push_commits_cached, s.push_commits_rejected, s.push_rejected_by_code,
       s.push_conflicts, s.push_operations,
       s.pull_sections_incremental, s.pull_sections_bootstrap, s.pull_sections_reset, s.pull_sections_revoked,
       s.pull_commits_served, s.pull_changes_served, s.pull_rows_served, s.response_bytes,
       s.time_buckets_ms, s.push_time_buckets, s.push_time_sum_ms, s.pull_time_buckets, s.pull_time_sum_ms,
       s.stats_reset
  FROM syncular._stats() s
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;
COMMENT ON VIEW syncular.stats IS
  'Activity counters per database since stats_reset (shared memory; needs shared_preload_libraries = ''syncular'', '
  'otherwise one row with preloaded = false and NULL figures): rounds by outcome (refused ones by catalogue code), '
  'push commits applied / cached / rejected (by code), conflicts, operations, pull sections by kind, commits, changes '
  'and rows served, response bytes, push and pull phase time histograms (bucket upper bounds in time_buckets_ms, ms). '
  'Superuser or pg_read_all_stats. docs/operations.md.';

CREATE VIEW syncular.stats_tables AS
SELECT s.dbid, d.datname, s.table_name,
       s.push_operations, s.push_conflicts, s.push_rejected,
       s.pull_sections_incremental, s.pull_sections_bootstrap, s.pull_sections_reset, s.pull_sections_revoked,
       s.pull_commits_served, s.pull_changes_served, s.pull_rows_served
  FROM syncular._stats_tables() s
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;
COMMENT ON VIEW syncular.stats_tables IS
  'Activity counters per database and synced table since the last syncular.stats_reset() (shared memory; empty '
  'without shared_preload_libraries): operations of applied commits, conflicts and rejections caused by an operation '
  'on the table, pull sections by kind, commits, changes and rows served. Superuser or pg_read_all_stats. '
  'docs/operations.md.';

-- Lag, from the catalog (no preload needed).
CREATE VIEW syncular.partition_lag AS
SELECT p.partition,
       p.max_commit_seq AS newest_commit_seq,
       (SELECT c.created_at_ms FROM syncular.sync_commits c
         WHERE c.partition = p.partition AND c.commit_seq = p.max_commit_seq) AS newest_commit_at_ms,
       coalesce(a.clients, 0) AS clients,
       coalesce(a.no_cursor, 0) AS clients_without_cursor,
       a.oldest_cursor AS oldest_client_cursor,
       p.max_commit_seq - a.oldest_cursor AS max_commits_behind,
       a.last_seen_at_ms
  FROM syncular.partitions p
  LEFT JOIN LATERAL (
    SELECT count(*) AS clients, count(*) FILTER (WHERE c.cursor < 0) AS no_cursor,
           min(c.cursor) FILTER (WHERE c.cursor >= 0) AS oldest_cursor,
           max(c.updated_at_ms) AS last_seen_at_ms
      FROM syncular.sync_clients c WHERE c.partition = p.partition) a ON true;
COMMENT ON VIEW syncular.partition_lag IS
  'Read-only. One row per known partition: newest_commit_seq (max_commit_seq) and its created_at_ms, clients, '
  'clients_without_cursor (cursor < 0: no pull served yet, or only revoked subscriptions), oldest_client_cursor (the lowest cursor >= 0 of its client records, NULL when '
  'none), max_commits_behind = newest_commit_seq - oldest_client_cursor (commit sequence numbers of the whole '
  'partition, an upper bound of what that client has still to pull), last_seen_at_ms (newest client record update, '
  'ms since the epoch). SPEC §4.5, §4.6. docs/operations.md.';

CREATE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       coalesce(p.max_commit_seq, 0) AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(coalesce(p.max_commit_seq, 0) - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       (extract(epoch FROM pg_catalog.now()) * 1000)::bigint - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
COMMENT ON VIEW syncular.client_lag IS
  'Read-only. One row per client record: wire_version and cursor of its last round, commits_behind = the '
  'partition''s newest commit_seq - cursor (NULL while the client has no cursor, cursor < 0; counts every commit of the '
  'partition, an upper bound), behind_horizon (its next pull resets with sync.cursor_expired), last_seen_at_ms (ms '
  'since the epoch) and idle_ms (now() - last_seen_at_ms). SPEC §4.5. docs/operations.md.';

REVOKE ALL ON syncular.stats, syncular.stats_tables, syncular.partition_lag, syncular.client_lag FROM PUBLIC;
GRANT SELECT ON syncular.stats, syncular.stats_tables TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION syncular._stats(), syncular._stats_tables() TO pg_read_all_stats;
-- The segment store and direct download (src/sql/45_segments.sql, SPEC §5).
--
-- Segments are cache, not durable state (§5.1: "servers MAY expire them at any time"), so both
-- tables are UNLOGGED: building a segment writes no WAL, and after a crash PostgreSQL truncates
-- them.  A descriptor issued before the crash then answers 404 sync.not_found, which §5.5 makes
-- legal ("the expired→forgotten transition"), and the client's recovery is a re-pull.  Unlogged
-- tables are not replicated and cannot be read on a hot standby: a standby serves the rows lane
-- inline only (docs/segments.md).  The bytes column is STORAGE EXTERNAL: out of line without
-- pglz, which would spend CPU on every build for a payload the serving hop compresses per
-- response (§5.8) anyway.

-- One entry per content address: segment_id = 'sha256:' || hex(sha256(bytes)) (§5.1).
CREATE UNLOGGED TABLE syncular.sync_segments (
  segment_id     TEXT PRIMARY KEY,
  media_type     SMALLINT NOT NULL CHECK (media_type IN (1, 2)),
  byte_length    BIGINT NOT NULL,
  row_count      BIGINT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  bytes          BYTEA NOT NULL
);
ALTER TABLE syncular.sync_segments ALTER COLUMN bytes SET STORAGE EXTERNAL;
COMMENT ON TABLE syncular.sync_segments IS
'Segment store (SPEC §5.1): one row per content address (sha256:<hex> of the uncompressed bytes), media type '
'1 = rows (SSG2), 2 = sqlite. UNLOGGED cache: emptied by crash recovery, not readable on a standby. Written by '
'the pull, read by syncular.segment_download, forgotten by syncular.prune_segments.';

-- One publication per descriptor context (§5.1): who may download the bytes, until when.
CREATE UNLOGGED TABLE syncular.sync_segment_publications (
  segment_id       TEXT NOT NULL,
  partition        TEXT NOT NULL,
  log_epoch        TEXT NOT NULL,
  tbl              TEXT NOT NULL,
  schema_version   INTEGER NOT NULL,
  media_type       SMALLINT NOT NULL,
  scope_digest     TEXT NOT NULL,
  grant_digest     TEXT NOT NULL,
  as_of_commit_seq BIGINT NOT NULL,
  row_cursor       TEXT,
  page_rows        INTEGER NOT NULL,
  next_row_cursor  TEXT,
  created_at_ms    BIGINT NOT NULL,
  expires_at_ms    BIGINT NOT NULL,
  CONSTRAINT sync_segment_publications_key UNIQUE NULLS NOT DISTINCT (partition, log_epoch, tbl, schema_version, media_type, scope_digest,
                                                             grant_digest, as_of_commit_seq, row_cursor, page_rows)
);
CREATE INDEX sync_segment_publications_segment ON syncular.sync_segment_publications (segment_id);
CREATE INDEX sync_segment_publications_expiry ON syncular.sync_segment_publications (expires_at_ms);
COMMENT ON TABLE syncular.sync_segment_publications IS
'Publications of stored segments (SPEC §5.1): the reuse key (partition, log epoch, table, schema version, media '
'type, scope digest §3.5, grant digest, asOfCommitSeq, page start and page size) with the page continuation, '
'creation and expiry (syncular.segment_ttl). grant_digest hashes the read restriction on unrequested scope '
'variables, so two actors share a segment only when they may read exactly the same rows. UNLOGGED cache.';

CREATE FUNCTION syncular.prune_segments(now_ms bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     bigint := coalesce(now_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
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
COMMENT ON FUNCTION syncular.prune_segments(bigint) IS
'Forgets expired segments (SPEC §5.1, §5.5): deletes every publication whose expiry (ms since the Unix epoch) is at '
'or before now_ms (default: the clock), then every stored segment left without a publication. Returns '
'{"publications": n, "segments": m}. A forgotten segment answers 404 sync.not_found on download, which §5.5 makes '
'equivalent to sync.segment_expired for the client (re-pull). Owner-only; run it from the same scheduler as '
'syncular.prune. No errors of its own.';

CREATE FUNCTION syncular.segment_download(segment_id text, partition text, actor_id text,
                                          requested_scopes jsonb,
                                          if_none_match text DEFAULT NULL,
                                          accept_encoding text DEFAULT NULL,
                                          client_id text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_download';
COMMENT ON FUNCTION syncular.segment_download(text, text, text, jsonb, text, text, text) IS
'GET <mount>/segments/{segmentId} as one row (SPEC §5.5, docs/segments.md). segment_id: the path parameter; '
'partition, actor_id: what the host authenticated; requested_scopes: the X-Syncular-Scopes header parsed as JSON '
'(the owning subscription''s requested scope map); if_none_match, accept_encoding: the request headers (NULL when '
'absent); client_id: passed to the scope resolver (NULL = ''''). Re-authorizes on every call: resolves the actor''s '
'scopes, computes the effective scopes and their digest for the segment''s table, and requires an unexpired '
'publication of the segment in this partition and live log epoch with that digest. Answers: 200 with the bytes '
'(Content-Encoding zstd or gzip per accept_encoding, zstd preferred, identity otherwise), 304 (empty body) when '
'if_none_match names the ETag, 404 sync.not_found (unknown, forgotten, another partition or log epoch), 404 '
'sync.segment_expired (TTL passed, the schema version moved, or an RFC 0007 checkpoint of the partition has a '
'schema version above the segment''s), 403 sync.forbidden (resolver failure, revoked scopes, digest mismatch), '
'400 sync.invalid_request / sync.invalid_subscription (bad requested_scopes), 503 sync.schema_not_ready (no schema, '
'or a hot standby: the store is not readable there). headers: a JSON object {Content-Type, ETag, Cache-Control, '
'Vary, Content-Encoding?}; error bodies are the catalogue JSON {code, category, retryable, recommendedAction, '
'message}. SECURITY DEFINER like syncular.handle.';

CREATE FUNCTION syncular.segments(partition text DEFAULT NULL)
RETURNS TABLE(segment_id text, media_type smallint, tbl text, schema_version integer, scope_digest text,
              as_of_commit_seq bigint, row_cursor text, next_row_cursor text, row_count bigint,
              byte_length bigint, created_at_ms bigint, expires_at_ms bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT p.segment_id, p.media_type, p.tbl, p.schema_version, p.scope_digest, p.as_of_commit_seq,
         p.row_cursor, p.next_row_cursor, s.row_count, s.byte_length, p.created_at_ms, p.expires_at_ms
    FROM syncular.sync_segment_publications p JOIN syncular.sync_segments s USING (segment_id)
   WHERE $1 IS NULL OR p.partition = $1
   ORDER BY p.partition, p.tbl, p.as_of_commit_seq, p.created_at_ms, p.row_cursor NULLS FIRST
$$;
COMMENT ON FUNCTION syncular.segments(text) IS
'The stored segment publications (SPEC §5.1) of one partition (NULL: every partition): descriptor fields, sizes and '
'expiry in ms since the Unix epoch. For operators and tests; owner-only. No errors.';

-- The server secret of signed segment URLs (§5.4): owner-only like every catalog table.
CREATE TABLE syncular.sync_segment_secret (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  key  BYTEA NOT NULL CHECK (length(key) >= 32)
);
-- 244 random bits from two v4 UUIDs (pg_strong_random), hashed to a 32-byte key
INSERT INTO syncular.sync_segment_secret (id, key)
VALUES (1, sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())));
REVOKE ALL ON syncular.sync_segments, syncular.sync_segment_publications, syncular.sync_segment_secret
  FROM PUBLIC;
COMMENT ON TABLE syncular.sync_segment_secret IS
'The HMAC-SHA256 key of signed segment URLs (SPEC §5.4), created with the extension. Owner-only: readable by no '
'role the operator does not grant. Replace it (UPDATE ... SET key = <32 random bytes>) to invalidate every '
'issued URL at once.';

CREATE FUNCTION syncular.segment_url_download(segment_id text, st text,
                                              if_none_match text DEFAULT NULL,
                                              accept_encoding text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_url_download';
COMMENT ON FUNCTION syncular.segment_url_download(text, text, text, text) IS
'A bare signed-URL fetch (SPEC §5.4) as one row, for the gateway route that serves syncular.segment_url_base: no '
'host authentication, the token is the whole grant. segment_id: the path''s segment id; st: the st query '
'parameter; if_none_match, accept_encoding: the request headers. Verifies the HMAC, exp (60 s skew), seg, and that '
'the token''s scope digest was published for the segment in the partition its aud names (live log epoch), then '
'answers like syncular.segment_download: 200 (zstd/gzip/identity), 304, 403 sync.forbidden (malformed or '
'tampered token, another segment), 404 sync.segment_expired (token or publication expired, RFC 0007 checkpoint '
'ahead), 404 sync.not_found (forgotten, rotated epoch), 503 sync.schema_not_ready. SECURITY DEFINER like '
'syncular.handle.';
-- Advisory timestamps are rewritten at most once a second (src/storage.h SYNC_TOUCH_INTERVAL_MS).
COMMENT ON TABLE syncular.sync_partition_registry IS
'The log epoch of each partition (SPEC §2.1): a client whose logEpoch differs is told to reset. Written on first use of a partition and by syncular.rotate_log_epoch; last_authenticated_at_ms = the last authenticated round, to within a second (a round rewrites it only when it is at least 1 s old).';
COMMENT ON TABLE syncular.sync_clients IS
'Client records (SPEC §4.5): per (partition, client id) the bound actor, wire version, last cursor, subscriptions and time of the last round (a round that pushes only rewrites an unchanged record only when updated_at_ms is at least 1 s old). A client id bound to another actor is refused. View: syncular.clients.';

-- The serve gate in C (src/gate.c): the same signatures, the rule's one definition.
CREATE OR REPLACE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]',
  running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_serve_gate';
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

-- syncular install script, part 58b: signed blob URLs — presigned upload grants (SPEC §5.9.3)
-- and presigned downloads (§5.9.5), the native token of §5.4 (src/blobs.c, src/segurl.c;
-- docs/blobs.md).

-- a download token names the blob and a partition token: the verifier finds the partition here
CREATE INDEX sync_blobs_blob_id ON syncular.sync_blobs (blob_id);

CREATE FUNCTION syncular.blob_upload_grant(partition text, actor_id text, blob_id text,
                                           byte_length bigint)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_grant';

CREATE FUNCTION syncular.blob_url_upload_begin(blob_id text, token text, byte_length bigint)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_upload_begin';

CREATE FUNCTION syncular.blob_url_get(blob_id text, token text)
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_get';

COMMENT ON FUNCTION syncular.blob_upload_grant(text, text, text, bigint) IS
'Presigned upload grant (SPEC §5.9.3; docs/blobs.md): POST <mount>/blobs/{blobId}/upload-grant. partition, actor_id: the authenticated tenant and uploader (host authentication only, no scope check); blob_id: "sha256:" + 64 lowercase hex; byte_length: the declared byteLength in bytes. '
'Returns {"url", "urlExpiresAtMs"} (url = syncular.blob_url_base || blob_id || ''?bt='' || token, valid syncular.blob_url_ttl; a PUT of exactly byte_length bytes to it needs no host authentication, see blob_url_upload_begin), {"present": true} when the blob is already stored, or NULL when syncular.blob_url_base is empty (no grants offered: PUT the bytes to the blob route). '
'Errors: sync.invalid_request (22023: NULL or empty argument, malformed blob_id, NULL or negative byte_length), blob.too_large (22023, HTTP 413: byte_length over syncular.blob_max_bytes, checked before any URL is minted). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_url_upload_begin(text, text, bigint) IS
'Blob upload under a presigned grant (SPEC §5.9.3; docs/blobs.md): PUT <url of blob_upload_grant> with no host authentication. blob_id: the path parameter; token: the bt query parameter; byte_length: the request''s Content-Length in bytes, which must equal the granted length. Verifies the token (HMAC, op put, blob, expiry) and begins the upload in the granted partition for the granting actor; continue with blob_upload_append / blob_upload_finish in the same transaction. Returns the upload handle. '
'Errors: blob.forbidden (42501, HTTP 403: malformed or tampered token, a token for another blob or a download, expired, or another length), sync.invalid_request (22023: NULL or empty blob_id or token), blob.too_large (22023, HTTP 413). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_url_get(text, text) IS
'Blob download through a signed URL (SPEC §5.9.5; docs/blobs.md): GET <url of blob_get> with no host authentication. blob_id: the path parameter; token: the bt query parameter. Verifies the token (HMAC, op get, blob, expiry, partition token); the actor was authorized against the referencing rows when the URL was issued, so the URL is a short-TTL grant to these bytes. '
'Returns rows as blob_get: status 200 per stored chunk, or one row 403 blob.forbidden (malformed, tampered, expired, or another blob''s token) / 404 blob.not_found (the blob is gone) with the JSON error body. Errors: sync.invalid_request (22023: NULL or empty argument). SECURITY DEFINER.';
COMMENT ON FUNCTION syncular.blob_get(text, text, text, text) IS
'Blob download (SPEC §5.9.5; docs/blobs.md): GET <mount>/blobs/{blobId}. partition, actor_id: the authenticated tenant and actor; blob_id: the path parameter; client_id: passed to the scope resolver (default ''''). Re-authorizes on every call from the referencing rows (sync_blob_refs): allowed when one of them passes the write-authorization rule (SPEC §3.4) under the actor''s grant. '
'Returns status 200 rows, one per stored chunk in order (content_type application/octet-stream, byte_length the total size in bytes, body the chunk; one empty row for an empty blob); when syncular.blob_url_base is set, an authorized call instead returns one status 200 row with content_type application/json, byte_length NULL and body {"url", "urlExpiresAtMs"} (a signed URL served by blob_url_get, valid syncular.blob_url_ttl); or one row with status 404 blob.not_found (no such blob in the partition, or a malformed id) / 403 blob.forbidden (no referencing row passes, or the resolver failed), content_type application/json, byte_length NULL and the JSON error body. Errors: sync.invalid_request (22023: NULL or empty partition, actor_id or blob_id). SECURITY DEFINER.';

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
