CREATE FUNCTION syncular.put_blob(partition text, actor_id text, blob_id text, body bytea)
RETURNS jsonb LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_put_blob';
