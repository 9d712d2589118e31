-- RFC 0007 backfill checkpoints
CREATE TABLE syncular.sync_backfill_checkpoints (
  partition       TEXT NOT NULL,
  name            TEXT NOT NULL,
  schema_version  INTEGER NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('declared', 'backfilling', 'activated')),
  watermark       BIGINT NOT NULL DEFAULT 0,
  owner_epoch     BIGINT NOT NULL DEFAULT 0,
  observed_rows   BIGINT NOT NULL DEFAULT 0,
  updated_at_ms   BIGINT NOT NULL,
  PRIMARY KEY (partition, name)
);
