COMMENT ON FUNCTION syncular._cluster_dispatch(text, jsonb) IS
'Internal. Runs one cluster-wide call by name (ensure_schema, set_scope_resolver, set_row_validator, '
'set_commit_validator, set_reaction_planner, register_query, register_queries, register_command) with its arguments '
'from a JSON object. See syncular.cluster_call.';
