CREATE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_ensure_schema';
