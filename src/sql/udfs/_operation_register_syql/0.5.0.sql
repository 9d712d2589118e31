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
