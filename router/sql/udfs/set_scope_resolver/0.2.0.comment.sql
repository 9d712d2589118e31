COMMENT ON FUNCTION syncular.set_scope_resolver(text) IS
'Cluster-wide syncular.set_scope_resolver: fn is the schema-qualified signature text (''app.allowed(text,text,text)''), '
'resolved on each shard (the router does not have the app''s functions), NULL to unregister. All or nothing like '
'syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors: the shard''s (an unknown function: '
'42883; a bad signature: the hook check''s catalogue error), or sync.schema_not_ready (55000) for an unreachable '
'shard. hooks.md.';
