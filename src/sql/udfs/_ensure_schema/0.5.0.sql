CREATE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
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

  -- the bump's own DDL on synced tables passes the DDL guard (33_ddl_guard.sql) until step 4
  PERFORM syncular._synced_ddl(true);

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

  PERFORM syncular._synced_ddl(false);

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
