CREATE FUNCTION syncular.blob_get(partition text, actor_id text, blob_id text,
                                  client_id text DEFAULT '')
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_get';
