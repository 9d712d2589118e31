-- Bootstrap pages walk row ids in byte order (COLLATE "C", a project decision); this index
-- serves that order whatever the database's default collation.
CREATE INDEX sync_row_scopes_paging ON syncular.sync_row_scopes
  (partition, tbl, var, value, row_id COLLATE "C");
