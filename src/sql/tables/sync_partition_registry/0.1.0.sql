-- holds the log epoch (§2.1)
CREATE TABLE syncular.sync_partition_registry (
  partition                 TEXT PRIMARY KEY,
  log_epoch                 TEXT NOT NULL,
  epoch_required            BOOLEAN NOT NULL DEFAULT FALSE,
  last_authenticated_at_ms  BIGINT NOT NULL
);
