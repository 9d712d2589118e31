-- LANGUAGE sql: the argument and the result column share the name content_type, as on the shard
CREATE FUNCTION syncular.operations_http(request bytea, partition text, actor_id text,
                                         content_type text DEFAULT 'application/vnd.syncular.operations.v1+json')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._operations_http($1, $2, $3, $4)
$$;
