COMMENT ON FUNCTION syncular.set_commit_validator(text) IS
'Cluster-wide syncular.set_commit_validator: fn as in syncular.set_scope_resolver(text). All or nothing; errors as '
'syncular.set_scope_resolver(text). hooks.md.';
