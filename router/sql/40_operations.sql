-- syncular_router install script, part 40: remote operations (REMOTE.md revision 1;
-- docs/operations-protocol.md).  operations_http and operations_watch_rerun are routed to the
-- shard of their partition like the round functions (part 10); the registrations are
-- cluster-wide calls (part 20), so every shard serves the same registry.

CREATE FUNCTION syncular._r_operations_http(request bytea, partition text, actor_id text, content_type text)
RETURNS TABLE(status integer, content_type text, body bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.operations_http;
$$;
COMMENT ON FUNCTION syncular._r_operations_http(bytea, text, text, text) IS
'Internal. PL/Proxy call of syncular.operations_http on the shard of partition.';

CREATE FUNCTION syncular._operations_http(request bytea, partition text, actor_id text, ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.status, r.content_type, r.body FROM syncular._r_operations_http($1, $2, $3, $4) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  IF syncular._shard_failed(st, msg) THEN
    RAISE LOG 'syncular_router: shard % unavailable for partition %: %',
      syncular.shard_of($2), quote_literal(coalesce($2, '')), msg;
    RETURN QUERY SELECT 503, 'application/json'::text, syncular._unavailable_body();
    RETURN;
  END IF;
  PERFORM syncular._route_error($2, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._operations_http(bytea, text, text, text) IS
'Internal. The body of the routed syncular.operations_http (a plpgsql function cannot name an argument and a result '
'column content_type both).';

-- LANGUAGE sql: the argument and the result column share the name content_type, as on the shard
CREATE FUNCTION syncular.operations_http(request bytea, partition text, actor_id text,
                                         content_type text DEFAULT 'application/vnd.syncular.operations.v1+json')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._operations_http($1, $2, $3, $4)
$$;
COMMENT ON FUNCTION syncular.operations_http(bytea, text, text, text) IS
'Routed: POST <mount>/operations as one row (REMOTE.md revision 1 §5), the shard''s syncular.operations_http on the '
'shard of partition (the same status, content type and body; a command commits on the shard when the call ends). '
'A shard PL/Proxy cannot reach answers 503 application/json with the sync.schema_not_ready body of '
'syncular.handle_http (details {"shardUnavailable": true}); the PL/Proxy message goes to the server log. Query '
'cancellation is re-raised. docs/operations-protocol.md, docs/scaling.md.';

CREATE FUNCTION syncular._r_operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.operations_watch_rerun;
$$;
COMMENT ON FUNCTION syncular._r_operations_watch_rerun(text, jsonb) IS
'Internal. PL/Proxy call of syncular.operations_watch_rerun on the shard of partition.';

CREATE FUNCTION syncular.operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.w, r.max_commit_seq, r.outcome, r.message FROM syncular._r_operations_watch_rerun($1, $2) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.operations_watch_rerun(text, jsonb) IS
'Routed: runs syncular.operations_watch_rerun (same arguments, rows and errors; see its COMMENT in the syncular '
'extension) on the shard of partition, one call for the whole batch; the rows come back in the shard''s order. A '
'shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details {"shardUnavailable": true}). REMOTE.md §6, '
'docs/operations-protocol.md "Live query watches".';

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
