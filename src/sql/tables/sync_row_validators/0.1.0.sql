CREATE TABLE syncular.sync_row_validators (
  tbl  TEXT PRIMARY KEY,
  fn   REGPROCEDURE NOT NULL
);
