CREATE TABLE syncular.sync_commits (
  partition         TEXT NOT NULL,
  commit_seq        BIGINT NOT NULL,
  client_id         TEXT NOT NULL,
  client_commit_id  TEXT NOT NULL,
  actor_id          TEXT NOT NULL,
  created_at_ms     BIGINT NOT NULL,
  writer_version    BIGINT,            -- RFC 0007 writer fence; must stay nullable, no default
  result            JSONB,             -- a pushed commit's stored result (idempotency, §6.3)
  PRIMARY KEY (partition, commit_seq)
);
