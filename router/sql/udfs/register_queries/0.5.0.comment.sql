COMMENT ON FUNCTION syncular.register_queries(jsonb, integer, jsonb) IS
'Cluster-wide syncular.register_queries (the typegen queries IR): every shard registers the same queries, all or '
'nothing like syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors as '
'syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer). docs/operations-protocol.md.';
