CREATE FUNCTION syncular._r_push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(p_partition);
  TARGET syncular.push;
$$;
