CREATE FUNCTION syncular._serve_gate_check(partition text, running_version integer,
  token jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  raw text := current_setting('syncular.checkpoints', true);
  decl jsonb := '[]';
  gate jsonb;
  now_token jsonb;
BEGIN
  IF raw IS NOT NULL AND btrim(raw) <> '' THEN
    BEGIN
      decl := raw::jsonb;
    EXCEPTION WHEN invalid_text_representation THEN
      PERFORM syncular._raise('sync.storage.invalid_checkpoints',
        'the syncular.checkpoints setting is not valid JSON', jsonb_build_object('reason', 'not_json'));
    END;
  END IF;
  gate := syncular.serve_gate(_serve_gate_check.partition, decl, _serve_gate_check.running_version);
  IF NOT (gate ->> 'ready')::boolean THEN
    PERFORM syncular._raise('sync.schema_not_ready', 'server schema is not ready for this request',
                            gate -> 'refusal' -> 'details');
  END IF;
  -- §4.2 serveGateTokenChanged: after schema and checkpoint, the token of an earlier read
  now_token := jsonb_build_object('storedSchemaVersion', gate -> 'storedSchemaVersion',
                                  'logEpoch', gate -> 'logEpoch');
  IF _serve_gate_check.token IS NOT NULL AND jsonb_typeof(_serve_gate_check.token) <> 'null'
     AND EXISTS (SELECT 1 FROM jsonb_each(_serve_gate_check.token) t
                  WHERE t.key IN ('storedSchemaVersion', 'logEpoch')
                    AND t.value IS DISTINCT FROM now_token -> t.key) THEN
    PERFORM syncular._raise('sync.schema_not_ready', 'server schema is not ready for this request',
                            '{"logEpochChanged": true}'::jsonb);
  END IF;
  RETURN now_token;
END
$$;
