CREATE FUNCTION syncular.operation_get_row(tbl text, row_id text) RETURNS jsonb
LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operation_get_row';
