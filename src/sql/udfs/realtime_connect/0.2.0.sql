CREATE FUNCTION syncular.realtime_connect(partition text, actor_id text, client_id text)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_connect';
