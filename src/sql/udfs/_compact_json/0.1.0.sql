-- Compact JSON text of a jsonb value: jsonb's own rendering (keys in jsonb order) without the
-- blanks jsonb puts after ',' and ':' outside strings.
CREATE FUNCTION syncular._compact_json(j jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT regexp_replace(j::text, '("(?:[^"\\]|\\.)*")|(,) |(:) ', '\1\2\3', 'g')
$$;
