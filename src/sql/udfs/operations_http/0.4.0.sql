CREATE FUNCTION syncular.operations_http(request bytea, partition text, actor_id text,
                                         content_type text DEFAULT 'application/vnd.syncular.operations.v1+json')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_http';
