-- LANGUAGE sql: the argument and the result column share the name content_type, as on the shard
CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http($1, $2, $3, $4)
$$;
