-- syncular install script, part 65: remote operations (REMOTE.md revision 1; docs/operations-protocol.md).
--
-- Registered queries and commands, served by syncular.operations_http beside the SSP2 round.
-- The registrations are catalog rows (dumped by pg_dump, emptied by unregister_schema); the
-- registration functions validate everything REMOTE.md §2-3 asks and bind each query's SQL to
-- the partition once (ops_bind.c), so a bad statement is refused at registration, named.

CREATE TABLE syncular.sync_operation_queries (
  operation_id  TEXT PRIMARY KEY CHECK (operation_id <> ''),
  sql           TEXT NOT NULL,
  bound_sql     TEXT NOT NULL,
  params        JSONB NOT NULL,
  columns       JSONB NOT NULL,
  tables        TEXT[] NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('scoped', 'privileged')),
  coverage      JSONB NOT NULL DEFAULT '[]',
  authorize     REGPROCEDURE,
  max_rows      INTEGER NOT NULL CHECK (max_rows BETWEEN 1 AND 10000),
  syql          JSONB,
  CHECK ((mode = 'privileged') = (authorize IS NOT NULL))
);
CREATE TABLE syncular.sync_operation_commands (
  operation_id  TEXT PRIMARY KEY CHECK (operation_id <> ''),
  authorize     REGPROCEDURE NOT NULL,
  command       REGPROCEDURE NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_queries', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_commands', '');
REVOKE ALL ON syncular.sync_operation_queries, syncular.sync_operation_commands FROM PUBLIC;
COMMENT ON TABLE syncular.sync_operation_queries IS
'Registered remote queries (REMOTE.md §2), one row per operation id: the authored SQL ($1..$n = params in order), bound_sql (every app table replaced by a relation of the authenticated partition, $n+1), params [{name, type}], result columns [{name, type, nullable}], the app tables read, mode scoped (coverage [{table, variable, param}]) or privileged (authorize), and maxRows. Written by syncular.register_query / register_queries; emptied by unregister_schema.';
COMMENT ON TABLE syncular.sync_operation_commands IS
'Registered remote commands (REMOTE.md §3), one row per operation id: the authorize function and the command function, both (actor_id text, partition text, params jsonb). Written by syncular.register_command; emptied by unregister_schema.';

CREATE FUNCTION syncular._operation_bind(sql text, param_types regtype[], tables text[], columns text[])
RETURNS text LANGUAGE C VOLATILE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_bind';
COMMENT ON FUNCTION syncular._operation_bind(text, regtype[], text[], text[]) IS
'Internal (ops_bind.c). The partition-bound form of a registered query: each reference to a declared app table replaced by (SELECT <app columns> FROM <app schema>.<table> WHERE _sync_partition = $n+1); then parsed and analyzed with the parameter types: one SELECT, no data-modifying CTE, no row locks, no relation but the bound tables, every declared result column exactly once. Raises the PostgreSQL error otherwise (register_query names the query).';

CREATE FUNCTION syncular._operation_positional(sql text, names text[]) RETURNS text
LANGUAGE C IMMUTABLE STRICT AS 'MODULE_PATHNAME', 'syncular_operation_positional';
COMMENT ON FUNCTION syncular._operation_positional(text, text[]) IS
'Internal (ops_bind.c). The typegen SQL of a queries IR with its placeholders as PostgreSQL parameters: :name becomes $k (k = position of name in names), or, when the text has no :name, each ? in order becomes $1, $2, ...; quoted text, quoted identifiers, comments and :: casts are left alone. Raises 22023 for an undeclared :name or a ? count that differs from the names.';

CREATE FUNCTION syncular._operation_invalid(operation_id text, message text, rule text,
                                            extra jsonb DEFAULT '{}') RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.operation_invalid',
    format('operation %s: %s', coalesce(quote_literal(operation_id), 'NULL'), message),
    jsonb_build_object('operationId', operation_id, 'rule', rule) || coalesce(extra, '{}'),
    'Fix the registration (docs/operations-protocol.md) and register again; nothing was stored.');
END
$$;
COMMENT ON FUNCTION syncular._operation_invalid(text, text, text, jsonb) IS
'Internal. Raises sync.storage.operation_invalid (SQLSTATE 22023) for a refused registration: message prefixed with the operation id, details {operationId, rule, ...extra}, a HINT.';

CREATE FUNCTION syncular._operation_type(t text) RETURNS regtype
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE t
    WHEN 'string' THEN 'text' WHEN 'integer' THEN 'bigint' WHEN 'float' THEN 'double precision'
    WHEN 'number' THEN 'double precision' WHEN 'boolean' THEN 'boolean' WHEN 'json' THEN 'jsonb'
    WHEN 'bytes' THEN 'bytea' END::regtype
$$;
COMMENT ON FUNCTION syncular._operation_type(text) IS
'Internal. The PostgreSQL type of a declared param or column type: string text, integer bigint, float / number double precision, boolean, json jsonb, bytes bytea; NULL for another name.';

CREATE FUNCTION syncular.register_query(operation_id text, sql text, columns jsonb, tables text[],
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

CREATE FUNCTION syncular.register_command(operation_id text, authorize regprocedure, command regprocedure)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  old syncular.sync_operation_commands%ROWTYPE;
BEGIN
  IF operation_id IS NULL OR operation_id = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the operation id must be a non-empty text', 'operation_id');
  END IF;
  IF authorize IS NULL OR command IS NULL THEN
    PERFORM syncular._operation_invalid(operation_id, 'a command needs an authorize function and a command function', 'authorize');
  END IF;
  PERFORM syncular._check_hook_signature('command_authorize', authorize,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'boolean'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS boolean');
  PERFORM syncular._check_hook_signature('command', command,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'jsonb'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS jsonb');
  IF EXISTS (SELECT 1 FROM syncular.sync_operation_queries q WHERE q.operation_id = register_command.operation_id) THEN
    PERFORM syncular._operation_invalid(operation_id, 'the id is already registered as a query', 'operation_id');
  END IF;
  SELECT * INTO old FROM syncular.sync_operation_commands c WHERE c.operation_id = register_command.operation_id;
  INSERT INTO syncular.sync_operation_commands AS c (operation_id, authorize, command)
  VALUES (operation_id, authorize, command)
  ON CONFLICT ON CONSTRAINT sync_operation_commands_pkey DO UPDATE
    SET authorize = EXCLUDED.authorize, command = EXCLUDED.command;
  RETURN jsonb_build_object('operationId', operation_id, 'kind', 'command',
    'action', CASE WHEN old.operation_id IS NULL THEN 'created'
                   WHEN (old.authorize, old.command) = (authorize, command) THEN 'unchanged'
                   ELSE 'updated' END);
END
$$;
COMMENT ON FUNCTION syncular.register_command(text, regprocedure, regprocedure) IS
$$Registers (or replaces) a remote command (REMOTE.md §3), served by syncular.operations_http. Idempotent.
Arguments: operation_id = the stable id; authorize = (actor_id text, partition text, params jsonb) RETURNS boolean, false fails the request with operation.forbidden; command = (actor_id text, partition text, params jsonb) RETURNS jsonb, a non-empty array of full-row mutations {"op": "upsert", "table", "row": {every column}} or {"op": "delete", "table", "rowId"}, applied through the push pipeline (partition lock, idempotency, scope authorization, validators, references, commit log, wake-up). The command runs after the partition lock and the idempotency recheck, in the request's transaction; it may read rows with syncular.operation_get_row(table, row_id) and must have no external side effects. A command that raises fails the request (operation.execution_failed, nothing stored).
Returns {operationId, kind: "command", action: "created" | "updated" | "unchanged"}.
Errors: sync.storage.operation_invalid (22023; details {operationId, rule}) for an empty id, a missing function or an id registered as a query; sync.storage.hook_signature (22023) for another signature. Owner-only.$$;

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

CREATE FUNCTION syncular.register_queries(ir jsonb, max_rows integer DEFAULT 1000,
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

CREATE FUNCTION syncular.operations_http(request bytea, partition text, actor_id text,
                                         content_type text DEFAULT 'application/vnd.syncular.operations.v1+json')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_http';
COMMENT ON FUNCTION syncular.operations_http(bytea, text, text, text) IS
$$POST <mount>/operations as one row (REMOTE.md revision 1 §5): one remote operation request in, exactly what the HTTP endpoint answers out, inside the caller's transaction (the operation runs in a subtransaction: a failure writes nothing).
request: one encoded request object (UTF-8 JSON, the tagged value encoding of §4): {revision: 1, kind: "query" | "command", clientId, operationId, params, requestId (commands)}; partition and actor_id: what host authentication decided (§1); content_type: the request's Content-Type.
Success: 200, application/vnd.syncular.operations.v1+json, the encoded {revision, kind: "query", operationId, rows, maxCommitSeq} (rows and maxCommitSeq read in one snapshot, at most maxRows rows, each with the declared result columns normalized to their types) or {revision, kind: "command", operationId, requestId, status: "applied" | "cached" | "rejected", commitSeq?, results}.
A content type other than application/vnd.syncular.operations.v1+json: 415 with a sync.invalid_request JSON body. Every operation failure: 200 with the encoded {revision, kind: "error", code, message, retryable} (§7): operation.invalid_request (undecodable or malformed value, unknown member, bad revision or kind, missing / extra / mistyped params, a request over syncular.max_request_bytes, an invalid command mutation plan, an empty mutation list), operation.unknown (no query / command under the id), operation.forbidden (scoped: a covered value the resolver does not allow, resolver failure; privileged or command: the authorize function returned false or NULL), operation.result_too_large (more than maxRows rows), operation.query_failed (the SQL failed, or a result value is missing, null where non-nullable, or does not fit its declared type), operation.execution_failed (an authorize or command function raised, or another server failure; the cause goes to the server log only), sync.invalid_client_id (clientId with the reserved ["remote-command", prefix or bound to another actor in the partition), sync.schema_not_ready and other sync.* codes of the push pipeline. Query cancellation is re-raised.
SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (the gateway role, docs/gateway.md); authorize, command and registered SQL run as the extension owner.$$;

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

CREATE FUNCTION syncular.operation_get_row(tbl text, row_id text) RETURNS jsonb
LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operation_get_row';
COMMENT ON FUNCTION syncular.operation_get_row(text, text) IS
$$The authoritative getRow of a running remote command (REMOTE.md §3): the current row tbl / row_id of the command's partition as JSON (syncular.decode_row's mapping), read after the partition lock, or NULL when the row is absent or the actor's resolved write scopes do not cover it (command reads return only authorized rows). NULL arguments give NULL.
Errors: operation.invalid_request (SQLSTATE 22023) when called outside a command function run by syncular.operations_http, or for a table that is not synced. Owner-only (command functions run as the extension owner).$$;
