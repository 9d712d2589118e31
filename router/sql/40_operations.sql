-- syncular_router install script, part 40: remote operations (REMOTE.md revision 1;
-- docs/operations-protocol.md).  operations_http and operations_watch_rerun are routed to the
-- shard of their partition like the round functions (part 15,
-- router/routed.txt); the registrations are
-- cluster-wide calls (part 20), so every shard serves the same registry.

CREATE FUNCTION syncular.register_query(operation_id text, sql text, columns jsonb, tables text[],
                                        params jsonb DEFAULT '[]', mode text DEFAULT 'scoped',
                                        coverage jsonb DEFAULT '[]', authorize text DEFAULT NULL,
                                        max_rows integer DEFAULT 1000)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_query', jsonb_build_object('operationId', operation_id, 'sql', sql,
    'columns', columns, 'tables', to_jsonb(tables), 'params', params, 'mode', mode, 'coverage', coverage,
    'authorize', authorize, 'maxRows', max_rows))
$$;
COMMENT ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer) IS
'Cluster-wide syncular.register_query (its arguments; authorize as the schema-qualified signature text, resolved on '
'each shard): every shard registers the same query, all or nothing like syncular.ensure_schema; returns {"shards": '
'[{"database", "result"}, ...]}. Errors: the shard''s (sync.storage.operation_invalid, sync.storage.hook_signature, '
'22023), or sync.schema_not_ready (55000) for an unreachable shard. docs/operations-protocol.md.';

CREATE FUNCTION syncular.register_queries(ir jsonb, max_rows integer DEFAULT 1000, privileged jsonb DEFAULT '{}')
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_queries', jsonb_build_object('ir', ir, 'maxRows', max_rows,
                                                                  'privileged', privileged))
$$;
COMMENT ON FUNCTION syncular.register_queries(jsonb, integer, jsonb) IS
'Cluster-wide syncular.register_queries (the typegen queries IR): every shard registers the same queries, all or '
'nothing like syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors as '
'syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer). docs/operations-protocol.md.';

CREATE FUNCTION syncular.register_command(operation_id text, authorize text, command text)
RETURNS jsonb LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT syncular._cluster('register_command', jsonb_build_object('operationId', operation_id,
                                                                  'authorize', authorize, 'command', command))
$$;
COMMENT ON FUNCTION syncular.register_command(text, text, text) IS
'Cluster-wide syncular.register_command: authorize and command as schema-qualified signature texts, resolved on each '
'shard. All or nothing like syncular.ensure_schema; returns {"shards": [{"database", "result"}, ...]}. Errors as '
'syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer). docs/operations-protocol.md.';
