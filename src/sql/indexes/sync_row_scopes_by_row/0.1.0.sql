CREATE INDEX sync_row_scopes_by_row ON syncular.sync_row_scopes (partition, tbl, row_id);
