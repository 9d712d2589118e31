CREATE FUNCTION syncular.segment_download(segment_id text, partition text, actor_id text,
                                          requested_scopes jsonb,
                                          if_none_match text DEFAULT NULL,
                                          accept_encoding text DEFAULT NULL,
                                          client_id text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_download';
