CREATE FUNCTION syncular._operation_type(t text) RETURNS regtype
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE t
    WHEN 'string' THEN 'text' WHEN 'integer' THEN 'bigint' WHEN 'float' THEN 'double precision'
    WHEN 'number' THEN 'double precision' WHEN 'boolean' THEN 'boolean' WHEN 'json' THEN 'jsonb'
    WHEN 'bytes' THEN 'bytea' END::regtype
$$;
