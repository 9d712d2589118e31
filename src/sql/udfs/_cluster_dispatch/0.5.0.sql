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
