COMMENT ON FUNCTION syncular.register_command(text, text, text) IS
'Cluster-wide syncular.register_command: authorize and command as schema-qualified signature texts, resolved on each '
'shard. All or nothing like syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors as '
'syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer). docs/operations-protocol.md.';
