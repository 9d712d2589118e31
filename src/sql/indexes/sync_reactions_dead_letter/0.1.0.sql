CREATE INDEX sync_reactions_dead_letter ON syncular.sync_reactions
  (partition, status, available_at_ms, idempotency_key);
