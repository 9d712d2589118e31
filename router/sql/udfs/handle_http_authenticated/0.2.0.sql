CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http_authenticated($1, $2, $3, $4, $5, $6)
$$;
