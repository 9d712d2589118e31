CREATE FUNCTION syncular._route_error(partition text, sqlstate text, message text, detail text, hint text,
                                      cluster_wide boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m text[];
BEGIN
  detail := nullif(detail, '');
  hint := nullif(hint, '');
  IF syncular._shard_failed(sqlstate, message) THEN
    -- the reason goes to the server log only; the caller gets the catalogue error
    IF cluster_wide THEN
      RAISE LOG 'syncular_router: a shard is unavailable for a cluster-wide call: %', message;
    ELSE
      RAISE LOG 'syncular_router: shard % unavailable for partition %: %',
        syncular.shard_of(partition), quote_literal(coalesce(partition, '')), message;
    END IF;
    RAISE EXCEPTION 'server schema is not ready for this request' USING ERRCODE = '55000',
      DETAIL = '{"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}';
  END IF;
  m := regexp_match(message, '^\S+\(\d+\): \[[^]]*\] REMOTE [A-Z]+: (.*)$', 's');
  IF m IS NOT NULL THEN
    message := m[1];
    detail := regexp_replace(detail, '^Remote detail: ', '');
    hint := regexp_replace(hint, '^Remote hint: ', '');
  END IF;
  -- re-raise the shard's error as the shard raised it (SQLSTATE, message, DETAIL, HINT)
  IF detail IS NULL AND hint IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
  ELSIF hint IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail;
  ELSIF detail IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
  ELSE
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, DETAIL = detail, HINT = hint;
  END IF;
END
$$;
