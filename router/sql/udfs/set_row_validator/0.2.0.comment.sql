COMMENT ON FUNCTION syncular.set_row_validator(text, text) IS
'Cluster-wide syncular.set_row_validator(tbl, fn): fn as in syncular.set_scope_resolver(text). All or nothing; '
'errors as syncular.set_scope_resolver(text). hooks.md.';
