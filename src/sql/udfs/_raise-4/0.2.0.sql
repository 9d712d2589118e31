CREATE FUNCTION syncular._raise(code text, message text, details jsonb, hint text)
RETURNS void LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_raise';
