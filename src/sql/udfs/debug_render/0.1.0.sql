CREATE FUNCTION syncular.debug_render(message bytea)
RETURNS jsonb LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_render';
