CREATE TABLE syncular.sync_tombstones (
  partition   TEXT NOT NULL,
  tbl         TEXT NOT NULL,
  row_id      TEXT NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, row_id)
);
