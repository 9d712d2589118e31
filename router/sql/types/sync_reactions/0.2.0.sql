-- the row type claim_reactions returns (the shard's table syncular.sync_reactions)
CREATE TYPE syncular.sync_reactions AS (
  partition                TEXT,
  idempotency_key          TEXT,
  type                     TEXT,
  version                  INTEGER,
  payload                  JSONB,
  source_client_id         TEXT,
  source_client_commit_id  TEXT,
  source_commit_seq        BIGINT,
  created_at_ms            BIGINT,
  available_at_ms          BIGINT,
  status                   TEXT,
  attempts                 INTEGER,
  max_attempts             INTEGER,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB
);
