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
           syncular.sync_schema_meta, syncular.sync_row_validators, syncular.sync_settings;

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
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records, RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
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

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
