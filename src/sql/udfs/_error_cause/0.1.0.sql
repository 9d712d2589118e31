-- the cause object {code, message, details} of a caught catalogue error, or NULL when the error
-- does not carry this extension's JSON detail
CREATE FUNCTION syncular._error_cause(message text, detail text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  d jsonb;
BEGIN
  IF detail IS NULL OR detail !~ '^\{"code": ' THEN
    RETURN NULL;
  END IF;
  d := detail::jsonb;
  RETURN jsonb_build_object('code', d ->> 'code', 'message', message, 'details', d -> 'details');
END
$$;
