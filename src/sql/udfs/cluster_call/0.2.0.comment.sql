COMMENT ON FUNCTION syncular.cluster_call(text, jsonb, boolean) IS
'One shard''s part of a cluster-wide call made through the syncular_router extension (docs/scaling.md). '
'call: "ensure_schema" (args {ir, checkpoints?, appSchema?}; returns ensure_schema''s result; the app schema is '
'appSchema, else the registered one, else public; a checkpoint declaration carrying "shardDatabase" is installed only '
'when that is current_database(), the member removed), "set_scope_resolver" / "set_commit_validator" / '
'"set_reaction_planner" (args {fn}: a schema-qualified regprocedure text, or null to unregister), '
'"set_row_validator" (args {table, fn}); the setters return {"call": call}. apply false: the check round, '
'which runs the call and rolls it back, returning what it would return and raising what it would raise '
'(writes nothing; an ensure_schema bump does its DDL and row rewrites, then undoes them). Raises what the '
'named function raises, and sync.invalid_request (22023) for an unknown call or args that are not an object. '
'Owner-only, like the calls it runs. RFC 0007 §3.4 (ensureSchema), hooks.md.';
