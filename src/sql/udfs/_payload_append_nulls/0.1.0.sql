-- C helpers (src/layout.c)
CREATE FUNCTION syncular._payload_append_nulls(payload bytea, old_ncols integer, new_ncols integer)
RETURNS bytea
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'syncular_payload_append_nulls';
