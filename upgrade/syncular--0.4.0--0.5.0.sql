-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit

-- The writer fence trigger function in C (src/fence.c): the same refusal, one primary-key probe
-- per appended commit instead of a PL/pgSQL body and an SQL statement.
CREATE OR REPLACE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_writer_fence';

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

-- SYQL statement variants of queries-IR queries (65_operations.sql, ops_syql.c).
ALTER TABLE syncular.sync_operation_queries ADD COLUMN syql JSONB;
COMMENT ON COLUMN syncular.sync_operation_queries.syql IS 'SYQL statement variants of a query registered from a queries IR: {backend, activationControls, inputs, statements: [{activationMask?, sortProfile?, boundSql, binds}]}, each statement bound and analyzed at registration; NULL for a one-statement query.';
COMMENT ON TABLE syncular.sync_operation_queries IS
'Registered remote queries (REMOTE.md §2), one row per operation id: the authored SQL ($1..$n = params in order), bound_sql (every app table replaced by a relation of the authenticated partition, $n+1), params [{name, type}], result columns [{name, type, nullable}], the app tables read, mode scoped (coverage [{table, variable, param}]) or privileged (authorize), and maxRows. Written by syncular.register_query / register_queries; emptied by unregister_schema.';
CREATE OR REPLACE FUNCTION syncular.register_query(operation_id text, sql text, columns jsonb, tables text[],
                                        params jsonb DEFAULT '[]', mode text DEFAULT 'scoped',
                                        coverage jsonb DEFAULT '[]', authorize regprocedure DEFAULT NULL,
                                        max_rows integer DEFAULT 1000)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled   jsonb;
  e          jsonb;
  t          text;
  v          text;
  n          integer;
  names      text[] := '{}';
  pnames     text[] := '{}';
  ptypes     regtype[] := '{}';
  bound      text;
  msg        text;
  state      text;
  old        syncular.sync_operation_queries%ROWTYPE;
BEGIN
  IF operation_id IS NULL OR operation_id = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the operation id must be a non-empty text', 'operation_id');
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._operation_invalid(operation_id, 'no app schema is registered (syncular.ensure_schema first)', 'schema');
  END IF;
  IF sql IS NULL OR btrim(sql) = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the SQL text is missing', 'sql');
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 10000 THEN
    PERFORM syncular._operation_invalid(operation_id, 'maxRows must be an integer from 1 through 10000', 'max_rows',
      jsonb_build_object('maxRows', max_rows));
  END IF;
  -- result columns (REMOTE.md §2): present, non-empty, unique names, known types
  IF columns IS NULL OR jsonb_typeof(columns) <> 'array' OR jsonb_array_length(columns) = 0 THEN
    PERFORM syncular._operation_invalid(operation_id, 'result-column metadata is missing or empty', 'columns');
  END IF;
  FOR e IN SELECT x FROM jsonb_array_elements(columns) x LOOP
    IF jsonb_typeof(e) <> 'object' OR coalesce(e ->> 'name', '') = ''
       OR syncular._operation_type(e ->> 'type') IS NULL
       OR (e ? 'nullable' AND jsonb_typeof(e -> 'nullable') <> 'boolean') THEN
      PERFORM syncular._operation_invalid(operation_id,
        'every result column is {name, type, nullable?} with a non-empty name and a type of string, integer, float, number, boolean, json, bytes',
        'columns', jsonb_build_object('column', e));
    END IF;
    IF (e ->> 'name') = ANY (names) THEN
      PERFORM syncular._operation_invalid(operation_id, format('duplicate result column %L', e ->> 'name'),
        'columns', jsonb_build_object('column', e ->> 'name'));
    END IF;
    names := names || (e ->> 'name');
  END LOOP;
  -- params, positional $1..$n in this order
  IF params IS NULL OR jsonb_typeof(params) <> 'array' THEN
    PERFORM syncular._operation_invalid(operation_id, 'params must be a JSON array of {name, type}', 'params');
  END IF;
  FOR e IN SELECT x FROM jsonb_array_elements(params) x LOOP
    IF jsonb_typeof(e) <> 'object' OR coalesce(e ->> 'name', '') = '' OR syncular._operation_type(e ->> 'type') IS NULL
       OR (e ->> 'name') = ANY (pnames) THEN
      PERFORM syncular._operation_invalid(operation_id,
        'every param is {name, type} with a unique non-empty name and a type of string, integer, float, number, boolean, json, bytes',
        'params', jsonb_build_object('param', e));
    END IF;
    pnames := pnames || (e ->> 'name');
    ptypes := ptypes || syncular._operation_type(e ->> 'type');
  END LOOP;
  -- tables: synced, materialized, listed once
  IF tables IS NULL OR cardinality(tables) = 0 THEN
    PERFORM syncular._operation_invalid(operation_id, 'the query must declare the app tables it reads', 'tables');
  END IF;
  FOREACH t IN ARRAY tables LOOP
    IF (SELECT count(*) FROM unnest(tables) u WHERE u = t) > 1 THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is listed twice', t), 'tables',
        jsonb_build_object('table', t));
    END IF;
    SELECT x INTO e FROM jsonb_array_elements(compiled -> 'tables') x WHERE x ->> 'name' = t;
    IF e IS NULL THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is not a synced table', t), 'tables',
        jsonb_build_object('table', t));
    ELSIF (e -> 'materialize') = 'false'::jsonb THEN
      PERFORM syncular._operation_invalid(operation_id, format('table %L is not materialized (materialize: false)', t),
        'tables', jsonb_build_object('table', t));
    END IF;
  END LOOP;
  -- authorization mode (REMOTE.md §2.1)
  IF mode = 'privileged' THEN
    IF authorize IS NULL THEN
      PERFORM syncular._operation_invalid(operation_id, 'a privileged query needs an authorize function', 'authorize');
    END IF;
    PERFORM syncular._check_hook_signature('query_authorize', authorize,
      ARRAY['text', 'text', 'jsonb']::regtype[], 'boolean'::regtype, true,
      '(actor_id text, partition text, params jsonb) RETURNS boolean');
    IF coverage IS NOT NULL AND coverage <> '[]'::jsonb THEN
      PERFORM syncular._operation_invalid(operation_id, 'a privileged query carries no coverage', 'coverage');
    END IF;
    coverage := '[]';
  ELSIF mode = 'scoped' THEN
    IF authorize IS NOT NULL THEN
      PERFORM syncular._operation_invalid(operation_id, 'a scoped query has no authorize function (use mode privileged)', 'authorize');
    END IF;
    IF coverage IS NULL OR jsonb_typeof(coverage) <> 'array' OR jsonb_array_length(coverage) = 0 THEN
      PERFORM syncular._operation_invalid(operation_id, 'a scoped query needs coverage: one {table, variable, param} per scope variable of every table it reads', 'coverage');
    END IF;
    FOR e IN SELECT x FROM jsonb_array_elements(coverage) x LOOP
      IF jsonb_typeof(e) <> 'object' OR NOT (e ->> 'table') = ANY (tables) THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage names a table the query does not read', 'coverage',
          jsonb_build_object('coverage', e));
      END IF;
      IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(compiled -> 'tables') x,
                                   jsonb_array_elements(x -> 'scopes') s
                      WHERE x ->> 'name' = e ->> 'table' AND s ->> 'variable' = e ->> 'variable') THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage names a scope variable its table does not declare',
          'coverage', jsonb_build_object('coverage', e));
      END IF;
      IF NOT (e ->> 'param') = ANY (pnames)
         OR NOT (SELECT p ->> 'type' FROM jsonb_array_elements(params) p WHERE p ->> 'name' = e ->> 'param') IN ('string', 'integer') THEN
        PERFORM syncular._operation_invalid(operation_id, 'coverage must name a string or integer param of the query',
          'coverage', jsonb_build_object('coverage', e));
      END IF;
      IF (SELECT count(*) FROM jsonb_array_elements(coverage) c
           WHERE c ->> 'table' = e ->> 'table' AND c ->> 'variable' = e ->> 'variable') > 1 THEN
        PERFORM syncular._operation_invalid(operation_id, 'duplicate coverage record', 'coverage',
          jsonb_build_object('coverage', e));
      END IF;
    END LOOP;
    FOREACH t IN ARRAY tables LOOP
      SELECT x INTO e FROM jsonb_array_elements(compiled -> 'tables') x WHERE x ->> 'name' = t;
      IF jsonb_array_length(coalesce(e -> 'scopes', '[]')) = 0 THEN
        PERFORM syncular._operation_invalid(operation_id,
          format('table %L declares no scope variable, so a scoped query cannot prove coverage (use mode privileged)', t),
          'coverage', jsonb_build_object('table', t));
      END IF;
      FOR v IN SELECT s ->> 'variable' FROM jsonb_array_elements(e -> 'scopes') s LOOP
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coverage) c
                        WHERE c ->> 'table' = t AND c ->> 'variable' = v) THEN
          PERFORM syncular._operation_invalid(operation_id,
            format('incomplete coverage: scope variable %L of table %L is not covered', v, t), 'coverage',
            jsonb_build_object('table', t, 'variable', v));
        END IF;
      END LOOP;
    END LOOP;
  ELSE
    PERFORM syncular._operation_invalid(operation_id, 'mode must be scoped or privileged', 'mode',
      jsonb_build_object('mode', mode));
  END IF;

  -- bind and prepare: the PostgreSQL error, named, at registration
  BEGIN
    bound := syncular._operation_bind(sql, ptypes, tables, names);
  EXCEPTION WHEN query_canceled OR admin_shutdown THEN
    RAISE;
  WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE;
    PERFORM syncular._operation_invalid(operation_id, format('the SQL is refused: %s', msg), 'sql',
      jsonb_build_object('sqlstate', state, 'error', msg));
  END;

  SELECT * INTO old FROM syncular.sync_operation_queries q WHERE q.operation_id = register_query.operation_id;
  IF EXISTS (SELECT 1 FROM syncular.sync_operation_commands c WHERE c.operation_id = register_query.operation_id) THEN
    PERFORM syncular._operation_invalid(operation_id, 'the id is already registered as a command', 'operation_id');
  END IF;
  INSERT INTO syncular.sync_operation_queries AS q
         (operation_id, sql, bound_sql, params, columns, tables, mode, coverage, authorize, max_rows)
  VALUES (operation_id, sql, bound, params, columns, tables, mode, coverage, authorize, max_rows)
  ON CONFLICT ON CONSTRAINT sync_operation_queries_pkey DO UPDATE SET
    sql = EXCLUDED.sql, bound_sql = EXCLUDED.bound_sql, params = EXCLUDED.params, columns = EXCLUDED.columns,
    tables = EXCLUDED.tables, mode = EXCLUDED.mode, coverage = EXCLUDED.coverage,
    authorize = EXCLUDED.authorize, max_rows = EXCLUDED.max_rows, syql = NULL;
  RETURN jsonb_build_object('operationId', operation_id, 'kind', 'query',
    'action', CASE WHEN old.operation_id IS NULL THEN 'created'
                   WHEN (old.sql, old.bound_sql, old.params, old.columns, old.tables, old.mode, old.coverage,
                         old.authorize, old.max_rows)
                        IS NOT DISTINCT FROM (sql, bound, params, columns, tables, mode, coverage, authorize, max_rows)
                   THEN 'unchanged' ELSE 'updated' END);
END
$$;
COMMENT ON FUNCTION syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, regprocedure, integer) IS
$$Registers (or replaces) a remote query (REMOTE.md §2, §2.1), served by syncular.operations_http. Idempotent: the same arguments again return action "unchanged".
Arguments: operation_id = the stable id requests name; sql = one SELECT over the app tables by their unqualified names, params as $1..$n; columns = the result columns [{name, type, nullable}] (type string, integer, float, number, boolean, json or bytes; the response carries these columns only, normalized to the type); tables = the app tables it reads (synced and materialized); params = [{name, type}] in positional order (a request's params object carries them by name); mode = 'scoped' (coverage [{table, variable, param}]: exactly one record per scope variable of every table read, each naming the string or integer param whose value the actor must be allowed for that variable) or 'privileged' (authorize = a function (actor_id text, partition text, params jsonb) RETURNS boolean); max_rows = 1..10000 (a larger result fails with operation.result_too_large).
The SQL is bound to the partition (each app table replaced by the rows of the authenticated partition, $n+1) and analyzed here, so SQL PostgreSQL refuses, a relation other than the declared tables (schema-qualified, a view, a catalog table), a data-modifying statement, row locks or a missing result column fail now, not at first use. Functions called by the SQL are the deployer's responsibility: they run as the extension owner.
Returns {operationId, kind: "query", action: "created" | "updated" | "unchanged"}.
Errors: sync.storage.operation_invalid (SQLSTATE 22023; details {operationId, rule, ...}; rule operation_id, schema, sql (details sqlstate, error: PostgreSQL's), max_rows, columns (missing, empty, duplicate or bad), params, tables (not synced, not materialized, twice), mode, authorize, coverage (empty, duplicate, extra, incomplete, unknown param)); sync.storage.hook_signature (22023) for an authorize function of another signature. Owner-only.$$;
CREATE FUNCTION syncular._operation_register_syql(qname text, q jsonb) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  plan      jsonb := q #> '{syql,plan}';
  inputs    jsonb := q #> '{syql,inputs}';
  st        jsonb;
  b         jsonb;
  i         integer := 0;
  names     text[];
  types     regtype[];
  src       text;
  bound     text;
  cols      text[];
  tbls      text[];
  stmts     jsonb := '[]';
  stored    jsonb;
  new_params jsonb;
  cov       jsonb;
  msg       text;
  state     text;
  old       jsonb;
BEGIN
  IF jsonb_typeof(plan) IS DISTINCT FROM 'object' OR jsonb_typeof(inputs) IS DISTINCT FROM 'array'
     OR (plan ->> 'backend') IS NULL OR (plan ->> 'backend') NOT IN ('variants', 'neutralize')
     OR jsonb_typeof(plan -> 'statements') IS DISTINCT FROM 'array' OR jsonb_array_length(plan -> 'statements') = 0 THEN
    PERFORM syncular._operation_invalid(qname, 'the SYQL plan must have a backend variants or neutralize, inputs and statements',
      'syql', jsonb_build_object('backend', plan -> 'backend'));
  END IF;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(inputs) x WHERE x ->> 'kind' NOT IN ('value', 'sort', 'limit')
                                                             OR coalesce(x ->> 'langName', '') = '') THEN
    PERFORM syncular._operation_invalid(qname, 'SYQL inputs must be value, sort or limit inputs with a langName (group inputs are not served)',
      'syql');
  END IF;
  SELECT array_agg(c ->> 'name' ORDER BY n) INTO cols FROM jsonb_array_elements(q -> 'columns') WITH ORDINALITY x(c, n);
  SELECT coalesce(array_agg(DISTINCT t), '{}') INTO tbls FROM jsonb_array_elements_text(coalesce(q -> 'tables', '[]')) t;
  -- every statement variant prepared now: one outside the common SQL subset refuses the query
  FOR st IN SELECT x FROM jsonb_array_elements(plan -> 'statements') x LOOP
    names := '{}';
    types := '{}';
    FOR b IN SELECT x FROM jsonb_array_elements(coalesce(st -> 'binds', '[]')) x LOOP
      names := names || coalesce(b ->> 'name', '?');
      types := types || CASE b ->> 'kind'
        WHEN 'value' THEN syncular._operation_type(b ->> 'type')
        WHEN 'condition-active' THEN 'boolean'::regtype
        WHEN 'limit' THEN 'bigint'::regtype END;
      IF types[array_length(types, 1)] IS NULL
         OR (b ->> 'kind' IN ('value', 'limit') AND NOT EXISTS (
               SELECT 1 FROM jsonb_array_elements(inputs) x WHERE x ->> 'name' = b ->> 'input')) THEN
        PERFORM syncular._operation_invalid(qname, format('SYQL statement %s has a bind this server cannot compute', i),
          'syql', jsonb_build_object('statement', i, 'bind', b));
      END IF;
    END LOOP;
    BEGIN
      src := syncular._operation_positional(st ->> 'positionalSql', names);
      bound := syncular._operation_bind(src, types, tbls, cols);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE;
      IF state = '22004' OR src IS NULL THEN
        msg := coalesce(msg, 'the statement has no positionalSql');
      END IF;
      PERFORM syncular._operation_invalid(qname,
        format('SYQL statement %s is not accepted by PostgreSQL: %s', i, msg), 'syql',
        jsonb_build_object('statement', i, 'sqlstate', state, 'error', msg));
    END;
    stmts := stmts || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
      'activationMask', st -> 'activationMask', 'sortProfile', st -> 'sortProfile',
      'boundSql', bound, 'binds', coalesce(st -> 'binds', '[]'))));
    i := i + 1;
  END LOOP;
  stored := jsonb_build_object('backend', plan -> 'backend',
    'activationControls', coalesce(plan -> 'activationControls', '[]'), 'inputs', inputs, 'statements', stmts);
  -- a request names the inputs by langName; coverage params (input names) follow
  SELECT coalesce(jsonb_agg(jsonb_build_object('name', x ->> 'langName',
           'type', CASE x ->> 'kind' WHEN 'value' THEN x ->> 'type' WHEN 'sort' THEN 'string' ELSE 'integer' END)
           ORDER BY n), '[]')
    INTO new_params FROM jsonb_array_elements(inputs) WITH ORDINALITY x(x, n);
  SELECT o.syql, o.coverage INTO old, cov FROM syncular.sync_operation_queries o WHERE o.operation_id = qname;
  SELECT coalesce(jsonb_agg(c || jsonb_build_object('param', coalesce(
           (SELECT x ->> 'langName' FROM jsonb_array_elements(inputs) x WHERE x ->> 'name' = c ->> 'param' LIMIT 1),
           c ->> 'param'))), '[]')
    INTO cov FROM jsonb_array_elements(cov) c;
  UPDATE syncular.sync_operation_queries o SET syql = stored, params = new_params, coverage = cov
   WHERE o.operation_id = qname;
  RETURN old IS DISTINCT FROM stored;
END
$$;
COMMENT ON FUNCTION syncular._operation_register_syql(text, jsonb) IS
'Internal (register_queries). The SYQL statement variants of one queries-IR query (syql.plan, backend variants or neutralize; value, sort and limit inputs): every statement''s positionalSql with its binds typed (value: the input type; condition-active: boolean; limit: bigint), partition-bound and analyzed by PostgreSQL now, so a variant outside the common SQL subset refuses the query (sync.storage.operation_invalid, rule syql, details {statement, sqlstate, error}). Stores {backend, activationControls, inputs, statements: [{activationMask?, sortProfile?, boundSql, binds}]} in sync_operation_queries.syql, the inputs (by langName) as params and the coverage params by langName; ops_syql.c chooses the variant per request. Returns whether the stored plan changed.';
REVOKE EXECUTE ON FUNCTION syncular._operation_register_syql(text, jsonb) FROM PUBLIC;
CREATE OR REPLACE FUNCTION syncular.register_queries(ir jsonb, max_rows integer DEFAULT 1000,
                                          privileged jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  q         jsonb;
  names     text[];
  cov       jsonb;
  d         jsonb;
  s         jsonb;
  src       text;
  fn        regprocedure;
  results   jsonb := '[]';
  qname     text;
  r         jsonb;
  before    jsonb;
  after     jsonb;
BEGIN
  IF ir IS NULL OR jsonb_typeof(ir) <> 'object' OR (ir -> 'queryIrVersion') IS DISTINCT FROM '3'::jsonb
     OR jsonb_typeof(ir -> 'queries') <> 'array' THEN
    PERFORM syncular._operation_invalid(NULL, 'the queries IR must be an object with queryIrVersion 3 and a queries array',
      'ir', jsonb_build_object('queryIrVersion', ir -> 'queryIrVersion'));
  END IF;
  IF privileged IS NULL OR jsonb_typeof(privileged) <> 'object' THEN
    PERFORM syncular._operation_invalid(NULL, 'privileged must map query names to authorize functions', 'privileged');
  END IF;
  FOR q IN SELECT x FROM jsonb_array_elements(ir -> 'queries') x LOOP
    qname := q ->> 'name';
    IF jsonb_typeof(q -> 'params') IS DISTINCT FROM 'array' THEN
      PERFORM syncular._operation_invalid(qname, 'the IR query has no params array', 'params');
    END IF;
    SELECT coalesce(array_agg(p ->> 'name' ORDER BY n), '{}') INTO names
      FROM jsonb_array_elements(q -> 'params') WITH ORDINALITY AS x(p, n);
    src := coalesce(q ->> 'sql', q ->> 'positionalSql');
    IF src IS NULL THEN
      PERFORM syncular._operation_invalid(qname, 'the IR query has no sql', 'sql');
    END IF;
    BEGIN
      src := syncular._operation_positional(src, names);
    EXCEPTION WHEN invalid_parameter_value THEN
      PERFORM syncular._operation_invalid(qname, SQLERRM, 'sql');
    END;
    -- the coverage proof: each reactive dependency's scope variable and the one param covering it
    cov := '[]';
    FOR d IN SELECT x FROM jsonb_array_elements(coalesce(q #> '{reactive,dependencies}', '[]')) x LOOP
      FOR s IN SELECT x FROM jsonb_array_elements(coalesce(d -> 'scopes', '[]')) x LOOP
        IF jsonb_typeof(s -> 'params') = 'array' AND jsonb_array_length(s -> 'params') = 1 THEN
          cov := cov || jsonb_build_array(jsonb_build_object('table', d ->> 'table', 'variable', s ->> 'variable',
                                                             'param', s -> 'params' ->> 0));
        END IF;
      END LOOP;
    END LOOP;
    fn := NULL;
    IF privileged ? qname THEN
      fn := (privileged ->> qname)::regprocedure;
    END IF;
    SELECT to_jsonb(o) INTO before FROM syncular.sync_operation_queries o WHERE o.operation_id = qname;
    r := syncular.register_query(
      qname, src,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', c ->> 'name', 'type', c ->> 'type',
                                                    'nullable', coalesce((c -> 'nullable')::text::boolean, true))
                                 ORDER BY n), '[]')
         FROM jsonb_array_elements(coalesce(q -> 'columns', '[]')) WITH ORDINALITY AS x(c, n)),
      (SELECT coalesce(array_agg(DISTINCT t), '{}') FROM jsonb_array_elements_text(coalesce(q -> 'tables', '[]')) t),
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', p ->> 'name', 'type', p ->> 'type') ORDER BY n), '[]')
         FROM jsonb_array_elements(q -> 'params') WITH ORDINALITY AS x(p, n)),
      CASE WHEN fn IS NULL THEN 'scoped' ELSE 'privileged' END,
      CASE WHEN fn IS NULL THEN cov ELSE '[]' END, fn, max_rows);
    -- the SYQL statement variants, each prepared now (_operation_register_syql); the action
    -- compares the whole stored registration
    IF jsonb_typeof(q #> '{syql,plan}') = 'object' THEN
      PERFORM syncular._operation_register_syql(qname, q);
      SELECT to_jsonb(o) INTO after FROM syncular.sync_operation_queries o WHERE o.operation_id = qname;
      r := r || jsonb_build_object('action', CASE WHEN before IS NULL THEN 'created'
                                                  WHEN before = after THEN 'unchanged' ELSE 'updated' END);
    END IF;
    results := results || jsonb_build_array(r);
  END LOOP;
  RETURN jsonb_build_object('queries', results);
END
$$;
COMMENT ON FUNCTION syncular.register_queries(jsonb, integer, jsonb) IS
$$Registers every query of an upstream typegen queries IR (syncular.queries.ir.json, queryIrVersion 3) with syncular.register_query, in one transaction (all or nothing), as ensure_schema takes the schema IR. Idempotent.
Per IR query: operation id = name; SQL = sql (its :name placeholders become $k in params order; an IR without sql uses positionalSql, its ? taken in params order); columns = columns [{name, type, nullable}]; tables = tables; params = params [{name, type}]; coverage = each reactive.dependencies[].scopes[] entry with exactly one param ({table, variable, param}); an entry without exactly one param covers nothing, so registration fails closed with rule coverage.
A query with SYQL statement variants (syql.plan.statements: backend variants or neutralize; value, sort and limit inputs) has every variant's positionalSql with its typed binds partition-bound and analyzed by PostgreSQL now: a variant outside the common SQL subset refuses the query (rule syql, details {statement, sqlstate, error}, PostgreSQL's message). Its requests then carry the SYQL inputs by langName, and each request runs the variant the generated client would select (activation mask of the present controls, sort profile) with its binds (docs/operations-protocol.md).
Arguments: ir = the IR document; max_rows = maxRows of every query (1..10000); privileged = {"queryName": "schema.fn(text,text,jsonb)"}: those queries are registered privileged with that authorize function instead of scoped.
Returns {queries: [register_query results]} (action compares the whole stored registration, variants included).
Errors: sync.storage.operation_invalid (22023; rule syql for a bad SYQL plan or a variant PostgreSQL refuses, rule ir when the document is not queryIrVersion 3 with a queries array, sql for an undeclared :name placeholder, and every register_query rule, naming the query); sync.storage.hook_signature (22023). Owner-only.$$;

-- DDL on a synced table outside ensure_schema is refused (src/sql/33_ddl_guard.sql): the guard
-- functions and event triggers, and ensure_schema's bump marking its own DDL
-- (src/ddl_guard.c; docs/writing-with-sql.md).  The layout of a synced table is the compiled
-- schema's (data-model-and-storage.md §6) and changes only through ensure_schema's append-only
-- bump (§7), which marks its own DDL with syncular._synced_ddl; a superuser repairing by hand
-- sets syncular.allow_synced_table_ddl.  The event triggers are members of the extension: they
-- come with CREATE EXTENSION (also in a database pg_restore fills; pg_dump does not dump them)
-- and go with DROP EXTENSION.

CREATE FUNCTION syncular._guard_synced_ddl() RETURNS event_trigger
  AS 'MODULE_PATHNAME', 'syncular_guard_synced_ddl' LANGUAGE C;
COMMENT ON FUNCTION syncular._guard_synced_ddl() IS
  'Internal. The function of the event triggers syncular_guard_alter (ddl_command_start, ALTER TABLE: ADD / DROP COLUMN, ALTER COLUMN TYPE, SET / DROP NOT NULL, RENAME of the table or a column, SET SCHEMA, DISABLE TRIGGER ALL / USER / of a capture trigger; ALTER TRIGGER: RENAME of a capture trigger) and syncular_guard_drop (sql_drop: a synced table, or one of its capture triggers, dropped by DROP TABLE, DROP TRIGGER, DROP SCHEMA ... CASCADE, DROP OWNED) on a synced table of the registered schema. Refuses with sync.storage.physical_layout_mismatch (SQLSTATE 55000; details {table, command, reason: "ddl_outside_ensure_schema"}) and a HINT (change the schema IR and call ensure_schema). Passes inside ensure_schema''s bump (syncular._synced_ddl) and when the superuser setting syncular.allow_synced_table_ddl is on. data-model-and-storage.md §6, §7; docs/writing-with-sql.md.';

CREATE FUNCTION syncular._synced_ddl(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_synced_ddl' LANGUAGE C STRICT;
COMMENT ON FUNCTION syncular._synced_ddl(boolean) IS
  'Internal. on = true: this backend''s DDL on synced tables passes the guard of syncular._guard_synced_ddl until _synced_ddl(false), the end of the transaction, or the rollback of the subtransaction that set it; ensure_schema''s bump sets it around its ALTER TABLE and DROP TABLE. No grant: superuser / extension owner only. Raises nothing.';

-- what the guard reads, as the extension owner (the role running the DDL needs no privilege on
-- syncular.*; ddl_guard.c calls these through fmgr, without an ACL check)
CREATE FUNCTION syncular._synced_table_of(relid oid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM syncular.sync_settings s, jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1 AND to_regclass(format('%I.%I', s.app_schema, t ->> 'name'))::oid = relid
                    LIMIT 1), '')
$$;
COMMENT ON FUNCTION syncular._synced_table_of(oid) IS
  'Internal. The name of the synced table of the registered schema whose relation is relid, or '''' when it is none (no registration, another table). Read by the synced-table DDL guard. Raises nothing.';

CREATE FUNCTION syncular._synced_table_dropped() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM pg_event_trigger_dropped_objects() d, syncular.sync_settings s,
                          jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1
                      AND ((d.object_type = 'table' AND d.schema_name = s.app_schema
                            AND d.object_name = t ->> 'name')
                           OR (d.object_type = 'trigger' AND d.address_names[1] = s.app_schema
                               AND d.address_names[2] = t ->> 'name'
                               AND d.address_names[3] IN ('zz_syncular_capture', 'syncular_capture_insert',
                                   'syncular_capture_update', 'syncular_capture_delete',
                                   'syncular_capture_truncate')))
                    ORDER BY 1 LIMIT 1), '')
$$;
COMMENT ON FUNCTION syncular._synced_table_dropped() IS
  'Internal. In a sql_drop event trigger: the first (by name) synced table of the registered schema among the dropped objects, or whose capture trigger is among them, or '''' when none is. Read by the synced-table DDL guard. Raises the PostgreSQL error when called outside a sql_drop event trigger.';

REVOKE ALL ON FUNCTION syncular._guard_synced_ddl() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_ddl(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_of(oid) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER syncular_guard_alter ON ddl_command_start WHEN TAG IN ('ALTER TABLE', 'ALTER TRIGGER')
  EXECUTE FUNCTION syncular._guard_synced_ddl();
COMMENT ON EVENT TRIGGER syncular_guard_alter IS
  'Refuses ALTER TABLE / ALTER TRIGGER that changes a synced table''s layout (columns, name, schema, capture triggers) outside ensure_schema (syncular._guard_synced_ddl).';
CREATE EVENT TRIGGER syncular_guard_drop ON sql_drop
  EXECUTE FUNCTION syncular._guard_synced_ddl();
COMMENT ON EVENT TRIGGER syncular_guard_drop IS
  'Refuses dropping a synced table or its capture triggers outside ensure_schema and unregister_schema (syncular._guard_synced_ddl).';

CREATE OR REPLACE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled     jsonb;
  version      integer;
  registered   text;
  prev_comp    jsonb;
  target       text;
  stored_ver   bigint;
  stored_txt   text;
  stored       jsonb;
  t            jsonb;
  tname        text;
  old_layout   jsonb;
  new_cols     jsonb;
  old_n        integer;
  new_n        integer;
  phys_cols    text[];
  mat          boolean;
  backfill     jsonb;
  added        text[];
  dropped      text[] := '{}';
  created      text[] := '{}';
  altered      text[] := '{}';
  rewrites     jsonb := '[]';   -- [{table, old, new, backfill}]
  rw           jsonb;
  rewritten    bigint := 0;
  new_names    text[];
  k            text;
  c            jsonb;
  i            integer;
BEGIN
  IF checkpoints IS NULL OR jsonb_typeof(checkpoints) <> 'array' THEN
    PERFORM syncular._schema_invalid('checkpoints must be a JSON array', 'checkpoints');
  END IF;

  -- compile first (pure): an invalid schema is refused without taking the migration lock
  compiled := syncular._compile_schema(ir, NULL);
  version := (compiled ->> 'version')::integer;
  SELECT array_agg(e ->> 'name' ORDER BY n) INTO new_names
    FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY AS x(e, n);
  new_names := coalesce(new_names, '{}');

  -- the migration lock, then every read that plans the work (decision: re-read under the lock)
  -- (a hot standby cannot take it and cannot write either: it only verifies the replicated marker;
  -- a create or bump there fails on its first write as a read-only transaction)
  IF NOT pg_is_in_recovery() THEN
    LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE;
  END IF;
  PERFORM syncular._checkpoint_barrier(checkpoints, version);

  SELECT s.app_schema, s.compiled INTO registered, prev_comp FROM syncular.sync_settings s WHERE s.id = 1;
  SELECT m.schema_version, m.layouts INTO stored_ver, stored_txt FROM syncular.sync_schema_meta m WHERE m.id = 1;

  -- the app schema: explicit, else the registered one, else the caller's current_schema()
  IF registered IS NOT NULL AND app_schema IS NOT NULL AND app_schema <> registered THEN
    PERFORM syncular._raise('sync.storage.schema_invalid',
      'a different app schema is already registered in this database',
      jsonb_build_object('rule', 'app_schema', 'registeredSchema', registered, 'appSchema', app_schema),
      format('One app schema per database: pass app_schema => %L (or omit it), or undo the '
             'registration first with SELECT syncular.unregister_schema(%L).', registered, registered));
  END IF;
  target := coalesce(app_schema, registered, caller_schema);
  IF target IS NULL THEN
    PERFORM syncular._schema_invalid('no app schema: pass app_schema or set a search_path', 'app_schema');
  END IF;
  IF target IN ('syncular', 'pg_catalog', 'information_schema') OR starts_with(target, 'pg_') THEN
    PERFORM syncular._schema_invalid('the app schema cannot be a system or extension schema', 'app_schema',
                                     NULL, NULL, jsonb_build_object('appSchema', target));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = target) THEN
    PERFORM syncular._schema_invalid('the app schema does not exist', 'app_schema', NULL, NULL,
                                     jsonb_build_object('appSchema', target));
  END IF;
  compiled := jsonb_set(compiled, '{appSchema}', to_jsonb(target));

  -- ---- stored newer: refuse
  IF stored_ver IS NOT NULL AND stored_ver > version THEN
    PERFORM syncular._raise('sync.storage.schema_newer',
      'stored schema version is newer than the schema being ensured',
      jsonb_build_object('phase', 'storage_migration', 'storedSchemaVersion', stored_ver, 'runningSchemaVersion', version),
      format('This database already serves schema version %s: deploy that IR (or a newer one). '
             'Versions never go back; to start over, SELECT syncular.unregister_schema(%L).',
             stored_ver, target));
  END IF;

  -- ---- same version: verify only, no writes
  IF stored_ver IS NOT NULL AND stored_ver = version THEN
    PERFORM syncular._verify_stored_layouts(compiled, syncular._parse_layouts(stored_txt));
    PERFORM syncular._check_physical_layout(compiled);
    PERFORM syncular._check_capture(compiled);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'verified', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- no marker: create everything
  IF stored_ver IS NULL THEN
    FOREACH tname IN ARRAY new_names LOOP
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._raise('sync.storage.schema_invalid',
          'a synced table to create already exists in the app schema',
          jsonb_build_object('table', tname, 'rule', 'table_exists'),
          format('ensure_schema creates its synced tables: drop or rename %I.%I (a table kept by '
                 'syncular.unregister_schema or DROP EXTENSION), or register into another app_schema.',
                 target, tname));
      END IF;
    END LOOP;
    FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
      PERFORM syncular._create_synced_table(target, t);
    END LOOP;
    PERFORM syncular._create_indexes(target, compiled);
    INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
      ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;
    INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
      VALUES (1, version, syncular._layouts_text(compiled))
      ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
    PERFORM syncular._install_checkpoints(checkpoints, version);
    RETURN jsonb_build_object('schemaVersion', version, 'action', 'created', 'appSchema', target,
                              'tables', to_jsonb(new_names));
  END IF;

  -- ---- stored older: the append-only bump, planned completely before any DDL
  stored := syncular._parse_layouts(stored_txt);
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    IF NOT stored ? tname THEN
      IF to_regclass(format('%I.%I', target, tname)) IS NOT NULL THEN
        PERFORM syncular._raise('sync.storage.schema_invalid',
          'a synced table to create already exists in the app schema',
          jsonb_build_object('table', tname, 'rule', 'table_exists'),
          format('ensure_schema creates its synced tables: drop or rename %I.%I (a table kept by '
                 'syncular.unregister_schema or DROP EXTENSION), or register into another app_schema.',
                 target, tname));
      END IF;
      created := created || tname;
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    new_cols := t -> 'columns';
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(new_cols);
    FOR i IN 0 .. greatest(old_n, new_n) - 1 LOOP
      IF i >= new_n THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', old_layout -> i ->> 'name', 'reason', 'column_removed'),
          syncular._schema_change_hint());
      ELSIF i < old_n AND NOT syncular._layout_entry_equal(old_layout -> i, new_cols -> i) THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: the stored layout must be a prefix of the new one',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', coalesce(new_cols -> i ->> 'name', ''),
                             'reason', 'column_changed'),
          syncular._schema_change_hint());
      ELSIF i >= old_n AND NOT (new_cols -> i -> 'nullable')::text::boolean THEN
        PERFORM syncular._raise('sync.storage.schema_not_append_only',
          'schema change is not append-only: appended columns must be nullable',
          jsonb_build_object('phase', 'storage_migration', 'table', tname, 'column', new_cols -> i ->> 'name',
                             'reason', 'appended_column_not_nullable'),
          syncular._schema_change_hint());
      END IF;
    END LOOP;
  END LOOP;

  -- the bump's own DDL on synced tables passes the DDL guard (33_ddl_guard.sql) until step 4
  PERFORM syncular._synced_ddl(true);

  -- 1. retired tables (stored, no longer in the schema)
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (new_names)) THEN
      DELETE FROM syncular.sync_row_scopes WHERE tbl = k;
      DELETE FROM syncular.sync_blob_refs WHERE tbl = k;
      EXECUTE format('DROP TABLE IF EXISTS %I.%I', target, k);
      dropped := dropped || k;
    END IF;
  END LOOP;

  -- 2. tables kept: drop owned indexes, add/drop projection columns, plan the row rewrite
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    tname := t ->> 'name';
    CONTINUE WHEN tname = ANY (created);
    IF to_regclass(format('%I.%I', target, tname)) IS NULL THEN
      created := created || tname;     -- stored but physically missing: create it afresh
      CONTINUE;
    END IF;
    old_layout := CASE WHEN jsonb_typeof(stored -> tname) = 'array' THEN stored -> tname ELSE '[]' END;
    old_n := jsonb_array_length(old_layout);
    new_n := jsonb_array_length(t -> 'columns');
    mat := (t -> 'materialize')::text::boolean;
    SELECT array_agg(a.attname::text) INTO phys_cols
      FROM pg_attribute a
     WHERE a.attrelid = format('%I.%I', target, tname)::regclass AND a.attnum > 0 AND NOT a.attisdropped;

    PERFORM syncular._install_capture(target, tname);   -- a table registered before 0.4.0 too
    PERFORM syncular._drop_owned_indexes(target, tname,
              ARRAY(SELECT e ->> 'name' FROM jsonb_array_elements(t -> 'indexes') e));
    IF NOT ('_sync_column_versions' = ANY (phys_cols)) THEN
      EXECUTE format('ALTER TABLE %I.%I ADD COLUMN _sync_column_versions bytea', target, tname);
    END IF;

    backfill := '[]';
    added := '{}';
    IF mat THEN
      FOR i IN 0 .. new_n - 1 LOOP
        c := t -> 'columns' -> i;
        IF NOT ((c ->> 'name') = ANY (phys_cols)) THEN
          EXECUTE format('ALTER TABLE %I.%I ADD COLUMN %I %s', target, tname, c ->> 'name',
                         syncular._pg_type(c ->> 'type'));
          added := added || (c ->> 'name');
          IF i < old_n THEN   -- an existing value (materialize turned on): backfill it
            backfill := backfill || jsonb_build_array(jsonb_build_object('name', c ->> 'name',
                                                                         'type', c ->> 'type'));
          END IF;
        END IF;
      END LOOP;
    ELSE
      -- materialize turned off: drop the stale projection (the payload is the truth)
      FOR i IN 0 .. old_n - 1 LOOP
        IF (old_layout -> i ->> 'name') = ANY (phys_cols)
           AND NOT starts_with(old_layout -> i ->> 'name', '_sync') THEN
          EXECUTE format('ALTER TABLE %I.%I DROP COLUMN %I', target, tname, old_layout -> i ->> 'name');
          added := added || ('-' || (old_layout -> i ->> 'name'));
        END IF;
      END LOOP;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 OR cardinality(added) > 0 THEN
      altered := altered || tname;
    END IF;
    IF new_n > old_n OR jsonb_array_length(backfill) > 0 THEN
      rewrites := rewrites || jsonb_build_array(jsonb_build_object('table', tname, 'old', old_n,
                                                                   'new', new_n, 'backfill', backfill));
    END IF;
  END LOOP;

  -- 3. new tables
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    IF (t ->> 'name') = ANY (created) THEN
      PERFORM syncular._create_synced_table(target, t);
    END IF;
  END LOOP;

  PERFORM syncular._synced_ddl(false);

  -- 4. the compiled schema first: decode_row reads it for the backfill
  INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, target, compiled)
    ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled;

  -- 5. payload re-encoding and projection backfill
  FOR rw IN SELECT value FROM jsonb_array_elements(rewrites) WITH ORDINALITY ORDER BY ordinality LOOP
    rewritten := rewritten + syncular._rewrite_rows(target, rw ->> 'table', (rw ->> 'old')::int,
                                                    (rw ->> 'new')::int, rw -> 'backfill');
  END LOOP;

  -- 6. indexes (after the data, so unique indexes check the backfilled projection once)
  PERFORM syncular._create_indexes(target, compiled);

  -- 7. the marker, then the RFC 0007 declarations
  INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts)
    VALUES (1, version, syncular._layouts_text(compiled))
    ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts;
  PERFORM syncular._install_checkpoints(checkpoints, version);

  RETURN jsonb_build_object('schemaVersion', version, 'action', 'migrated', 'appSchema', target,
                            'previousSchemaVersion', stored_ver,
                            'tables', to_jsonb(new_names),
                            'created', to_jsonb(created), 'dropped', to_jsonb(dropped),
                            'altered', to_jsonb(altered), 'rewrittenRows', rewritten);
END
$$;
