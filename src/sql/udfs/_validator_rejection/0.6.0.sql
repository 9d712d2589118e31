CREATE FUNCTION syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
RETURNS jsonb LANGUAGE C IMMUTABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_validator_rejection';
