CREATE FUNCTION syncular._serve_gate_check(partition text, running_version integer,
  token jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_serve_gate_check';
