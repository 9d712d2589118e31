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
    results := results || jsonb_build_array(syncular.register_query(
      qname, src,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', c ->> 'name', 'type', c ->> 'type',
                                                    'nullable', coalesce((c -> 'nullable')::text::boolean, true))
                                 ORDER BY n), '[]')
         FROM jsonb_array_elements(coalesce(q -> 'columns', '[]')) WITH ORDINALITY AS x(c, n)),
      (SELECT coalesce(array_agg(DISTINCT t), '{}') FROM jsonb_array_elements_text(coalesce(q -> 'tables', '[]')) t),
      (SELECT coalesce(jsonb_agg(jsonb_build_object('name', p ->> 'name', 'type', p ->> 'type') ORDER BY n), '[]')
         FROM jsonb_array_elements(q -> 'params') WITH ORDINALITY AS x(p, n)),
      CASE WHEN fn IS NULL THEN 'scoped' ELSE 'privileged' END,
      CASE WHEN fn IS NULL THEN cov ELSE '[]' END, fn, max_rows));
  END LOOP;
  RETURN jsonb_build_object('queries', results);
END
$$;
