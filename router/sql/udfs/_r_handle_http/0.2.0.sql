CREATE FUNCTION syncular._r_handle_http(request bytea, partition text, actor_id text, content_type text)
RETURNS TABLE(status integer, content_type text, body bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle_http;
$$;
