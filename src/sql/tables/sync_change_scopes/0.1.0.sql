-- inverted index over the log
CREATE TABLE syncular.sync_change_scopes (
  partition   TEXT NOT NULL,
  tbl         TEXT NOT NULL,
  var         TEXT NOT NULL,
  value       TEXT NOT NULL,
  commit_seq  BIGINT NOT NULL,
  PRIMARY KEY (partition, tbl, var, value, commit_seq)
);
