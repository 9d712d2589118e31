CREATE FUNCTION syncular.handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle';
