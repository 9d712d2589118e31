-- PostgreSQL projection type of a schema column type (§6).
CREATE FUNCTION syncular._pg_type(coltype text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE coltype
    WHEN 'string' THEN 'text' WHEN 'blob_ref' THEN 'text'
    WHEN 'integer' THEN 'bigint' WHEN 'float' THEN 'double precision'
    WHEN 'boolean' THEN 'boolean' WHEN 'json' THEN 'jsonb'
    WHEN 'bytes' THEN 'bytea' WHEN 'crdt' THEN 'bytea' END
$$;
