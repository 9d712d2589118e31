CREATE FUNCTION syncular.now_ms() RETURNS bigint
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_now_ms';
