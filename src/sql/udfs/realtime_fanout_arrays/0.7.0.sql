CREATE FUNCTION syncular.realtime_fanout_arrays(partition text, commit_seq bigint, conn_ids bigint[],
                                                cursors bigint[], registrations text[])
RETURNS TABLE(conn bigint, action text, reason text, body bytea, next_cursor bigint)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_fanout_arrays';
