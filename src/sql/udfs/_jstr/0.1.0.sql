-- The string member `key` of `j`, or NULL when absent or not a JSON string.
CREATE FUNCTION syncular._jstr(j jsonb, key text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(j -> key) = 'string' THEN j ->> key END
$$;
