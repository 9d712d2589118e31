CREATE FUNCTION syncular.readiness(checkpoints jsonb DEFAULT '[]')
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
