-- inverted index over current rows
CREATE TABLE syncular.sync_row_scopes (
  partition  TEXT NOT NULL,
  tbl        TEXT NOT NULL,
  var        TEXT NOT NULL,
  value      TEXT NOT NULL,
  row_id     TEXT NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, row_id)
);
