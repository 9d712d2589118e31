-- schema_compile_edges: the corners of the compile rules (data-model-and-storage.md §2.2-§2.5,
-- §6) where a compiler could quietly differ: the scope pattern grammar (colons in the prefix,
-- a trailing newline, multibyte prefixes), onDelete spelling (case, spaces), non-string index
-- columns, JSON null where an array is expected, a version written 1.0 or 1e2, irVersion 1.0,
-- hashed physical index names and their collisions.  Written against the plpgsql compiler and
-- kept when the compiler moved to C (src/schema_compile.c): every line is the same.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_schema_compile_edges;
\c syncular_t_schema_compile_edges
CREATE EXTENSION syncular;
\set SHOW_CONTEXT never

-- outcome(ir, path): the compiled value at path, or the refusal's SQLSTATE, message, DETAIL, HINT
CREATE FUNCTION pg_temp.outcome(ir jsonb, path text[] DEFAULT '{}') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; hnt text;
BEGIN
  RETURN 'ok ' || (syncular._compile_schema(ir, 'app') #> path)::text;
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  RETURN st || ' ' || msg || coalesce(' | ' || nullif(det, ''), '') || coalesce(' | HINT ' || nullif(hnt, ''), '');
END
$$;

\set base '{"version": 1, "tables": [{"name": "lists", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "org", "type": "string", "nullable": false}], "scopes": ["org:{org}"]}, {"name": "todos", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "org", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": true}], "scopes": [{"pattern": "org:{org}", "column": "org"}], "indexes": [{"name": "by_list", "columns": ["list_id"]}], "references": [{"column": "list_id", "parentTable": "lists", "onDelete": "cascade"}]}]}'

\set one '{"version": 1, "tables": [{"name": "t", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "org", "type": "string", "nullable": false}], "scopes": ["org:{org}"]}]}'

CREATE TEMP TABLE cases (n serial, label text, ir jsonb, path text[] DEFAULT '{}');
INSERT INTO cases (label, ir, path) VALUES
  ('base', :'base', '{tables,1}'),
  ('version 1.0', jsonb_set(:'base', '{version}', '1.0'), '{version}'),
  ('version 1e2', jsonb_set(:'base', '{version}', '1e2'), '{version}'),
  ('version 2.5', jsonb_set(:'base', '{version}', '2.5'), '{version}'),
  ('version 2147483648', jsonb_set(:'base', '{version}', '2147483648'), '{version}'),
  ('irVersion 1.0', :'base'::jsonb || '{"irVersion": 1.0, "schemaVersion": 3}', '{version}'),
  ('irVersion null', :'base'::jsonb || '{"irVersion": null}', '{version}'),
  ('indexes null', jsonb_set(:'base', '{tables,1,indexes}', 'null'), '{tables,1,indexes}'),
  ('references null', jsonb_set(:'base', '{tables,1,references}', 'null'), '{tables,1,references}'),
  ('onDelete "  SET NULL "', jsonb_set(:'base', '{tables,1,references,0,onDelete}', '"  SET NULL "'), '{tables,1,references}'),
  ('onDelete "Set_Null"', jsonb_set(:'base', '{tables,1,references,0,onDelete}', '"Set_Null"'), '{tables,1,references}'),
  ('onDelete null', jsonb_set(:'base', '{tables,1,references,0,onDelete}', 'null'), '{tables,1,references}'),
  ('onDelete 5', jsonb_set(:'base', '{tables,1,references,0,onDelete}', '5'), '{tables,1,references}'),
  ('onDelete "\tcascade"', jsonb_set(:'base', '{tables,1,references,0,onDelete}', '"\tcascade"'), '{tables,1,references}'),
  ('self reference', jsonb_set(:'base', '{tables,1,references,0,parentTable}', '"todos"'), '{tables,1,references}'),
  ('index column 5', jsonb_set(:'base', '{tables,1,indexes,0,columns}', '["list_id", 5]'), '{}'),
  ('index column null', jsonb_set(:'base', '{tables,1,indexes,0,columns}', '["list_id", null]'), '{}'),
  ('index column object', jsonb_set(:'base', '{tables,1,indexes,0,columns}', '["list_id", {"a": [1]}]'), '{}'),
  ('index unique null', jsonb_set(:'base', '{tables,1,indexes,0,unique}', 'null'), '{tables,1,indexes}'),
  ('index name 60 bytes', jsonb_set(:'base', '{tables,1,indexes,0,name}', to_jsonb(repeat('x', 60))), '{tables,1,indexes}'),
  ('two long names', jsonb_insert(:'base', '{tables,1,indexes,1}', jsonb_build_object('name', repeat('y', 60), 'columns', '["org"]'::jsonb)), '{tables,1,indexes}'),
  ('declared ref_ name, covered', jsonb_insert(:'base', '{tables,1,indexes,1}', '{"name": "ref_todos_list_id", "columns": ["org"]}'), '{tables,1,indexes}'),
  ('declared ref_ name, clash', jsonb_set(:'base', '{tables,1,indexes}', '[{"name": "ref_todos_list_id", "columns": ["org"]}]'), '{}'),
  ('declared ref_ name, not materialized', jsonb_set(jsonb_set(:'base', '{tables,1,indexes}', '[{"name": "ref_todos_list_id", "columns": ["org"]}]'), '{tables,1,materialize}', 'false'), '{tables,1,indexes}'),
  ('scope a:b:{org}', jsonb_set(:'one', '{tables,0,scopes}', '["a:b:{org}"]'), '{tables,0,scopes}'),
  ('scope é:{org}', jsonb_set(:'one', '{tables,0,scopes}', '["é:{org}"]'), '{tables,0,scopes}'),
  ('scope a\n:{org}', jsonb_set(:'one', '{tables,0,scopes}', '["a\n:{org}"]'), '{tables,0,scopes}'),
  ('scope a:{org}\n', jsonb_set(:'one', '{tables,0,scopes}', '["a:{org}\n"]'), '{}'),
  ('scope a{:{org}', jsonb_set(:'one', '{tables,0,scopes}', '["a{:{org}"]'), '{}'),
  ('scope a:{o:rg}', jsonb_set(:'one', '{tables,0,scopes}', '["a:{o:rg}"]'), '{}'),
  ('scope :{org}', jsonb_set(:'one', '{tables,0,scopes}', '[":{org}"]'), '{}'),
  ('scope variable null', jsonb_set(:'one', '{tables,0,scopes}', '[{"pattern": "org:{org}", "variable": null}]'), '{}'),
  ('scope variable elsewhere', jsonb_set(:'one', '{tables,0,scopes}', '["org:{id}"]'), '{tables,0,scopes}'),
  ('crdtType null on string', jsonb_set(:'base', '{tables,0,columns,1,crdtType}', 'null'), '{tables,0,columns}'),
  ('encrypted null', jsonb_set(:'base', '{tables,0,columns,1,encrypted}', 'null'), '{tables,0,columns}'),
  ('encrypted declaredType crdt', jsonb_insert(:'base', '{tables,0,columns,2}', '{"name": "d", "type": "bytes", "nullable": true, "encrypted": true, "declaredType": "crdt"}'), '{}'),
  ('all other columns encrypted', jsonb_insert(:'base', '{tables,0,columns,2}', '{"name": "e", "type": "json", "nullable": true, "encrypted": true}'), '{tables,0,materialize}'),
  ('identifier 63 bytes of é', jsonb_insert(:'base', '{tables,0,columns,2}', jsonb_build_object('name', repeat('é', 32), 'type', 'string', 'nullable', true)), '{}'),
  ('column type null', jsonb_insert(:'base', '{tables,0,columns,2}', '{"name": "t", "type": null, "nullable": true}'), '{}'),
  ('IR null', 'null', '{}'),
  ('IR array', '[1]', '{}');
SELECT n, label, pg_temp.outcome(ir, path) AS outcome FROM cases ORDER BY n;
SELECT pg_temp.outcome(NULL) AS "IR SQL NULL";

\c :orig_db
DROP DATABASE syncular_t_schema_compile_edges;
