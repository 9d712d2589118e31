-- syncular 0.3.0 -> 0.4.0 (ALTER EXTENSION syncular UPDATE TO '0.4.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.4.0'" to load this file. \quit

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
           syncular.sync_leases;

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
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
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
