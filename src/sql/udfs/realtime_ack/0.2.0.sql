CREATE FUNCTION syncular.realtime_ack(partition text, actor_id text, client_id text, cursor bigint,
                                      log_epoch text)
RETURNS boolean LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_realtime_ack';
