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
