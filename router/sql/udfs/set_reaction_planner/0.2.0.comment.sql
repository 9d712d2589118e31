COMMENT ON FUNCTION syncular.set_reaction_planner(text) IS
'Cluster-wide syncular.set_reaction_planner: fn as in syncular.set_scope_resolver(text). All or nothing; errors as '
'syncular.set_scope_resolver(text). hooks.md.';
