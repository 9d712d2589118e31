-- idempotency records (§6.3)
CREATE TABLE syncular.sync_push_results (
  partition         TEXT NOT NULL,
  client_id         TEXT NOT NULL,
  client_commit_id  TEXT NOT NULL,
  result            JSONB NOT NULL,
  PRIMARY KEY (partition, client_id, client_commit_id)
);
