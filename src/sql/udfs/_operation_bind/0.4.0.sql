CREATE FUNCTION syncular._operation_bind(sql text, param_types regtype[], tables text[], columns text[])
RETURNS text LANGUAGE C VOLATILE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_bind';
