CREATE FUNCTION syncular.realtime_ack_many(partition text, actor_ids text[], client_ids text[],
                                           cursors bigint[], log_epochs text[])
RETURNS bigint LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_ack_many';
