CREATE TABLE syncular.sync_blob_chunks (
  upload_id  BIGINT NOT NULL,
  seq        INTEGER NOT NULL,
  data       BYTEA NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
