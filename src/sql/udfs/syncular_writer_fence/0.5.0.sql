CREATE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_writer_fence';
