CREATE INDEX sync_reactions_completed ON syncular.sync_reactions
  (partition, status, completed_at_ms, idempotency_key);
