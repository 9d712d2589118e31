CREATE INDEX sync_reactions_due ON syncular.sync_reactions
  (partition, status, available_at_ms, created_at_ms, idempotency_key);
