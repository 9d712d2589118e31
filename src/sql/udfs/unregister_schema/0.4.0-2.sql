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
