-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- Comments rewritten on main after the version bump (resolver failure logging, debug_render's
-- escapes): the same text as src/sql/20_hooks.sql and src/sql/36_debug.sql.

COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (DESIGN.md decision 7; data-model-and-storage.md §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;

COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';

-- ---------------------------------------------------------------------------------------------
-- CRDT columns (SPEC §5.10): the merger registry, syncular.crdt_merge, and ensure_schema's
-- crdtType rule (yjs-doc or a registered type).  Same text as src/sql/26_crdt.sql and
-- syncular._compile_schema in src/sql/10_schema.sql.

CREATE TABLE syncular.sync_crdt_mergers (
  crdt_type TEXT PRIMARY KEY CHECK (crdt_type <> ''),
  fn        REGPROCEDURE NOT NULL
);
COMMENT ON TABLE syncular.sync_crdt_mergers IS
  'CRDT merger registry (SPEC §5.10.2): crdtType -> fn(stored bytea, incoming bytea) RETURNS bytea. Written by syncular.set_crdt_merger; read by every push that merges a crdt column.';
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_crdt_mergers', '');
REVOKE ALL ON syncular.sync_crdt_mergers FROM PUBLIC;

CREATE FUNCTION syncular._crdt_type_known(crdt_type text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT crdt_type = 'yjs-doc'
      OR EXISTS (SELECT 1 FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = _crdt_type_known.crdt_type)
$$;
COMMENT ON FUNCTION syncular._crdt_type_known(text) IS
  'Internal. True when crdt_type has a merger: the built-in yjs-doc or a type registered in syncular.sync_crdt_mergers (SPEC §5.10.1: ensure_schema refuses any other). NULL for NULL; raises nothing.';

CREATE FUNCTION syncular.set_crdt_merger(crdt_type text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF crdt_type IS NULL OR crdt_type = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'crdt_type must be a non-empty string',
                            jsonb_build_object('crdtType', crdt_type));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = set_crdt_merger.crdt_type;
  ELSE
    PERFORM syncular._check_hook_signature('crdt_merger', fn,
      ARRAY['bytea', 'bytea']::regtype[], 'bytea'::regtype, false,
      '(stored bytea, incoming bytea) RETURNS bytea, not STRICT');
    INSERT INTO syncular.sync_crdt_mergers AS m (crdt_type, fn) VALUES (set_crdt_merger.crdt_type, fn)
      ON CONFLICT ON CONSTRAINT sync_crdt_mergers_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
END
$$;
COMMENT ON FUNCTION syncular.set_crdt_merger(text, regprocedure) IS
$$Registers the merger of one crdtType (SPEC §5.10.2), replacing any previous one, or unregisters it when fn is NULL.
fn must be a plain, non-STRICT function (stored bytea, incoming bytea) RETURNS bytea (argument names are free); stored is NULL for a new row or a NULL column. It must be commutative, associative and idempotent over the values it merges. Every applied upsert that presents the column stores, logs and serves fn(stored, incoming) (§5.10.3), called in the push transaction inside an internal subtransaction.
yjs-doc needs no registration (the built-in C merger); registering yjs-doc replaces the built-in, unregistering it restores it. ensure_schema refuses a crdt column whose crdtType is neither yjs-doc nor registered: register before ensure_schema. Unregistering a type the schema still uses is allowed; a push that presents such a column is then rejected with sync.crdt_merge_failed ("no CRDT merger registered"), as is a registration whose function was dropped.
At run time a merger that raises (the text goes to the server log) or returns NULL rejects the commit with sync.crdt_merge_failed ("CRDT merger failed"); serialization failures, resource errors, cancels and internal errors are re-raised.
Stored in syncular.sync_crdt_mergers. Owner-only.
Errors: sync.invalid_request (SQLSTATE 22023; details {crdtType}) for a NULL or empty crdt_type; sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a set-returning or variadic function.$$;

CREATE FUNCTION syncular.crdt_merge(crdt_type text, stored bytea, incoming bytea) RETURNS bytea
LANGUAGE c SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_crdt_merge';
COMMENT ON FUNCTION syncular.crdt_merge(text, bytea, bytea) IS
$$The merge a push applies to a crdt column (SPEC §5.10.2, §5.10.3): merge(stored, incoming) with the merger registered for crdt_type, else the built-in yjs-doc merger for 'yjs-doc'. stored NULL = no state yet.
yjs-doc: stored and incoming are Yjs updates (format v1; a document state is an update; empty bytes = the empty update); the result is one update equivalent to applying both: the structs of both unioned per client in clock order (a range present in both written once, a partly covered struct sliced, gaps kept as Skip structs) and the delete sets unioned. The result is canonical, so merge(a, b) = merge(b, a) and merge(m, m) = m byte for byte, and associative in document state. Bounds: at most 1048576 structs and 1048576 delete ranges over both inputs, `any` values nested at most 64 deep, JSON at most 512 deep; strings must be UTF-8, JSON contents valid JSON, clocks below 2^53.
Errors: sync.crdt_merge_failed (SQLSTATE XX000; details {crdtType, reason}) with message "no CRDT merger registered" (unknown type, or its registered function was dropped) or "CRDT merger failed" (a malformed update, e.g. reason "malformed Yjs update: truncated integer at byte 9", or a merger that raised or returned NULL); sync.invalid_request (SQLSTATE 22023) when crdt_type or incoming is NULL. Owner-only.$$;
REVOKE EXECUTE ON FUNCTION syncular._crdt_type_known(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.set_crdt_merger(text, regprocedure) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.crdt_merge(text, bytea, bytea) FROM PUBLIC;

CREATE OR REPLACE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
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
