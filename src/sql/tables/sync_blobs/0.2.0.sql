CREATE TABLE syncular.sync_blobs (
  partition      TEXT NOT NULL,
  blob_id        TEXT NOT NULL CHECK (blob_id ~ '^sha256:[0-9a-f]{64}$'),
  byte_length    BIGINT NOT NULL CHECK (byte_length >= 0),
  uploader       TEXT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  upload_id      BIGINT NOT NULL UNIQUE,
  PRIMARY KEY (partition, blob_id)
);
