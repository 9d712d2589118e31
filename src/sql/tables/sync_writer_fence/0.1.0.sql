-- RFC 0007 writer fence
CREATE TABLE syncular.sync_writer_fence (
  partition                TEXT PRIMARY KEY,
  required_writer_version  INTEGER NOT NULL
);
