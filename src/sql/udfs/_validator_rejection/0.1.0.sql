CREATE FUNCTION syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d       jsonb;
  code    jsonb;
  msg     jsonb;
  det     jsonb;
  idx     jsonb;
  result  jsonb;
BEGIN
  IF sqlstate IS DISTINCT FROM 'SY001' OR detail IS NULL THEN
    RETURN NULL;
  END IF;
  BEGIN
    d := detail::jsonb;
  EXCEPTION WHEN invalid_text_representation OR untranslatable_character OR program_limit_exceeded THEN
    RETURN NULL;
  END;
  IF jsonb_typeof(d) <> 'object' THEN
    RETURN NULL;
  END IF;

  code := d -> 'code';
  IF code IS NULL OR jsonb_typeof(code) <> 'string' OR code #>> '{}' = ''
     OR starts_with(code #>> '{}', 'sync.') OR starts_with(code #>> '{}', 'blob.')
     OR starts_with(code #>> '{}', 'operation.') OR starts_with(code #>> '{}', 'presence.')
     OR starts_with(code #>> '{}', 'client.') THEN
    RETURN NULL;
  END IF;

  msg := d -> 'message';
  IF msg IS NOT NULL AND jsonb_typeof(msg) NOT IN ('string', 'null') THEN
    RETURN NULL;
  END IF;
  IF msg IS NULL OR jsonb_typeof(msg) = 'null' OR msg #>> '{}' = '' THEN
    msg := to_jsonb(coalesce(nullif(_validator_rejection.message, ''), code #>> '{}'));
  END IF;
  result := jsonb_build_object('code', code, 'message', msg);

  det := d -> 'details';
  IF det IS NOT NULL AND jsonb_typeof(det) <> 'null' THEN
    IF jsonb_typeof(det) <> 'object'
       OR octet_length(convert_to(syncular._compact_json(det), 'UTF8')) > 4096 THEN
      RETURN NULL;
    END IF;
    result := result || jsonb_build_object('details', det);
  END IF;

  idx := d -> 'opIndex';
  IF idx IS NOT NULL AND jsonb_typeof(idx) <> 'null' THEN
    IF jsonb_typeof(idx) <> 'number'
       OR (idx #>> '{}')::numeric <> trunc((idx #>> '{}')::numeric)
       OR (idx #>> '{}')::numeric < 0 OR (idx #>> '{}')::numeric > 2147483647 THEN
      RETURN NULL;
    END IF;
    result := result || jsonb_build_object('opIndex', (idx #>> '{}')::numeric::integer);
  END IF;
  RETURN result;
END
$$;
