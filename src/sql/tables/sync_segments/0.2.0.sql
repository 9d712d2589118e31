-- One entry per content address: segment_id = 'sha256:' || hex(sha256(bytes)) (§5.1).
CREATE UNLOGGED TABLE syncular.sync_segments (
  segment_id     TEXT PRIMARY KEY,
  media_type     SMALLINT NOT NULL CHECK (media_type IN (1, 2)),
  byte_length    BIGINT NOT NULL,
  row_count      BIGINT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  bytes          BYTEA NOT NULL
);
