COMMENT ON COLUMN syncular.sync_change_scopes.partition IS 'Partition (tenant) of the row: every sync state is per partition (SPEC §2).';
COMMENT ON COLUMN syncular.sync_change_scopes.tbl IS 'Synced table name, as in the registered schema.';
COMMENT ON COLUMN syncular.sync_change_scopes.var IS 'Scope variable name (the {var} of a scope pattern).';
COMMENT ON COLUMN syncular.sync_change_scopes.value IS 'Scope value of that variable.';
COMMENT ON COLUMN syncular.sync_change_scopes.commit_seq IS 'Commit whose changes carry this scope value (index for incremental pulls).';
