-- Parses stored layouts text; anything unreadable or not an object counts as {} (reference).
CREATE FUNCTION syncular._parse_layouts(layouts text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  j jsonb;
BEGIN
  BEGIN
    j := layouts::jsonb;
  EXCEPTION WHEN others THEN
    RETURN '{}'::jsonb;
  END;
  IF j IS NULL OR jsonb_typeof(j) <> 'object' THEN
    RETURN '{}'::jsonb;
  END IF;
  RETURN j;
END
$$;
