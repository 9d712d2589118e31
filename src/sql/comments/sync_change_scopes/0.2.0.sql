COMMENT ON TABLE syncular.sync_change_scopes IS
'Inverted index over the log: which commits changed rows of a (table, scope variable, value), for incremental pulls. Pruned with the log.';
