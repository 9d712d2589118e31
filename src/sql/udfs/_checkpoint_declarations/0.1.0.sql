CREATE FUNCTION syncular._checkpoint_declarations(checkpoints jsonb)
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
