-- schema_migrate: syncular.ensure_schema creating, verifying and migrating the synced tables
-- (data-model-and-storage.md §4 sync_schema_meta, §6, §7; barrier-rfc0007.md §6.1).
-- pg_regress runs every test in one database: this one works in a private database so that
-- it neither sees nor leaves synced tables, registrations or catalog rows.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_schema_migrate;
\c syncular_t_schema_migrate
CREATE EXTENSION syncular;
\set VERBOSITY terse

-- try(...): the report of ensure_schema, or "<SQLSTATE> <message> | <code> <details>".
CREATE FUNCTION pg_temp.try(ir jsonb, app text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  RETURN syncular.ensure_schema(ir, '[]', app)::text;
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || coalesce((det::jsonb ->> 'code') || ' ' || (det::jsonb -> 'details')::text, det, '');
END
$$;
-- the physical layout of a synced table in public, and the indexes of public
CREATE FUNCTION pg_temp.cols(tbl text) RETURNS TABLE (tbl text, col name, typ text, not_null boolean)
LANGUAGE sql AS $$
  SELECT tbl, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a
   WHERE a.attrelid = ('public.' || quote_ident(tbl))::regclass AND a.attnum > 0 AND NOT a.attisdropped
   ORDER BY a.attnum
$$;
CREATE VIEW pg_temp.ix AS
  SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2;
-- u32 little-endian length + UTF-8 bytes (the codec's str)
CREATE FUNCTION pg_temp.str(s text) RETURNS bytea LANGUAGE sql AS $$
  SELECT set_byte(set_byte('\x00000000'::bytea, 0, octet_length(s) & 255), 1, octet_length(s) >> 8)
         || convert_to(s, 'UTF8')
$$;

-- v1: notes (materialized, two declared indexes, one with a name long enough to be hashed),
-- tags (not materialized: meta columns only, its declared index is not built), gone (retired in v2)
\set v1 '{"version": 1, "tables": [{"name": "notes", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "body", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"], "indexes": [{"name": "by_body", "columns": ["body"]}, {"name": "notes_by_list_and_body_with_a_name_that_is_long_enough_to_hash", "columns": ["list_id", "body"], "unique": true}]}, {"name": "tags", "primaryKey": "id", "materialize": false, "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "label", "type": "string", "nullable": true}, {"name": "weight", "type": "integer", "nullable": true}, {"name": "data", "type": "bytes", "nullable": true}, {"name": "flag", "type": "boolean", "nullable": true}, {"name": "meta", "type": "json", "nullable": true}, {"name": "score", "type": "float", "nullable": true}], "scopes": ["list:{list_id}"], "indexes": [{"name": "tags_by_label", "columns": ["label"]}]}, {"name": "gone", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}], "scopes": ["list:{list_id}"]}]}'

SELECT syncular.ensure_schema(:'v1');
SELECT c.* FROM unnest(ARRAY['notes', 'tags', 'gone']) t, pg_temp.cols(t) c;
SELECT * FROM pg_temp.ix;
-- a synced table leaves a tenth of each page free, so that most updates stay on their page (HOT)
SELECT relname, reloptions FROM pg_class WHERE oid IN ('notes'::regclass, 'tags'::regclass, 'gone'::regclass) ORDER BY 1;
-- their key in the "C" collation, as the catalog's (docs/storage.md "Collation of the keys")
SELECT attrelid::regclass AS tbl, attname, attcollation::regcollation FROM pg_attribute
 WHERE attrelid IN ('notes'::regclass, 'tags'::regclass) AND attname IN ('_sync_partition', '_sync_row_id')
 ORDER BY 1, 2;
SELECT 'sync_ix_' || syncular._fnv1a64_hex('notes_by_list_and_body_with_a_name_that_is_long_enough_to_hash') AS expected_hashed_name;
SELECT id, schema_version, layouts FROM syncular.sync_schema_meta;
SELECT id, app_schema, compiled -> 'version' AS version, compiled ->> 'appSchema' AS compiled_app_schema,
       jsonb_path_query_array(compiled, '$.tables[*].name') AS tables FROM syncular.sync_settings;

-- synced rows with hand-built full-row payloads (wire-format.md §4.2)
-- stored rows written as an old server left them, not as the capture triggers would (the
-- bypass lasts until the end of the transaction)
BEGIN;
SELECT syncular._capture_bypass(true);
--   notes n1: bitmap 00, str "n1", str "L1", str "hi";  n2: bitmap 04 (body NULL), str "n2", str "L1"
INSERT INTO notes (_sync_partition, _sync_row_id, id, list_id, body, _sync_server_version, _sync_scopes, _sync_payload) VALUES
  ('p1', 'n1', 'n1', 'L1', 'hi', 1, '{"list_id": "L1"}', '\x00020000006e31020000004c31020000006869'),
  ('p1', 'n2', 'n2', 'L1', NULL, 1, '{"list_id": "L1"}', '\x04020000006e32020000004c31');
-- 1200 more in p2 (body NULL), so the rewrite needs three batches of 500
INSERT INTO notes (_sync_partition, _sync_row_id, id, list_id, body, _sync_server_version, _sync_scopes, _sync_payload)
SELECT 'p2', 'b' || i, 'b' || i, 'L2', NULL, 1, '{"list_id": "L2"}', '\x04'::bytea || pg_temp.str('b' || i) || pg_temp.str('L2')
  FROM generate_series(1, 1200) i;
--   tags t1: bitmap 00, "t1", "L1", "red", i64 7, bytes 01 02 ff, bool true, json {"a":1}, f64 0.5
--   tags t2: bitmap fc (columns 2..7 NULL), "t2", "L1"
INSERT INTO tags (_sync_partition, _sync_row_id, _sync_server_version, _sync_scopes, _sync_payload) VALUES
  ('p1', 't1', 1, '{"list_id": "L1"}',
   '\x00020000007431020000004c3103000000726564070000000000000003000000' || '\x0102ff01070000007b2261223a317d000000000000e03f'::bytea),
  ('p1', 't2', 1, '{"list_id": "L1"}', '\xfc020000007432020000004c31');
INSERT INTO gone (_sync_partition, _sync_row_id, id, list_id, _sync_server_version, _sync_scopes, _sync_payload) VALUES
  ('p1', 'g1', 'g1', 'L1', 1, '{"list_id": "L1"}', '\x00020000006731020000004c31');
INSERT INTO syncular.sync_row_scopes (partition, tbl, var, value, row_id) VALUES
  ('p1', 'notes', 'list_id', 'L1', 'n1'), ('p1', 'gone', 'list_id', 'L1', 'g1');
INSERT INTO syncular.sync_blob_refs (partition, tbl, row_id, blob_id) VALUES
  ('p1', 'notes', 'n1', 'sha256:aa'), ('p1', 'gone', 'g1', 'sha256:bb');
COMMIT;
-- the payloads decode against the v1 schema
SELECT syncular.decode_row('notes', _sync_payload) FROM notes WHERE _sync_partition = 'p1' ORDER BY _sync_row_id;
SELECT syncular.decode_row('tags', _sync_payload) FROM tags ORDER BY _sync_row_id;
-- an operator index: never touched by ensure_schema
CREATE INDEX notes_operator_ix ON notes (list_id);

-- ---------------------------------------------------------------------------------------------
-- same version: verify only, no writes
SELECT xmin AS meta_xmin FROM syncular.sync_schema_meta \gset
SELECT xmin AS settings_xmin FROM syncular.sync_settings \gset
SELECT syncular.ensure_schema(:'v1');
SELECT (SELECT xmin FROM syncular.sync_schema_meta) = :'meta_xmin' AS marker_untouched,
       (SELECT xmin FROM syncular.sync_settings) = :'settings_xmin' AS settings_untouched;
-- the default app schema is the registered one, whatever the search_path; another one is refused
CREATE SCHEMA other;
SET search_path = other;
SELECT pg_temp.try(:'v1');
SELECT pg_temp.try(:'v1', 'other');
RESET search_path;
-- same version, different layouts: sync.storage.stored_layout_mismatch, nothing written
SELECT pg_temp.try(jsonb_set(:'v1'::jsonb, '{tables,0,columns,2,type}', '"integer"'));
SELECT pg_temp.try(jsonb_set(:'v1'::jsonb, '{tables,0,columns,2,nullable}', 'false'));
SELECT pg_temp.try(jsonb_insert(:'v1'::jsonb, '{tables,0,columns,3}', '{"name": "extra", "type": "string", "nullable": true}'));
SELECT pg_temp.try(jsonb_set(:'v1'::jsonb, '{tables,1,columns}', (:'v1'::jsonb #> '{tables,1,columns}') - 7));
SELECT pg_temp.try(:'v1'::jsonb #- '{tables,2}');
SELECT pg_temp.try(jsonb_insert(:'v1'::jsonb, '{tables,3}', '{"name": "later", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}], "scopes": ["list:{list_id}"]}'));
-- a marker whose layouts text is unreadable counts as {}: the first configured table mismatches
BEGIN;
UPDATE syncular.sync_schema_meta SET layouts = 'not json';
SELECT pg_temp.try(:'v1');
ROLLBACK;
SELECT (SELECT xmin FROM syncular.sync_schema_meta) = :'meta_xmin' AS marker_untouched,
       (SELECT xmin FROM syncular.sync_settings) = :'settings_xmin' AS settings_untouched,
       to_regclass('public.later') IS NULL AS later_not_created;

-- ---------------------------------------------------------------------------------------------
-- v2, an append-only bump:
--   notes appends priority (integer?) and extra (json?); by_body is replaced by by_priority
--   tags turns materialize on: its projection is backfilled from the payloads
--   gone is retired; fresh is new and references notes (a reference index is added)
\set v2 '{"version": 2, "tables": [{"name": "notes", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "body", "type": "string", "nullable": true}, {"name": "priority", "type": "integer", "nullable": true}, {"name": "extra", "type": "json", "nullable": true}], "scopes": ["list:{list_id}"], "indexes": [{"name": "by_priority", "columns": ["priority"]}, {"name": "notes_by_list_and_body_with_a_name_that_is_long_enough_to_hash", "columns": ["list_id", "body"], "unique": true}]}, {"name": "tags", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "label", "type": "string", "nullable": true}, {"name": "weight", "type": "integer", "nullable": true}, {"name": "data", "type": "bytes", "nullable": true}, {"name": "flag", "type": "boolean", "nullable": true}, {"name": "meta", "type": "json", "nullable": true}, {"name": "score", "type": "float", "nullable": true}], "scopes": ["list:{list_id}"], "indexes": [{"name": "tags_by_label", "columns": ["label"]}]}, {"name": "fresh", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "note_id", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"], "references": [{"column": "note_id", "parentTable": "notes", "onDelete": "cascade"}]}]}'

SELECT syncular.ensure_schema(:'v2');
SELECT c.* FROM unnest(ARRAY['notes', 'tags', 'fresh']) t, pg_temp.cols(t) c;
SELECT to_regclass('public.gone') AS gone_table;
SELECT * FROM pg_temp.ix;
SELECT id, schema_version, layouts FROM syncular.sync_schema_meta;
SELECT compiled -> 'version' AS version, jsonb_path_query_array(compiled, '$.tables[*].name') AS tables,
       jsonb_path_query_array(compiled, '$.tables[*].materialize') AS materialize FROM syncular.sync_settings;
-- payloads re-encoded with trailing NULLs: bitmap 00 -> 18, 04 -> 1c; the values unchanged
SELECT _sync_row_id, _sync_payload, priority, extra FROM notes WHERE _sync_partition = 'p1' ORDER BY 1;
SELECT syncular.decode_row('notes', _sync_payload) FROM notes WHERE _sync_partition = 'p1' ORDER BY _sync_row_id;
SELECT count(*) AS rows, count(*) FILTER (WHERE get_byte(_sync_payload, 0) = 28) AS reencoded,
       count(*) FILTER (WHERE _sync_payload = '\x1c'::bytea || pg_temp.str(_sync_row_id) || pg_temp.str('L2')) AS exact
  FROM notes WHERE _sync_partition = 'p2';
-- tags: payloads untouched (same column count), projection backfilled through decode_row
SELECT _sync_row_id, id, list_id, label, weight, data, flag, meta, score, _sync_payload FROM tags ORDER BY 1;
-- retired table's scope and blob rows are gone, the others stay
SELECT tbl, row_id FROM syncular.sync_row_scopes ORDER BY 1, 2;
SELECT tbl, row_id, blob_id FROM syncular.sync_blob_refs ORDER BY 1, 2;
-- v2 again: verified
SELECT syncular.ensure_schema(:'v2');

-- ---------------------------------------------------------------------------------------------
-- non-append-only bumps are refused before any change (v3 also adds a table and retires fresh)
\set v3 '{"version": 3, "tables": [{"name": "notes", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "body", "type": "string", "nullable": true}, {"name": "priority", "type": "integer", "nullable": true}, {"name": "extra", "type": "json", "nullable": true}], "scopes": ["list:{list_id}"]}, {"name": "tags", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "label", "type": "string", "nullable": true}, {"name": "weight", "type": "integer", "nullable": true}, {"name": "data", "type": "bytes", "nullable": true}, {"name": "flag", "type": "boolean", "nullable": true}, {"name": "meta", "type": "json", "nullable": true}, {"name": "score", "type": "float", "nullable": true}], "scopes": ["list:{list_id}"]}, {"name": "later", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}], "scopes": ["list:{list_id}"]}]}'
SELECT pg_temp.try(jsonb_set(:'v3'::jsonb, '{tables,0,columns}', (:'v3'::jsonb #> '{tables,0,columns}') - 4)) AS removed_last;
SELECT pg_temp.try(jsonb_set(:'v3'::jsonb, '{tables,0,columns}', (:'v3'::jsonb #> '{tables,0,columns}') - 2)) AS removed_middle;
SELECT pg_temp.try(jsonb_set(:'v3'::jsonb, '{tables,1,columns,3,type}', '"float"')) AS type_changed;
SELECT pg_temp.try(jsonb_set(:'v3'::jsonb, '{tables,1,columns,2,nullable}', 'false')) AS nullability_changed;
SELECT pg_temp.try(jsonb_set(:'v3'::jsonb, '{tables,1,columns,2,name}', '"title"')) AS renamed;
SELECT pg_temp.try(jsonb_insert(:'v3'::jsonb, '{tables,0,columns,5}', '{"name": "rank", "type": "integer", "nullable": false}')) AS appended_not_null;
SELECT pg_temp.try(jsonb_insert(:'v3'::jsonb, '{tables,0,columns,2}', '{"name": "rank", "type": "integer", "nullable": true}')) AS inserted_in_middle;
SELECT schema_version FROM syncular.sync_schema_meta;
SELECT to_regclass('public.fresh') IS NOT NULL AS fresh_kept, to_regclass('public.later') IS NULL AS later_not_created,
       (SELECT count(*) FROM pg_temp.cols('notes')) AS notes_columns,
       (SELECT count(*) FROM notes WHERE get_byte(_sync_payload, 0) & 24 = 24) AS notes_payloads_v2;
-- an older schema than the stored one is refused
SELECT pg_temp.try(:'v1');

-- ---------------------------------------------------------------------------------------------
-- v3 as declared (valid): later created, fresh retired; then v4 turns tags' materialize off
SELECT syncular.ensure_schema(:'v3');
SELECT to_regclass('public.fresh') AS fresh, to_regclass('public.later') AS later;
SELECT * FROM pg_temp.ix;
SELECT syncular.ensure_schema(jsonb_set(jsonb_set(:'v3'::jsonb, '{version}', '4'), '{tables,1,materialize}', 'false'));
SELECT c.* FROM pg_temp.cols('tags') c;
SELECT count(*) AS tags_rows, count(*) FILTER (WHERE _sync_payload = '\xfc020000007432020000004c31') AS t2_payload_kept FROM tags;
SELECT schema_version, layouts = syncular._layouts_text(syncular._compile_schema(jsonb_set(:'v3'::jsonb, '{version}', '4'))) AS layouts_match
  FROM syncular.sync_schema_meta;

\c :orig_db
DROP DATABASE syncular_t_schema_migrate;
