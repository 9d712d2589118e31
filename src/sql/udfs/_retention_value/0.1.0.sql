-- A non-negative integer retention value (ms or a count), or the default.
CREATE FUNCTION syncular._retention_value(retention jsonb, key text, dflt bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v jsonb := retention -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN dflt;
  END IF;
  IF jsonb_typeof(v) <> 'number' OR v::text::numeric <> trunc(v::text::numeric)
     OR v::text::numeric < 0 OR v::text::numeric > 9007199254740991 THEN
    PERFORM syncular._raise('sync.storage.invalid_limit',
      'retention values must be non-negative integers', jsonb_build_object('key', key, 'value', v));
  END IF;
  RETURN v::text::bigint;
END
$$;
