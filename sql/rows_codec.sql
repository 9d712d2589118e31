-- rows_codec: syncular.encode_row / encode_sparse_row / decode_row / decode_sparse_row
-- (src/rows.c): the JSON mapping of every column type, exact bytes, round trips, error paths.
\set VERBOSITY terse

-- pg_regress runs every test of a run in one database: this test runs in one transaction that
-- starts from an empty syncular state (synced tables of an earlier registration dropped, catalog
-- emptied) and is rolled back at the end, so no other test sees its effects.
BEGIN;
SET LOCAL client_min_messages = warning;
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT s.app_schema, e->>'name' AS name
             FROM syncular.sync_settings s, jsonb_array_elements(s.compiled->'tables') e
            WHERE s.compiled IS NOT NULL LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I.%I CASCADE', t.app_schema, t.name);
  END LOOP;
  FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'syncular' LOOP
    EXECUTE format('TRUNCATE syncular.%I', t.tablename);
  END LOOP;
END $$;
RESET client_min_messages;

-- try(sql): 'ok: <result>' or '<SQLSTATE> <message> | <code> <details>'
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || coalesce((det::jsonb ->> 'code') || ' ' || coalesce((det::jsonb -> 'details')::text, ''), det, '');
END $$;

-- before any schema is registered
SELECT pg_temp.try($$SELECT syncular.encode_row('items', '{"id": "x"}')$$);

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "items", "primaryKey": "id", "scopes": ["owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "n", "type": "integer", "nullable": false},
    {"name": "score", "type": "float", "nullable": true},
    {"name": "flag", "type": "boolean", "nullable": true},
    {"name": "meta", "type": "json", "nullable": true},
    {"name": "raw", "type": "bytes", "nullable": true},
    {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
    {"name": "blob", "type": "blob_ref", "nullable": true}]},
  {"name": "tags", "primaryKey": "n", "scopes": ["owner:{owner_id}"], "columns": [
    {"name": "n", "type": "integer", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false}]}]}') ->> 'action' AS action;

-- exact bytes of a small full row: null bitmap 0xe4 0x03 (bits 2, 5, 6, 7, 8, 9: title, flag, meta, raw,
-- doc, blob NULL),
-- then id, owner_id, n (i64 LE), score (f64 LE)
SELECT encode(syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": -2, "score": 1.5}'), 'hex') AS full_hex;
-- exact bytes of a sparse row: presence 0x09 0x00 (id, n), null bitmap over present columns 0x00
SELECT encode(syncular.encode_sparse_row('items', '{"id": "a", "n": 7}'), 'hex') AS sparse_hex;
-- present NULL: presence 0x05 0x00 (id, title), nulls 0x02 (the second present column)
SELECT encode(syncular.encode_sparse_row('items', '{"id": "a", "title": null}'), 'hex') AS sparse_null_hex;

-- every type through a full row and back
SELECT jsonb_pretty(syncular.decode_row('items', syncular.encode_row('items', $j${
  "id": "i-1", "owner_id": "o1", "title": "📝 déjà vu 𝄞 \"q\"\n",
  "n": 9007199254740991, "score": 0.1, "flag": false,
  "meta": {"b": [1, 2.5, "x", {"c": null}], "a": true},
  "raw": "AAEC/v8=", "doc": "AQL+",
  "blob": {"name": "f.png", "mediaType": "image/png", "byteLength": 12,
           "blobId": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}$j$)))
  AS every_type;
-- the same row is equal as jsonb (nothing lost)
SELECT syncular.decode_row('items', syncular.encode_row('items', r)) = r AS full_roundtrip
  FROM (VALUES ($j${"id": "i-1", "owner_id": "o1", "title": "", "n": -9007199254740991, "score": -1e300,
           "flag": true, "meta": "just a string", "raw": "", "doc": null, "blob": null}$j$::jsonb)) v(r);
-- absent keys are NULL in a full row; JSON null too
SELECT syncular.decode_row('items', syncular.encode_row('items', '{"id": "i-2", "owner_id": "o1", "n": 0, "meta": null}')) AS absent_is_null;
-- integer given as 12.000 is 12; float shortest round trip (0.1 + 0.2), tiny and negative zero
SELECT syncular.decode_row('items', syncular.encode_row('items', '{"id": "f", "owner_id": "o", "n": 12.000, "score": 0.30000000000000004}')) ->> 'n' AS n,
       syncular.decode_row('items', syncular.encode_row('items', '{"id": "f", "owner_id": "o", "n": 1, "score": 0.30000000000000004}')) ->> 'score' AS score,
       (syncular.decode_row('items', syncular.encode_row('items', '{"id": "f", "owner_id": "o", "n": 1, "score": 5e-324}')) ->> 'score')::float8 = 5e-324 AS tiny,
       syncular.decode_row('items', syncular.encode_row('items', '{"id": "f", "owner_id": "o", "n": 1, "score": -0}')) ->> 'score' AS neg_zero;
-- a json column stores PostgreSQL's jsonb text (keys in jsonb order, ", " and ": ")
SELECT position(convert_to('{"a": true, "b": [1, 2]}', 'UTF8') IN syncular.encode_row('items',
         '{"id": "j", "owner_id": "o", "n": 1, "meta": {"b": [1,2], "a": true}}')) > 0 AS json_text_is_pg_text;

-- sparse rows: absent columns omitted, present NULL kept
SELECT syncular.decode_sparse_row('items', syncular.encode_sparse_row('items', '{"id": "i-1", "title": null, "score": 2.5, "raw": "/w=="}')) AS sparse;
SELECT syncular.decode_sparse_row('items', syncular.encode_sparse_row('items', '{"id": "i-1"}')) AS sparse_pk_only;
-- integer primary key
SELECT syncular.decode_sparse_row('tags', syncular.encode_sparse_row('tags', '{"n": 42}')) AS int_pk;

-- json column text that jsonb cannot hold decodes to null: U+0000 escape, lone surrogate,
-- an exponent beyond numeric's range
SELECT syncular.decode_row('items', decode(replace(encode(syncular.encode_row('items',
         '{"id": "u", "owner_id": "o", "n": 1, "meta": {"k": "ABCDEF"}}'), 'hex'),
         encode('ABCDEF', 'hex'), encode(convert_to(E'\\u0000', 'UTF8'), 'hex')), 'hex')) -> 'meta' AS meta_u0000,
       syncular.decode_row('items', decode(replace(encode(syncular.encode_row('items',
         '{"id": "u", "owner_id": "o", "n": 1, "meta": {"k": "ABCDEF"}}'), 'hex'),
         encode('ABCDEF', 'hex'), encode(convert_to(E'\\ud800', 'UTF8'), 'hex')), 'hex')) -> 'meta' AS meta_lone_surrogate,
       syncular.decode_row('items', decode(replace(encode(syncular.encode_row('items',
         '{"id": "u", "owner_id": "o", "n": 1, "meta": 1234567}'), 'hex'),
         encode('1234567', 'hex'), encode('1e99999', 'hex')), 'hex')) -> 'meta' AS meta_huge_exponent;
-- a string holding U+0000 cannot become jsonb: a clear error
SELECT pg_temp.try($$SELECT syncular.decode_row('items', decode(replace(encode(syncular.encode_row('items',
         '{"id": "u", "owner_id": "o", "n": 1, "title": "QQQQ"}'), 'hex'), '51515151', '51510051'), 'hex'))$$) AS nul_in_string;

-- error paths
SELECT t, pg_temp.try(q) FROM (VALUES
  ('unknown table',        $$SELECT syncular.encode_row('nope', '{"id": "a"}')$$),
  ('unknown table decode', $$SELECT syncular.decode_row('nope', '\x00')$$),
  ('not an object',        $$SELECT syncular.encode_row('items', '[1, 2]')$$),
  ('scalar row',           $$SELECT syncular.encode_row('items', '"x"')$$),
  ('unknown column',       $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "nope": 1}')$$),
  ('null non-nullable',    $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o"}')$$),
  ('string as number',     $$SELECT syncular.encode_row('items', '{"id": 1, "owner_id": "o", "n": 1}')$$),
  ('integer as string',    $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": "1"}')$$),
  ('fractional integer',   $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1.5}')$$),
  ('integer above 2^53-1', $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 9007199254740992}')$$),
  ('integer below',        $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": -9007199254740992}')$$),
  ('float overflow',       $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "score": 1e999}')$$),
  ('float as string',      $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "score": "1"}')$$),
  ('boolean as number',    $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "flag": 1}')$$),
  ('bad base64',           $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "raw": "@@@"}')$$),
  ('bytes as array',       $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "doc": [1]}')$$),
  ('blob_ref as string',   $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "blob": "x"}')$$),
  ('blob_ref bad id',      $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "blob": {"blobId": "x", "byteLength": 1}}')$$),
  ('blob_ref extra key',   $$SELECT syncular.encode_row('items', '{"id": "a", "owner_id": "o", "n": 1, "blob": {"blobId": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "byteLength": 1, "x": 1}}')$$),
  ('sparse without pk',    $$SELECT syncular.encode_sparse_row('items', '{"title": "t"}')$$),
  ('sparse null pk',       $$SELECT syncular.encode_sparse_row('items', '{"id": null}')$$),
  ('decode garbage',       $$SELECT syncular.decode_row('items', '\x00')$$),
  ('decode trailing',      $$SELECT syncular.decode_row('tags', syncular.encode_row('tags', '{"n": 1, "owner_id": "o"}') || '\x00'::bytea)$$),
  ('decode sparse as full', $$SELECT syncular.decode_row('tags', syncular.encode_sparse_row('tags', '{"n": 1}'))$$),
  ('sparse absent pk',     $$SELECT syncular.decode_sparse_row('tags', '\x0200'::bytea || '\x00'::bytea || convert_to('o', 'UTF8'))$$)
) AS x(t, q);

-- NULL arguments: STRICT
SELECT syncular.encode_row('items', NULL) IS NULL AS strict_encode, syncular.decode_row(NULL, '\x00') IS NULL AS strict_decode;

ROLLBACK;
