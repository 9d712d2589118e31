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
