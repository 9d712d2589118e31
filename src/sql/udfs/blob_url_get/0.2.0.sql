CREATE FUNCTION syncular.blob_url_get(blob_id text, token text)
RETURNS TABLE(status integer, content_type text, byte_length bigint, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_get';
