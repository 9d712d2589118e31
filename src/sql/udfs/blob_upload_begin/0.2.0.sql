CREATE FUNCTION syncular.blob_upload_begin(partition text, actor_id text, blob_id text,
                                           byte_length bigint DEFAULT NULL)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_begin';
