-- syncular install script, part 12: undoing a registration without dropping the extension.
--
-- syncular.unregister_schema(app_schema text, drop_tables boolean DEFAULT false) returns the
-- database to the state of a fresh CREATE EXTENSION: no registered schema, no hooks, no log, no
-- partitions.  Everything the extension keeps about the registered schema goes in one
-- transaction; the synced tables themselves are app data and are dropped only on request.

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
COMMENT ON FUNCTION syncular.unregister_schema(text, boolean) IS
$$Undoes syncular.ensure_schema without dropping the extension (e.g. a test registration): afterwards the database is as after CREATE EXTENSION syncular and ensure_schema registers afresh.
Arguments: app_schema = the registered app schema, named to confirm (the guard against a stray call); drop_tables = also DROP TABLE every synced table of the registration (RESTRICT: a dependent view or foreign key fails the call and nothing is undone); false (default) keeps them as plain tables with their _sync_* columns, and a later ensure_schema of the same table names then refuses with sync.storage.schema_invalid (rule table_exists) until they are dropped or renamed.
Takes LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE (waits for running pushes and ensure_schema), then empties every catalog table of 00_catalog.sql: the registration and compiled schema (sync_settings, sync_schema_meta), the hooks (scope resolver, validators, reaction planner), the log (commits, changes, scope indexes, tombstones, idempotency records), reactions, client records and their auth leases, armed test faults (sync_faults), RFC 0007 checkpoints and writer fences, partition counters and log epochs (a returning client gets a new epoch and resets, SPEC §2.1). Hook functions, the app schema and the extension stay. In the caller's transaction: a ROLLBACK undoes it.
Returns {appSchema, schemaVersion, droppedTables, keptTables, partitions, commits} (partitions and commits discarded).
Errors: sync.storage.schema_not_registered (55000) when nothing is registered; sync.storage.schema_invalid (22023; details {rule: "app_schema", registeredSchema, appSchema}) when app_schema is not the registered schema; both with an errhint. Owner-only (EXECUTE revoked from PUBLIC).$$;
