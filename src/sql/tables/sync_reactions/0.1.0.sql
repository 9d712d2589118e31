-- durable reactions (§6.9)
CREATE TABLE syncular.sync_reactions (
  partition                TEXT NOT NULL,
  idempotency_key          TEXT NOT NULL,
  type                     TEXT NOT NULL,
  version                  INTEGER NOT NULL,
  payload                  JSONB NOT NULL,
  source_client_id         TEXT NOT NULL,
  source_client_commit_id  TEXT NOT NULL,
  source_commit_seq        BIGINT NOT NULL,
  created_at_ms            BIGINT NOT NULL,
  available_at_ms          BIGINT NOT NULL,
  status                   TEXT NOT NULL
    CHECK (status IN ('pending', 'leased', 'completed', 'dead-letter')),
  attempts                 INTEGER NOT NULL,
  max_attempts             INTEGER NOT NULL,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB,
  PRIMARY KEY (partition, idempotency_key)
);
