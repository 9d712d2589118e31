-- schema_compile: syncular.ensure_schema's compile step (data-model-and-storage.md §2.2-§2.5,
-- docs/compiled-schema.md): both input shapes, the shared IRs, and one refusal per rule.
-- pg_regress runs every test in one database: this one works in a private database so that
-- it neither sees nor leaves synced tables, registrations or catalog rows.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_schema_compile;
\c syncular_t_schema_compile
CREATE EXTENSION syncular;
\set VERBOSITY terse

-- try(ir): 'ok' or "<SQLSTATE> <message> | <details>" of the error ensure_schema raises.  A
-- success is rolled back too (the sentinel error), so every call starts from an empty database.
CREATE FUNCTION pg_temp.try(ir jsonb, checkpoints jsonb DEFAULT '[]', app text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  PERFORM syncular.ensure_schema(ir, checkpoints, app);
  RAISE EXCEPTION 'try: ok, rolled back' USING ERRCODE = 'XX999';
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  IF st = 'XX999' THEN
    RETURN 'ok';
  END IF;
  RETURN st || ' ' || msg || ' | ' || coalesce((det::jsonb ->> 'code') || ' ' || (det::jsonb -> 'details')::text, det, '');
END
$$;

-- ---------------------------------------------------------------------------------------------
-- the shared typegen IRs ($SYNCULAR_IR), or the same IRs inline when it is not set
\getenv ir_dir SYNCULAR_IR
\if :{?ir_dir}
\set have_ir `test -f ":ir_dir/quickstart-todos.ir.json" -a -f ":ir_dir/swift-notes.ir.json" && echo true || echo false`
\else
\set have_ir false
\endif
\if :have_ir
\set todos_ir `cat :ir_dir/quickstart-todos.ir.json`
\set notes_ir `cat :ir_dir/swift-notes.ir.json`
\else
\set todos_ir '{"irVersion":1,"schemaVersion":1,"schemaVersions":[{"version":1,"migrations":["0001_initial"]}],"tables":[{"name":"todos","primaryKey":"id","columns":[{"name":"id","type":"string","nullable":false},{"name":"list_id","type":"string","nullable":false},{"name":"title","type":"string","nullable":false},{"name":"done","type":"boolean","nullable":false},{"name":"position","type":"integer","nullable":false},{"name":"updated_at_ms","type":"integer","nullable":false}],"scopes":[{"pattern":"list:{list_id}","variable":"list_id","column":"list_id"}],"extensions":{}}],"subscriptions":[{"name":"todosInList","table":"todos","scopes":[{"variable":"list_id","values":[{"kind":"parameter","name":"listId"}]}]}],"extensions":{}}'
\set notes_ir '{"irVersion":1,"schemaVersion":1,"schemaVersions":[{"version":1,"migrations":["0001_initial"]}],"tables":[{"name":"notes","primaryKey":"id","columns":[{"name":"id","type":"string","nullable":false},{"name":"list_id","type":"string","nullable":false},{"name":"body","type":"string","nullable":false},{"name":"updated_at_ms","type":"integer","nullable":false}],"scopes":[{"pattern":"list:{list_id}","variable":"list_id","column":"list_id"}],"extensions":{}}],"subscriptions":[{"name":"listNotes","table":"notes","scopes":[{"variable":"list_id","values":[{"kind":"parameter","name":"listId"}]}]}],"extensions":{}}'
\endif

SELECT jsonb_pretty(syncular._compile_schema(:'todos_ir'::jsonb, 'public'));
SELECT syncular._layouts_text(syncular._compile_schema(:'todos_ir'::jsonb, 'public'));
SELECT jsonb_pretty(syncular._compile_schema(:'notes_ir'::jsonb, 'public'));
SELECT syncular._layouts_text(syncular._compile_schema(:'notes_ir'::jsonb, 'public'));

-- ---------------------------------------------------------------------------------------------
-- the plain server-schema shape: every column type, both scope notations, encrypted columns,
-- indexes (one with a name long enough to be hashed), references with onDelete normalization
\set base '{"version": 3, "tables": [{"name": "lists", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "owner_id", "type": "string", "nullable": false}, {"name": "title", "type": "string", "nullable": true}], "scopes": ["owner:{owner_id}"]}, {"name": "items", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": true}, {"name": "owner_id", "type": "string", "nullable": false}, {"name": "secret", "type": "string", "nullable": true, "encrypted": true, "declaredType": "string"}, {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"}, {"name": "blob", "type": "blob_ref", "nullable": true}, {"name": "score", "type": "float", "nullable": true}, {"name": "meta", "type": "json", "nullable": true}, {"name": "raw", "type": "bytes", "nullable": true}, {"name": "flag", "type": "boolean", "nullable": true}, {"name": "n", "type": "integer", "nullable": false}], "scopes": [{"pattern": "owner:{owner_id}", "column": "owner_id"}], "indexes": [{"name": "by_score", "columns": ["score"]}, {"name": "uniq_owner_n", "columns": ["owner_id", "n"], "unique": true}, {"name": "an_index_name_that_is_long_enough_to_need_the_fnv_hash_x", "columns": ["flag"]}], "references": [{"column": "list_id", "parentTable": "lists", "onDelete": " Set Null "}]}]}'
SELECT jsonb_pretty(syncular._compile_schema(:'base'::jsonb, 'app'));
SELECT syncular._layouts_text(syncular._compile_schema(:'base'::jsonb, 'app'));
SELECT * FROM syncular._index_plan(syncular._compile_schema(:'base'::jsonb, 'app'));
-- 8 + 55 bytes stays readable, 8 + 56 is hashed
SELECT syncular._physical_index_name(repeat('a', 55)) AS keep, syncular._physical_index_name(repeat('a', 56)) AS hashed,
       syncular._fnv1a64_hex('') AS fnv_empty, syncular._fnv1a64_hex('a') AS fnv_a, syncular._fnv1a64_hex('foobar') AS fnv_foobar;

-- onDelete: case-insensitive, normalized; omitted = restrict
SELECT r ->> 'onDelete' AS on_delete
  FROM unnest(ARRAY['"CASCADE"', '"restrict"', 'null', '"set_null"']) AS v(od),
       LATERAL (SELECT syncular._compile_schema(jsonb_set(:'base'::jsonb, '{tables,1,references,0,onDelete}', v.od::jsonb), 'app')
                         -> 'tables' -> 1 -> 'references' -> 0 AS r) x;
SELECT syncular._compile_schema(:'base'::jsonb #- '{tables,1,references,0,onDelete}', 'app') -> 'tables' -> 1 -> 'references';

-- materialize: explicit, and the default false when every non-PK, non-scope column is encrypted
SELECT syncular._compile_schema('{"version":1,"tables":[{"name":"vault","primaryKey":"id","columns":[{"name":"id","type":"string","nullable":false},{"name":"uid","type":"string","nullable":false},{"name":"a","type":"string","nullable":true,"encrypted":true},{"name":"b","type":"json","nullable":true,"encrypted":true}],"scopes":["user:{uid}"]}]}', NULL)
         -> 'tables' -> 0 -> 'materialize' AS all_encrypted_default,
       syncular._compile_schema('{"version":1,"tables":[{"name":"t","primaryKey":"id","columns":[{"name":"id","type":"string","nullable":false},{"name":"uid","type":"string","nullable":false}],"scopes":["user:{uid}"]}]}', NULL)
         -> 'tables' -> 0 -> 'materialize' AS key_and_scope_only,
       syncular._compile_schema(jsonb_set(:'base'::jsonb, '{tables,0,materialize}', 'false'), NULL)
         -> 'tables' -> 0 -> 'materialize' AS explicit_false;

-- scope object with a column that differs from the variable; integer / boolean / json keys
SELECT syncular._compile_schema('{"version":1,"tables":[{"name":"t","primaryKey":"k","columns":[{"name":"k","type":"integer","nullable":false},{"name":"org","type":"string","nullable":false}],"scopes":[{"pattern":"org:{org_id}","column":"org"}]}]}', NULL) -> 'tables' -> 0 -> 'scopes';
SELECT pg_temp.try(jsonb_set(jsonb_set(:'base'::jsonb, '{tables,0,columns,0,type}', to_jsonb(t)), '{tables,0,columns,0,crdtType}',
                             CASE WHEN t = 'crdt' THEN '"yjs-doc"' ELSE 'null' END::jsonb) #- '{tables,1,references}') AS pk_type, t
  FROM unnest(ARRAY['string', 'integer', 'boolean', 'json', 'float', 'bytes', 'crdt', 'blob_ref']) t;

-- ---------------------------------------------------------------------------------------------
-- one refusal per rule (sync.storage.schema_invalid, SQLSTATE 22023)
SELECT pg_temp.try('[]');
SELECT pg_temp.try(NULL);
SELECT pg_temp.try(jsonb_set(:'todos_ir'::jsonb, '{irVersion}', '2'));
SELECT pg_temp.try(:'todos_ir'::jsonb - 'schemaVersion');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{version}', v::jsonb)) AS version, v
  FROM unnest(ARRAY['0', '-1', '1.5', '"1"', 'null', '2147483648']) v;
SELECT pg_temp.try(:'base'::jsonb - 'version');
SELECT pg_temp.try('{"version": 1, "tables": {}}');
SELECT pg_temp.try('{"version": 1, "tables": ["t"]}');
-- identifiers: empty, too long (bytes, not characters), reserved prefixes
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,name}', to_jsonb(n))) AS table_name, n
  FROM unnest(ARRAY['', 'sync_lists', '_sync_lists', '_synchro', repeat('t', 64), repeat('é', 32)]) n;
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,name}', to_jsonb(repeat('é', 31) || 't')) #- '{tables,1,references}') AS table_name_63_bytes;
SELECT pg_temp.try(:'base'::jsonb #- '{tables,0,name}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,name}', to_jsonb(n))) AS column_name, n
  FROM unnest(ARRAY['', '_sync_payload', 'sync_x', repeat('c', 64)]) n;
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,0,name}', to_jsonb(n))) AS index_name, n
  FROM unnest(ARRAY['', 'sync_ix', repeat('i', 64)]) n;
-- duplicates
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,name}', '"lists"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,name}', '"owner_id"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,1,name}', '"by_score"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,indexes}', '[{"name": "by_score", "columns": ["title"]}]'));
-- columns
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns}', '[]'));
SELECT pg_temp.try(:'base'::jsonb #- '{tables,0,columns}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,type}', to_jsonb(t))) AS column_type, t
  FROM unnest(ARRAY['text', 'String', 'uuid']) t;
SELECT pg_temp.try(:'base'::jsonb #- '{tables,0,columns,2,nullable}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,nullable}', '"yes"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,encrypted}', '1'));
-- crdt
SELECT pg_temp.try(:'base'::jsonb #- '{tables,1,columns,4,crdtType}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,columns,4,crdtType}', '"automerge"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,columns,4,encrypted}', 'true'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,columns,2,crdtType}', '"yjs-doc"'));
-- primary key
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,primaryKey}', '"nope"'));
SELECT pg_temp.try(:'base'::jsonb #- '{tables,0,primaryKey}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,primaryKey}', '"secret"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,primaryKey}', to_jsonb(c))) AS pk_column, c
  FROM unnest(ARRAY['score', 'raw', 'doc', 'blob']) c;
-- scopes
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes}', '[]'));
SELECT pg_temp.try(:'base'::jsonb #- '{tables,0,scopes}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes,0}', to_jsonb(p))) AS pattern, p
  FROM unnest(ARRAY['owner', 'owner:owner_id', 'a:{owner_id}:{title}', 'a{b}:{owner_id}', 'owner:{owner:id}',
                    ':{owner_id}', 'owner:{}', 'owner:{owner_id}x', '{owner_id}']) p;
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes,0}', '42'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes,0}', '{"column": "owner_id"}'));
SELECT pg_temp.try(jsonb_set(:'todos_ir'::jsonb, '{tables,0,scopes,0,variable}', '"list"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes,0}', '"owner:{owner}"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,scopes,0,column}', '"nope"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,scopes,0,column}', '"secret"'));
-- one variable <-> one column: across tables, and within one table in both directions
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,scopes,0,column}', '"list_id"') #- '{tables,1,references}');
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes}', '["owner:{owner_id}", "user:{owner_id}"]'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,scopes}', '["owner:{owner_id}", {"pattern": "o:{oid}", "column": "owner_id"}]'));
-- indexes
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,0,columns}', '["nope"]'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,0,columns}', '[]'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,0,columns}', '["score", "score"]'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes,0,unique}', '"yes"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,indexes}', '{}'));
-- references
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references,0,parentTable}', '"nope"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references,0,column}', '"nope"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references,0,column}', '"n"'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references,0,column}', '"owner_id"'));
-- SET NULL on a (nullable) scope column would clear the row's scope: refused
SELECT pg_temp.try(jsonb_set(jsonb_set(:'base'::jsonb, '{tables,1,references,0,column}', '"owner_id"'),
                             '{tables,1,columns,2,nullable}', 'true'));
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references,0,onDelete}', to_jsonb(o))) AS on_delete, o
  FROM unnest(ARRAY['no action', 'set default', 'setnull', '']) o;
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,1,references}', :'base'::jsonb -> 'tables' -> 1 -> 'references' || '[{"column": "list_id", "parentTable": "lists"}]'));
SELECT pg_temp.try(jsonb_set(jsonb_set(:'base'::jsonb, '{tables,0,scopes}', '["owner:{owner_id}", "t:{title}"]'),
                             '{tables,0,columns,2,nullable}', 'false'));
-- materialize, checkpoints, app schema
SELECT pg_temp.try(jsonb_set(:'base'::jsonb, '{tables,0,materialize}', '"yes"'));
SELECT pg_temp.try(:'base'::jsonb, '{}');
SELECT pg_temp.try(:'base'::jsonb, NULL);
SELECT pg_temp.try(:'base'::jsonb, '[]', 'no_such_schema');
SELECT pg_temp.try(:'base'::jsonb, '[]', 'syncular');
SELECT pg_temp.try(:'base'::jsonb, '[]', 'pg_catalog');

-- nothing was written by any refusal
SELECT (SELECT count(*) FROM syncular.sync_schema_meta) AS markers, (SELECT count(*) FROM syncular.sync_settings) AS settings,
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'r') AS public_tables;

-- ---------------------------------------------------------------------------------------------
-- syncular.set_scope_resolver: signature (text, text, text) RETURNS jsonb, NULL unregisters; the
-- settings row is created with no app schema when ensure_schema has not run yet
CREATE FUNCTION pg_temp.good(actor text, part text, client text) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{}'::jsonb $$;
CREATE FUNCTION pg_temp.bad_ret(actor text, part text, client text) RETURNS json LANGUAGE sql AS $$ SELECT '{}'::json $$;
CREATE FUNCTION pg_temp.bad_args(actor text, part text) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{}'::jsonb $$;
CREATE FUNCTION pg_temp.bad_types(actor text, part text, client integer) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{}'::jsonb $$;
CREATE FUNCTION pg_temp.bad_setof(actor text, part text, client text) RETURNS SETOF jsonb LANGUAGE sql AS $$ SELECT '{}'::jsonb $$;
CREATE PROCEDURE pg_temp.bad_proc(actor text, part text, client text) LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION pg_temp.try_hook(fn text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  PERFORM syncular.set_scope_resolver(fn::regprocedure);
  RETURN 'ok';
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || coalesce((det::jsonb ->> 'code') || ' ' || (det::jsonb -> 'details' -> 'expected')::text, det, '');
END
$$;
SELECT f, pg_temp.try_hook('pg_temp.' || f) AS result
  FROM unnest(ARRAY['bad_ret(text,text,text)', 'bad_args(text,text)', 'bad_types(text,text,integer)',
                    'bad_setof(text,text,text)', 'bad_proc(text,text,text)']) f;
SELECT count(*) AS settings_rows FROM syncular.sync_settings;
SELECT syncular.set_scope_resolver('pg_temp.good(text,text,text)');
SELECT id, app_schema, compiled, scope_resolver::text LIKE 'pg_temp%.good(text,text,text)' AS resolver_set
  FROM syncular.sync_settings;
-- ensure_schema keeps the hook and fills in the app schema
SELECT syncular.ensure_schema(:'todos_ir');
SELECT app_schema, compiled -> 'version' AS version, scope_resolver IS NOT NULL AS resolver_kept FROM syncular.sync_settings;
SELECT syncular.set_scope_resolver(NULL);
SELECT app_schema, scope_resolver FROM syncular.sync_settings;

\c :orig_db
DROP DATABASE syncular_t_schema_compile;
