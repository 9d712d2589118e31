-- syncular install script, part 80: the shard side of cluster-wide calls.
--
-- A sharded deployment (docs/scaling.md: the syncular_router extension and PL/Proxy) runs
-- schema registration and hook registration on every shard.  PL/Proxy runs each remote call in
-- its own transaction, with no two-phase commit, so "fail as a whole" is built in two rounds:
-- first every shard checks the call (runs it and rolls it back), then, only when every shard
-- accepted, every shard applies it.  cluster_call is the one shard entry point for both rounds.

CREATE FUNCTION syncular._cluster_dispatch(call text, args jsonb) RETURNS jsonb
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

CREATE FUNCTION syncular.cluster_call(call text, args jsonb, apply boolean DEFAULT true) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  result jsonb;
BEGIN
  IF apply THEN
    RETURN syncular._cluster_dispatch(call, args);
  END IF;
  -- the check round: run the call in a subtransaction and roll it back (its locks go with it);
  -- an error of the call itself propagates unchanged
  BEGIN
    result := syncular._cluster_dispatch(call, args);
    RAISE EXCEPTION 'cluster call checked' USING ERRCODE = 'SYCHK';
  EXCEPTION WHEN SQLSTATE 'SYCHK' THEN
    NULL;
  END;
  RETURN result;
END
$$;
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
