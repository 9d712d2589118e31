CREATE FUNCTION syncular.operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_watch_rerun';
