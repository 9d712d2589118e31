CREATE FUNCTION syncular._capture_log() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_log' LANGUAGE C
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
