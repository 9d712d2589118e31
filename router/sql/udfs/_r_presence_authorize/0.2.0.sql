CREATE FUNCTION syncular._r_presence_authorize(partition text, actor_id text, client_id text, scope_keys text[])
RETURNS text[] LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.presence_authorize;
$$;
