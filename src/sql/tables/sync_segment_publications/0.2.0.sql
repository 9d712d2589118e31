-- One publication per descriptor context (§5.1): who may download the bytes, until when.
CREATE UNLOGGED TABLE syncular.sync_segment_publications (
  segment_id       TEXT NOT NULL,
  partition        TEXT NOT NULL,
  log_epoch        TEXT NOT NULL,
  tbl              TEXT NOT NULL,
  schema_version   INTEGER NOT NULL,
  media_type       SMALLINT NOT NULL,
  scope_digest     TEXT NOT NULL,
  grant_digest     TEXT NOT NULL,
  as_of_commit_seq BIGINT NOT NULL,
  row_cursor       TEXT,
  page_rows        INTEGER NOT NULL,
  next_row_cursor  TEXT,
  created_at_ms    BIGINT NOT NULL,
  expires_at_ms    BIGINT NOT NULL,
  CONSTRAINT sync_segment_publications_key UNIQUE NULLS NOT DISTINCT (partition, log_epoch, tbl, schema_version, media_type, scope_digest,
                                                             grant_digest, as_of_commit_seq, row_cursor, page_rows)
);
