CREATE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_compile_schema';
