-- per-partition counters; the push serializes on this row (FOR UPDATE) and the schema bump takes
-- LOCK TABLE ... IN EXCLUSIVE MODE on it.
CREATE TABLE syncular.sync_partitions (
  partition       TEXT PRIMARY KEY,
  max_commit_seq  BIGINT NOT NULL DEFAULT 0,
  horizon_seq     BIGINT NOT NULL DEFAULT 0
);
