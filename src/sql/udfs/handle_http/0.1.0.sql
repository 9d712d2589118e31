CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_handle_http';
