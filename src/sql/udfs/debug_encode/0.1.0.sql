CREATE FUNCTION syncular.debug_encode(doc jsonb)
RETURNS bytea LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_encode';
