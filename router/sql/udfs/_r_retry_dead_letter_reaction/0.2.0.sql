CREATE FUNCTION syncular._r_retry_dead_letter_reaction(partition text, idempotency_key text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.retry_dead_letter_reaction;
$$;
