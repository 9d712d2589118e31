CREATE FUNCTION syncular._r_operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.operations_watch_rerun;
$$;
