CREATE FUNCTION syncular.encode_sparse_row(tbl text, "row" jsonb)
RETURNS bytea LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_encode_sparse_row';
