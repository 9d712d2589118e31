CREATE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]',
  running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  running bigint;
  stored bigint;
  epoch text;
  pending jsonb;
  decl jsonb;
  uncovered jsonb;
  refusal jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', d.partition, 'name', d.name)), '[]'::jsonb)
    INTO decl FROM syncular._checkpoint_declarations(serve_gate.checkpoints) d;

  -- one statement, one snapshot: running version, marker, log epoch, pending checkpoints
  WITH rv AS (
    SELECT coalesce(serve_gate.running_version,
                    (SELECT (s.compiled ->> 'version')::integer FROM syncular.sync_settings s
                      WHERE s.id = 1)) AS v
  )
  SELECT rv.v,
         coalesce((SELECT m.schema_version FROM syncular.sync_schema_meta m WHERE m.id = 1), 0),
         (SELECT r.log_epoch FROM syncular.sync_partition_registry r
           WHERE r.partition = serve_gate.partition),
         (SELECT coalesce(jsonb_agg(jsonb_build_object('partition', c.partition, 'name', c.name)
                                    ORDER BY c.partition COLLATE "C", c.name COLLATE "C"), '[]'::jsonb)
            FROM syncular.sync_backfill_checkpoints c
           WHERE c.schema_version = rv.v AND c.state <> 'activated')
    INTO running, stored, epoch, pending
    FROM rv;

  IF running IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no compiled schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  -- §4.2: schema first, then the first pending checkpoint (in (partition, name) order) not declared
  IF stored > running THEN
    refusal := jsonb_build_object('kind', 'schema',
      'details', jsonb_build_object('storedSchemaVersion', stored, 'runningSchemaVersion', running));
  ELSE
    SELECT p.value INTO uncovered
      FROM jsonb_array_elements(pending) WITH ORDINALITY p(value, ord)
     WHERE NOT decl @> jsonb_build_array(p.value)
     ORDER BY p.ord LIMIT 1;
    IF uncovered IS NOT NULL THEN
      refusal := jsonb_build_object('kind', 'checkpoint',
        'details', jsonb_build_object('partition', uncovered ->> 'partition', 'projection', uncovered ->> 'name'));
    END IF;
  END IF;
  IF refusal IS NOT NULL THEN
    refusal := refusal || jsonb_build_object('code', 'sync.schema_not_ready',
                                             'message', 'server schema is not ready for this request');
  END IF;

  RETURN jsonb_build_object('ready', refusal IS NULL,
                            'storedSchemaVersion', stored,
                            'runningSchemaVersion', running,
                            'logEpoch', epoch,
                            'pending', pending,
                            'refusal', refusal);
END
$$;
