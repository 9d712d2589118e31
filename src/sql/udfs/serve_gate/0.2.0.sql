CREATE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]',
  running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_serve_gate';
