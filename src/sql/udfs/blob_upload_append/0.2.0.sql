CREATE FUNCTION syncular.blob_upload_append(upload bigint, chunk bytea)
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_blob_upload_append';
