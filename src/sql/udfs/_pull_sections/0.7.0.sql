CREATE FUNCTION syncular._pull_sections(response bytea) RETURNS jsonb
LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_pull_sections';
