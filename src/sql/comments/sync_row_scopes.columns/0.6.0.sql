COMMENT ON COLUMN syncular.sync_row_scopes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_row_scopes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_row_scopes.var IS 'Scope variable name (the {var} of a scope pattern).';
COMMENT ON COLUMN syncular.sync_row_scopes.value IS 'Scope value of that variable.';
COMMENT ON COLUMN syncular.sync_row_scopes.row_id IS 'Primary key of the current row carrying this scope value (inverted index for bootstrap); COLLATE "C", so the primary key orders a value''s row ids in the byte order of bootstrap pages.';
