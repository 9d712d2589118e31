-- The server secret of signed segment URLs (§5.4): owner-only like every catalog table.
CREATE TABLE syncular.sync_segment_secret (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  key  BYTEA NOT NULL CHECK (length(key) >= 32)
);
