COMMENT ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer) IS
'Cluster-wide syncular.register_query (its arguments; authorize as the schema-qualified signature text, resolved on '
'each shard): every shard registers the same query, all or nothing like syncular.ensure_schema; returns {"shards": '
'[{"database", "result"}, ...]}. Errors: the shard''s (sync.storage.operation_invalid, sync.storage.hook_signature, '
'22023), or sync.schema_not_ready (55000) for an unreachable shard. docs/operations-protocol.md.';
