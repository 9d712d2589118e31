-- True when layout entries a and b (jsonb {name, type, nullable}) are equal; NULLs are unequal.
CREATE FUNCTION syncular._layout_entry_equal(a jsonb, b jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(a IS NOT NULL AND b IS NOT NULL
                  AND a -> 'name' = b -> 'name' AND a -> 'type' = b -> 'type'
                  AND a -> 'nullable' = b -> 'nullable', false)
$$;
