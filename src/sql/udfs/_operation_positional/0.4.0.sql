CREATE FUNCTION syncular._operation_positional(sql text, names text[]) RETURNS text
LANGUAGE C IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_positional';
