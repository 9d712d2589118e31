CREATE TABLE syncular.sync_changes (
  partition    TEXT NOT NULL,
  commit_seq   BIGINT NOT NULL,
  idx          INTEGER NOT NULL,
  tbl          TEXT NOT NULL,
  row_id       TEXT NOT NULL,
  op           SMALLINT NOT NULL,      -- 1 = upsert, 2 = delete
  row_version  BIGINT,
  scopes       JSONB NOT NULL,
  payload      BYTEA,
  scope_var    TEXT,                   -- a one-change commit's scope index entry (see below)
  scope_value  TEXT,
  PRIMARY KEY (partition, commit_seq, idx)
);
