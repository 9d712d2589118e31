CREATE FUNCTION syncular.segment_url_download(segment_id text, st text,
                                              if_none_match text DEFAULT NULL,
                                              accept_encoding text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_url_download';
