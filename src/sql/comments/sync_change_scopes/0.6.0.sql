COMMENT ON TABLE syncular.sync_change_scopes IS
'Inverted index over the log: which commits changed rows of a (table, scope variable, value), for incremental pulls. A commit of one change whose scopes are one (variable, value) pair has its entry in the change row instead (sync_changes.scope_var / scope_value, index sync_changes_by_scope); pulls read both. Pruned with the log.';
