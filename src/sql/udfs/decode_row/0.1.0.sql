CREATE FUNCTION syncular.decode_row(tbl text, payload bytea)
RETURNS jsonb LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_decode_row';
