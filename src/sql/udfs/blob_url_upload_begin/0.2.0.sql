CREATE FUNCTION syncular.blob_url_upload_begin(blob_id text, token text, byte_length bigint)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_url_upload_begin';
