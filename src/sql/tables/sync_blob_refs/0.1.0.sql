CREATE TABLE syncular.sync_blob_refs (
  partition  TEXT NOT NULL,
  tbl        TEXT NOT NULL,
  row_id     TEXT NOT NULL,
  blob_id    TEXT NOT NULL,
  PRIMARY KEY (partition, tbl, row_id, blob_id)
);
