CREATE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_version     jsonb;
  v_tables      jsonb;
  t             jsonb;
  tname         text;
  tnames        text[] := '{}';
  c             jsonb;
  cname         text;
  ctype         text;
  cnull         boolean;
  cenc          boolean;
  ccrdt         text;
  cols          jsonb;
  colnames      text[];
  pk            text;
  pk_idx        integer;
  s             jsonb;
  pattern       text;
  m             text[];
  svar          text;
  scol          text;
  sidx          integer;
  scopes        jsonb;
  tvars         text[];
  tscols        text[];
  var_cols      jsonb := '{}';       -- variable -> column, across the whole schema
  ix            jsonb;
  ixname        text;
  ixcols        jsonb;
  ixcol         jsonb;
  indexes       jsonb;
  ixnames       text[] := '{}';      -- declared index names, across the whole schema
  mat           boolean;
  compiled_tbls jsonb := '[]';
  raw_refs      jsonb := '{}';       -- table -> raw references array (checked in pass 2)
  r             jsonb;
  rcol          text;
  rcol_idx      integer;
  rparent       text;
  parent        jsonb;
  ondel         text;
  refs          jsonb;
  refcols       text[];
  i             integer;
  v_out         jsonb;
BEGIN
  IF ir IS NULL OR jsonb_typeof(ir) <> 'object' THEN
    PERFORM syncular._schema_invalid('schema IR must be a JSON object', 'shape');
  END IF;

  -- the two input shapes differ in the version member and in the scope notation
  IF ir ? 'irVersion' THEN
    IF ir -> 'irVersion' <> '1'::jsonb THEN
      PERFORM syncular._schema_invalid('unsupported irVersion (only 1 is known)', 'ir_version');
    END IF;
    v_version := ir -> 'schemaVersion';
  ELSE
    v_version := ir -> 'version';
  END IF;
  IF v_version IS NULL OR jsonb_typeof(v_version) <> 'number'
     OR v_version::text::numeric <> trunc(v_version::text::numeric)
     OR v_version::text::numeric < 1 OR v_version::text::numeric > 2147483647 THEN
    PERFORM syncular._schema_invalid('schema version must be an integer between 1 and 2147483647',
                                     'version');
  END IF;

  v_tables := ir -> 'tables';
  IF v_tables IS NULL OR jsonb_typeof(v_tables) <> 'array' THEN
    PERFORM syncular._schema_invalid('schema IR must have a tables array', 'tables');
  END IF;

  -- pass 1: tables, columns, primary key, scopes, indexes
  FOR t IN SELECT value FROM jsonb_array_elements(v_tables) WITH ORDINALITY ORDER BY ordinality LOOP
    IF jsonb_typeof(t) <> 'object' THEN
      PERFORM syncular._schema_invalid('a table must be a JSON object', 'table_shape');
    END IF;
    tname := syncular._jstr(t, 'name');
    PERFORM syncular._check_identifier(tname, tname, NULL);
    IF tname = ANY (tnames) THEN
      PERFORM syncular._schema_invalid('duplicate table name', 'duplicate_table', tname);
    END IF;
    tnames := tnames || tname;

    -- columns
    IF jsonb_typeof(t -> 'columns') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'columns') = 0 THEN
      PERFORM syncular._schema_invalid('a table must have a non-empty columns array', 'columns', tname);
    END IF;
    cols := '[]';
    colnames := '{}';
    FOR c IN SELECT value FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(c) <> 'object' THEN
        PERFORM syncular._schema_invalid('a column must be a JSON object', 'column_shape', tname);
      END IF;
      cname := syncular._jstr(c, 'name');
      PERFORM syncular._check_identifier(cname, tname, cname);
      IF cname = ANY (colnames) THEN
        PERFORM syncular._schema_invalid('duplicate column name', 'duplicate_column', tname, cname);
      END IF;
      colnames := colnames || cname;
      ctype := syncular._jstr(c, 'type');
      IF ctype IS NULL OR syncular._pg_type(ctype) IS NULL THEN
        PERFORM syncular._schema_invalid('unknown column type', 'column_type', tname, cname,
                                         jsonb_build_object('type', c -> 'type'));
      END IF;
      IF jsonb_typeof(c -> 'nullable') IS DISTINCT FROM 'boolean' THEN
        PERFORM syncular._schema_invalid('column nullable must be a boolean', 'column_nullable',
                                         tname, cname);
      END IF;
      cnull := (c -> 'nullable')::text::boolean;
      IF coalesce(jsonb_typeof(c -> 'encrypted'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('column encrypted must be a boolean', 'column_encrypted',
                                         tname, cname);
      END IF;
      cenc := coalesce((c ->> 'encrypted')::boolean, false);
      ccrdt := NULL;
      IF ctype = 'crdt' THEN
        IF cenc THEN
          PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                           tname, cname);
        END IF;
        -- §5.10.1: an unknown crdtType is refused here, before serving (known: the built-in
        -- yjs-doc and every type registered with set_crdt_merger, so register first)
        ccrdt := syncular._jstr(c, 'crdtType');
        IF ccrdt IS NULL OR NOT syncular._crdt_type_known(ccrdt) THEN
          PERFORM syncular._schema_invalid('a crdt column must declare a known crdtType', 'crdt_type',
                                           tname, cname, jsonb_build_object('crdtType', ccrdt));
        END IF;
      ELSIF coalesce(jsonb_typeof(c -> 'crdtType'), 'null') <> 'null' THEN
        PERFORM syncular._schema_invalid('crdtType is only allowed on a crdt column', 'crdt_type',
                                         tname, cname);
      END IF;
      IF cenc AND syncular._jstr(c, 'declaredType') = 'crdt' THEN
        PERFORM syncular._schema_invalid('a crdt column cannot be encrypted', 'encrypted_crdt',
                                         tname, cname);
      END IF;
      cols := cols || jsonb_build_array(jsonb_build_object(
                'name', cname,
                'type', CASE WHEN cenc THEN 'bytes' ELSE ctype END,
                'nullable', cnull,
                'crdtType', ccrdt,
                'encrypted', cenc));
    END LOOP;

    -- primary key
    pk := syncular._jstr(t, 'primaryKey');
    pk_idx := array_position(colnames, pk) - 1;
    IF pk IS NULL OR pk_idx IS NULL THEN
      PERFORM syncular._schema_invalid('primary key must name a column of the table', 'primary_key',
                                       tname, pk);
    END IF;
    IF (cols -> pk_idx -> 'encrypted')::text::boolean THEN
      PERFORM syncular._schema_invalid('the primary key cannot be encrypted', 'primary_key_encrypted',
                                       tname, pk);
    END IF;
    IF cols -> pk_idx ->> 'type' NOT IN ('string', 'integer', 'boolean', 'json') THEN
      PERFORM syncular._schema_invalid('primary key type must be string, integer, boolean or json',
                                       'primary_key_type', tname, pk,
                                       jsonb_build_object('type', cols -> pk_idx -> 'type'));
    END IF;

    -- scopes (declaration order)
    IF jsonb_typeof(t -> 'scopes') IS DISTINCT FROM 'array' OR jsonb_array_length(t -> 'scopes') = 0 THEN
      PERFORM syncular._schema_invalid('a table must declare at least one scope', 'scopes_missing', tname);
    END IF;
    scopes := '[]';
    tvars := '{}';
    tscols := '{}';
    FOR s IN SELECT value FROM jsonb_array_elements(t -> 'scopes') WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(s) = 'string' THEN
        pattern := s #>> '{}';
        scol := NULL;
        svar := NULL;
      ELSIF jsonb_typeof(s) = 'object' THEN
        pattern := syncular._jstr(s, 'pattern');
        scol := syncular._jstr(s, 'column');
        svar := syncular._jstr(s, 'variable');
        IF (s ? 'column' AND scol IS NULL) OR (s ? 'variable' AND svar IS NULL) THEN
          PERFORM syncular._schema_invalid('scope column and variable must be strings', 'scope_shape',
                                           tname);
        END IF;
      ELSE
        PERFORM syncular._schema_invalid('a scope must be a pattern string or an object with a pattern',
                                         'scope_shape', tname);
      END IF;
      m := regexp_match(pattern, '^([^{}]+):\{([^{}:]+)\}$');
      IF pattern IS NULL OR m IS NULL THEN
        PERFORM syncular._schema_invalid(
          'scope pattern must be prefix:{variable} with exactly one variable (no braces in the prefix, no braces or colons in the variable)',
          'scope_pattern', tname, NULL, jsonb_build_object('pattern', pattern));
      END IF;
      IF svar IS NOT NULL AND svar <> m[2] THEN
        PERFORM syncular._schema_invalid('scope variable does not match its pattern', 'scope_variable',
                                         tname, NULL, jsonb_build_object('pattern', pattern, 'variable', svar));
      END IF;
      svar := m[2];
      scol := coalesce(scol, svar);
      sidx := array_position(colnames, scol) - 1;
      IF sidx IS NULL THEN
        PERFORM syncular._schema_invalid('scope names no column of the table', 'scope_column',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      IF (cols -> sidx -> 'encrypted')::text::boolean THEN
        PERFORM syncular._schema_invalid('a scope column cannot be encrypted', 'scope_encrypted',
                                         tname, scol, jsonb_build_object('pattern', pattern));
      END IF;
      -- one variable <-> exactly one column
      IF svar = ANY (tvars) OR scol = ANY (tscols)
         OR (var_cols ? svar AND var_cols ->> svar <> scol) THEN
        PERFORM syncular._schema_invalid('a scope variable must map to exactly one column',
                                         'scope_variable_column', tname, scol,
                                         jsonb_build_object('variable', svar));
      END IF;
      tvars := tvars || svar;
      tscols := tscols || scol;
      var_cols := var_cols || jsonb_build_object(svar, scol);
      scopes := scopes || jsonb_build_array(jsonb_build_object(
                  'pattern', m[1] || ':{' || m[2] || '}', 'prefix', m[1], 'variable', svar,
                  'column', scol, 'columnIndex', sidx));
    END LOOP;

    -- indexes
    IF coalesce(jsonb_typeof(t -> 'indexes'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('indexes must be an array', 'index_shape', tname);
    END IF;
    indexes := '[]';
    FOR ix IN SELECT value FROM jsonb_array_elements(coalesce(t -> 'indexes', '[]'))
                WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(ix) <> 'object' THEN
        PERFORM syncular._schema_invalid('an index must be a JSON object', 'index_shape', tname);
      END IF;
      ixname := syncular._jstr(ix, 'name');
      PERFORM syncular._check_identifier(ixname, tname, NULL, jsonb_build_object('index', ixname));
      IF ixname = ANY (ixnames) THEN
        PERFORM syncular._schema_invalid('duplicate index name', 'duplicate_index', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      ixnames := ixnames || ixname;
      ixcols := ix -> 'columns';
      IF jsonb_typeof(ixcols) IS DISTINCT FROM 'array' OR jsonb_array_length(ixcols) = 0 THEN
        PERFORM syncular._schema_invalid('an index must list at least one column', 'index_shape',
                                         tname, NULL, jsonb_build_object('index', ixname));
      END IF;
      FOR ixcol IN SELECT value FROM jsonb_array_elements(ixcols) LOOP
        IF jsonb_typeof(ixcol) <> 'string' OR NOT ((ixcol #>> '{}') = ANY (colnames)) THEN
          PERFORM syncular._schema_invalid('index names no column of the table', 'index_column',
                                           tname, ixcol #>> '{}', jsonb_build_object('index', ixname));
        END IF;
      END LOOP;
      IF (SELECT count(DISTINCT value) FROM jsonb_array_elements(ixcols)) <> jsonb_array_length(ixcols) THEN
        PERFORM syncular._schema_invalid('an index lists a column twice', 'index_column', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      IF coalesce(jsonb_typeof(ix -> 'unique'), 'null') NOT IN ('null', 'boolean') THEN
        PERFORM syncular._schema_invalid('index unique must be a boolean', 'index_shape', tname, NULL,
                                         jsonb_build_object('index', ixname));
      END IF;
      indexes := indexes || jsonb_build_array(jsonb_build_object(
                   'name', ixname, 'columns', ixcols,
                   'unique', coalesce((ix ->> 'unique')::boolean, false),
                   'physical', syncular._physical_index_name(ixname)));
    END LOOP;

    -- materialize: default true, except when every non-PK, non-scope column is encrypted
    -- (decision: a table with no such column at all stays materialized)
    IF coalesce(jsonb_typeof(t -> 'materialize'), 'null') NOT IN ('null', 'boolean') THEN
      PERFORM syncular._schema_invalid('materialize must be a boolean', 'materialize', tname);
    END IF;
    IF jsonb_typeof(t -> 'materialize') = 'boolean' THEN
      mat := (t -> 'materialize')::text::boolean;
    ELSE
      SELECT NOT (count(*) > 0 AND bool_and((e.value -> 'encrypted')::text::boolean))
        INTO mat
        FROM jsonb_array_elements(cols) WITH ORDINALITY AS e(value, n)
       WHERE e.n - 1 <> pk_idx AND NOT ((e.value ->> 'name') = ANY (tscols));
    END IF;

    IF coalesce(jsonb_typeof(t -> 'references'), 'null') NOT IN ('null', 'array') THEN
      PERFORM syncular._schema_invalid('references must be an array', 'reference_shape', tname);
    END IF;
    raw_refs := raw_refs || jsonb_build_object(tname, coalesce(t -> 'references', '[]'));

    compiled_tbls := compiled_tbls || jsonb_build_array(jsonb_build_object(
      'name', tname, 'materialize', mat, 'primaryKey', pk, 'pkIndex', pk_idx,
      'columns', cols, 'scopes', scopes, 'indexes', indexes, 'references', '[]'::jsonb));
  END LOOP;

  -- pass 2: declared references (§2.5); every table is known now
  FOR i IN 0 .. jsonb_array_length(compiled_tbls) - 1 LOOP
    t := compiled_tbls -> i;
    tname := t ->> 'name';
    SELECT array_agg(e ->> 'name' ORDER BY n) INTO colnames
      FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY AS x(e, n);
    refs := '[]';
    refcols := '{}';
    FOR r IN SELECT value FROM jsonb_array_elements(raw_refs -> tname) WITH ORDINALITY ORDER BY ordinality LOOP
      IF jsonb_typeof(r) <> 'object' THEN
        PERFORM syncular._schema_invalid('a reference must be a JSON object', 'reference_shape', tname);
      END IF;
      rcol := syncular._jstr(r, 'column');
      rcol_idx := array_position(colnames, rcol) - 1;
      IF rcol_idx IS NULL THEN
        PERFORM syncular._schema_invalid('reference names no column of the table', 'reference_column',
                                         tname, rcol);
      END IF;
      IF rcol = ANY (refcols) THEN
        PERFORM syncular._schema_invalid('a column declares more than one reference', 'duplicate_reference',
                                         tname, rcol);
      END IF;
      refcols := refcols || rcol;
      rparent := syncular._jstr(r, 'parentTable');
      SELECT e INTO parent FROM jsonb_array_elements(compiled_tbls) e WHERE e ->> 'name' = rparent;
      IF rparent IS NULL OR parent IS NULL THEN
        PERFORM syncular._schema_invalid('reference names an unknown parent table', 'reference_parent',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      IF parent -> 'columns' -> (parent ->> 'pkIndex')::int ->> 'type'
         IS DISTINCT FROM t -> 'columns' -> rcol_idx ->> 'type' THEN
        PERFORM syncular._schema_invalid('reference column type differs from the parent primary key type',
                                         'reference_type', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(parent -> 'scopes') e)
         IS DISTINCT FROM
         (SELECT array_agg(e ->> 'pattern' ORDER BY e ->> 'pattern') FROM jsonb_array_elements(t -> 'scopes') e) THEN
        PERFORM syncular._schema_invalid('a child table must declare the same scope patterns as its parent',
                                         'reference_scopes', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      IF r ? 'onDelete' AND jsonb_typeof(r -> 'onDelete') <> 'null' THEN
        ondel := lower(btrim(syncular._jstr(r, 'onDelete')));
      ELSE
        ondel := 'restrict';
      END IF;
      ondel := CASE ondel WHEN 'restrict' THEN 'restrict' WHEN 'cascade' THEN 'cascade'
                          WHEN 'set null' THEN 'set_null' WHEN 'set_null' THEN 'set_null' END;
      IF ondel IS NULL THEN
        PERFORM syncular._schema_invalid('reference onDelete must be restrict, cascade or set null',
                                         'reference_on_delete', tname, rcol,
                                         jsonb_build_object('onDelete', r -> 'onDelete'));
      END IF;
      IF ondel = 'set_null' AND NOT (t -> 'columns' -> rcol_idx -> 'nullable')::text::boolean THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL needs a nullable column', 'reference_set_null',
                                         tname, rcol, jsonb_build_object('parentTable', rparent));
      END IF;
      -- a cascaded SET NULL keeps the row's stored scopes, so it must never clear a scope column
      IF ondel = 'set_null' AND EXISTS (SELECT 1 FROM jsonb_array_elements(t -> 'scopes') e
                                         WHERE e ->> 'column' = rcol) THEN
        PERFORM syncular._schema_invalid('ON DELETE SET NULL cannot clear a scope column',
                                         'reference_set_null_scope', tname, rcol,
                                         jsonb_build_object('parentTable', rparent));
      END IF;
      refs := refs || jsonb_build_array(jsonb_build_object(
                'column', rcol, 'columnIndex', rcol_idx, 'parentTable', rparent, 'onDelete', ondel));
    END LOOP;
    compiled_tbls := jsonb_set(compiled_tbls, ARRAY[i::text, 'references'], refs);
  END LOOP;

  v_out := jsonb_build_object('version', v_version::text::integer, 'appSchema', app_schema,
                              'tables', compiled_tbls);

  -- physical index names (declared and reference indexes) must not collide
  IF (SELECT count(*) <> count(DISTINCT physical) FROM syncular._index_plan(v_out)) THEN
    PERFORM syncular._schema_invalid('two indexes map to the same physical index name',
                                     'duplicate_index');
  END IF;
  RETURN v_out;
END
$$;
