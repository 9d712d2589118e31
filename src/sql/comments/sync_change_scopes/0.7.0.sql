COMMENT ON TABLE syncular.sync_change_scopes IS
'Inverted index over the log: which commits changed rows of a (table, scope variable, value), for incremental pulls. A commit whose change in its commit row has one (variable, value) pair keeps that entry in the commit row instead (sync_commits.scope_var / scope_value, index sync_commits_by_scope); pulls read both. Pruned with the log.';
