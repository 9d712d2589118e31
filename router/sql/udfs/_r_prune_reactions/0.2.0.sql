CREATE FUNCTION syncular._r_prune_reactions(partition text, completed_older_than_ms bigint, dead_letter_older_than_ms bigint, max_rows integer, now_ms bigint)
RETURNS integer LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune_reactions;
$$;
