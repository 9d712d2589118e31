CREATE FUNCTION syncular._r_serve_gate(partition text, checkpoints jsonb, running_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.serve_gate;
$$;
