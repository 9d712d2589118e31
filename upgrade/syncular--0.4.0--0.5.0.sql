-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit

-- Live query watches (REMOTE.md §6): the batched rerun of a partition's watches (65_operations.sql).
CREATE FUNCTION syncular.operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_watch_rerun';
COMMENT ON FUNCTION syncular.operations_watch_rerun(text, jsonb) IS
$$The database half of live query watches (REMOTE.md revision 1 §6; docs/operations-protocol.md "Live query watches"): one call per partition and wake-up reruns, in ONE snapshot, every watch of the batch whose answer may have changed since its last snapshot, and only those.
partition: what host authentication decided for the watches' sockets; watches: a JSON array of {w, seq, actorId, message}: w = the caller's integer handle of the watch, seq = the maxCommitSeq of its last snapshot (-1: none yet, the registration snapshot, which also checks the clientId as §1), actorId = the authenticated actor, message = the client's encoded watch message {revision: 1, kind: "watch", watchId, clientId, operationId, params} (the tagged value encoding of §4).
A watch reruns when it has no snapshot yet, or when a change committed after its seq (up to the partition's head, read in the same snapshot) is on one of the query's tables and, for a scoped query, its row carries every scope value the query covers on that table: a commit on another scope value (another list) does not rerun it. Past 10000 changes in the window every watch of the window reruns.
Returns one row per watch, in batch order: w; max_commit_seq = the maxCommitSeq the watch's answer now reflects (the partition's head when it did not rerun); outcome = 'unchanged' (not rerun: no change of the window can alter its answer), 'snapshot' or 'error'; message = NULL when unchanged, else the encoded server message {revision: 1, kind: "snapshot", watchId, operationId, rows, maxCommitSeq} (the same query, authorization, partition binding and maxRows as syncular.operations_http) or {revision: 1, kind: "watch_error", watchId, code, message, retryable} with the codes of operations_http (operation.invalid_request for a message that is not a watch message, operation.unknown, operation.forbidden, operation.result_too_large, operation.query_failed, operation.execution_failed, sync.invalid_client_id); each rerun runs in its own subtransaction.
Errors (the whole call): operation.invalid_request (SQLSTATE 22023) for a NULL or empty partition, watches not an array, or an element without integer w and seq and a non-empty actorId.
SECURITY DEFINER with search_path = pg_catalog, pg_temp: the gateway role needs only EXECUTE, as for operations_http.$$;
REVOKE EXECUTE ON FUNCTION syncular.operations_watch_rerun(text, jsonb) FROM PUBLIC;

-- Cluster-wide registration of remote operations through syncular_router (80_cluster.sql).
CREATE OR REPLACE FUNCTION syncular._cluster_dispatch(call text, args jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF args IS NULL OR jsonb_typeof(args) <> 'object' THEN
    PERFORM syncular._raise('sync.invalid_request', 'cluster call arguments must be a JSON object',
                            jsonb_build_object('call', call));
  END IF;
  CASE call
  WHEN 'ensure_schema' THEN
    -- no caller schema crosses the router: the app schema is the registered one, the one given,
    -- or public (10_schema.sql: app_schema, else the registered schema, else the caller's).
    -- A checkpoint declaration the router tagged with the database of its partition's shard is
    -- installed on that shard only: elsewhere it would never be activated and would close the
    -- serve gate of every partition there.
    RETURN syncular._ensure_schema(args -> 'ir',
             CASE WHEN jsonb_typeof(args -> 'checkpoints') = 'array'
                  THEN (SELECT coalesce(jsonb_agg(d - 'shardDatabase' ORDER BY i), '[]'::jsonb)
                          FROM jsonb_array_elements(args -> 'checkpoints') WITH ORDINALITY x(d, i)
                         WHERE jsonb_typeof(d) <> 'object' OR NOT d ? 'shardDatabase'
                            OR d ->> 'shardDatabase' = current_database())
                  ELSE coalesce(args -> 'checkpoints', '[]'::jsonb) END,
             syncular._jstr(args, 'appSchema'), 'public');
  WHEN 'set_scope_resolver' THEN
    PERFORM syncular.set_scope_resolver(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_row_validator' THEN
    PERFORM syncular.set_row_validator(syncular._jstr(args, 'table'), syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_commit_validator' THEN
    PERFORM syncular.set_commit_validator(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_reaction_planner' THEN
    PERFORM syncular.set_reaction_planner(syncular._jstr(args, 'fn')::regprocedure);
  -- remote operations (65_operations.sql): every shard serves the same registry
  WHEN 'register_query' THEN
    RETURN syncular.register_query(syncular._jstr(args, 'operationId'), syncular._jstr(args, 'sql'),
             args -> 'columns', ARRAY(SELECT jsonb_array_elements_text(coalesce(args -> 'tables', '[]'))),
             coalesce(args -> 'params', '[]'), coalesce(syncular._jstr(args, 'mode'), 'scoped'),
             coalesce(args -> 'coverage', '[]'), syncular._jstr(args, 'authorize')::regprocedure,
             coalesce((args ->> 'maxRows')::integer, 1000));
  WHEN 'register_queries' THEN
    RETURN syncular.register_queries(args -> 'ir', coalesce((args ->> 'maxRows')::integer, 1000),
                                     coalesce(args -> 'privileged', '{}'));
  WHEN 'register_command' THEN
    RETURN syncular.register_command(syncular._jstr(args, 'operationId'),
             syncular._jstr(args, 'authorize')::regprocedure, syncular._jstr(args, 'command')::regprocedure);
  ELSE
    PERFORM syncular._raise('sync.invalid_request', 'unknown cluster call', jsonb_build_object('call', call));
  END CASE;
  RETURN jsonb_build_object('call', call);
END
$$;
COMMENT ON FUNCTION syncular._cluster_dispatch(text, jsonb) IS
'Internal. Runs one cluster-wide call by name (ensure_schema, set_scope_resolver, set_row_validator, '
'set_commit_validator, set_reaction_planner, register_query, register_queries, register_command) with its arguments '
'from a JSON object. See syncular.cluster_call.';
COMMENT ON FUNCTION syncular.cluster_call(text, jsonb, boolean) IS
'One shard''s part of a cluster-wide call made through the syncular_router extension (docs/scaling.md). '
'call: "ensure_schema" (args {ir, checkpoints?, appSchema?}; returns ensure_schema''s result; the app schema is '
'appSchema, else the registered one, else public; a checkpoint declaration carrying "shardDatabase" is installed only '
'when that is current_database(), the member removed), "set_scope_resolver" / "set_commit_validator" / '
'"set_reaction_planner" (args {fn}: a schema-qualified regprocedure text, or null to unregister), '
'"set_row_validator" (args {table, fn}); the setters return {"call": call}; "register_query" (args {operationId, '
'sql, columns, tables, params, mode, coverage, authorize, maxRows}), "register_queries" (args {ir, maxRows, '
'privileged}), "register_command" (args {operationId, authorize, command}) return what those functions return '
'(remote operations, docs/operations-protocol.md). apply false: the check round, '
'which runs the call and rolls it back, returning what it would return and raising what it would raise '
'(writes nothing; an ensure_schema bump does its DDL and row rewrites, then undoes them). Raises what the '
'named function raises, and sync.invalid_request (22023) for an unknown call or args that are not an object. '
'Owner-only, like the calls it runs. RFC 0007 §3.4 (ensureSchema), hooks.md.';
