-- segments_image: SQLite image segments (SPEC §5.3): chosen at the start of a table when accept
-- bit 2 is set and the snapshot exceeds one rows page; exactly the two tables, the type mapping
-- and cell encodings (opened with the sqlite3 CLI and compared row by row with the rows lane);
-- one stored image per key, reused by a second client; a bootstrap resumed mid-table and a
-- small snapshot stay on the rows lane.
\set VERBOSITY terse
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
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "items", "primaryKey": "id", "scopes": ["owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "n", "type": "integer", "nullable": false},
    {"name": "score", "type": "float", "nullable": true},
    {"name": "flag", "type": "boolean", "nullable": true},
    {"name": "meta", "type": "json", "nullable": true},
    {"name": "raw", "type": "bytes", "nullable": true}]}]}') ->> 'action' AS action;
CREATE FUNCTION public.img_resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT '{"owner_id": ["o1", "o2"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.img_resolver(text,text,text)') AS registered \gset

SELECT r->>'status' AS status FROM jsonb_array_elements(syncular.push('p1', 'w', 'writer', $j$[
 {"clientCommitId": "k1", "operations": [
   {"table": "items", "row": {"id": "a", "owner_id": "o1", "title": "déjà 𝄞 \"q\"", "n": 9007199254740991,
                              "score": 0.1, "flag": true, "meta": {"b": [1, 2.5], "a": null}, "raw": "AAEC/v8="}},
   {"table": "items", "row": {"id": "b", "owner_id": "o1", "title": null, "n": -3, "score": null, "flag": false,
                              "meta": null, "raw": null}},
   {"table": "items", "row": {"id": "c", "owner_id": "o1", "title": "", "n": 0, "score": -1e300, "flag": null,
                              "meta": "\"s\"", "raw": ""}},
   {"table": "items", "row": {"id": "d", "owner_id": "o1", "title": null, "n": 4, "score": 2.5, "flag": null,
                              "meta": [], "raw": null}},
   {"table": "items", "row": {"id": "z", "owner_id": "o2", "title": null, "n": 5, "score": null, "flag": null,
                              "meta": null, "raw": null}}]},
 {"clientCommitId": "k2", "operations": [
   {"table": "items", "row": {"id": "b", "title": "second version"}}]}]$j$)) r;

-- img(client, scopes, limits, accept, state): one round, one line per frame
CREATE FUNCTION pg_temp.img(client text, scopes jsonb, lim jsonb, accept int, state jsonb DEFAULT NULL)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  f jsonb;
BEGIN
  FOR f IN SELECT * FROM jsonb_array_elements(syncular.debug_render(syncular.handle(syncular.debug_encode(
      jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
        jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                           'logEpoch', syncular._producer_epoch('p1', 'reader', client)),
        jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', (lim->>'rows')::int,
                           'maxSnapshotPages', 10, 'accept', accept),
        jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's', 'table', 'items', 'scopes', scopes,
                           'cursor', CASE WHEN state IS NULL THEN -1 ELSE 2 END, 'bootstrapState', state))))),
      'p1', 'reader'))->'frames') LOOP
    CASE f->>'type'
    WHEN 'RESP_HEADER' THEN NULL;
    WHEN 'SUB_START' THEN RETURN NEXT format('SUB_START %s', f->>'status');
    WHEN 'SEGMENT_REF' THEN
      RETURN NEXT format('  REF %s %s rows=%s asOf=%s cursor=%s next=%s', f->>'mediaType', f->>'table',
        f->>'rowCount', f->>'asOfCommitSeq', coalesce(f->>'rowCursor', '-'), coalesce(f->>'nextRowCursor', '-'));
    WHEN 'SEGMENT_INLINE' THEN
      RETURN NEXT format('  INLINE [%s]',
        (SELECT string_agg(r->'values'->>'id', ' ')
           FROM jsonb_array_elements(syncular.debug_render(decode(f->>'payload', 'base64'))->'blocks') blk,
                jsonb_array_elements(blk) r));
    WHEN 'SUB_END' THEN
      RETURN NEXT format('SUB_END next=%s%s', f->>'nextCursor', coalesce(' state=' || (f->'bootstrapState')::text, ''));
    END CASE;
  END LOOP;
END $$;

-- 1. bit 2 with a snapshot of 4 rows over pages of 2: one sqlite SEGMENT_REF, no cursors, complete
SELECT pg_temp.img('c1', '{"owner_id": ["o1"]}', '{"rows": 2}', 5);
SELECT media_type, tbl, row_cursor, next_row_cursor, row_count, byte_length % 4096 AS page_remainder
  FROM syncular.segments('p1');
-- 2. a second client: the same stored image, not rebuilt
SELECT pg_temp.img('c2', '{"owner_id": ["o1"]}', '{"rows": 2}', 5);
SELECT count(*) AS images, count(DISTINCT created_at_ms) AS builds FROM syncular.sync_segments;
-- 3. the snapshot fits one rows page (o2 holds one row): the rows lane, inline; no image stored
SELECT pg_temp.img('c3', '{"owner_id": ["o2"]}', '{"rows": 1}', 5);
SELECT count(*) AS images FROM syncular.sync_segments;
-- 4. resumed mid-table: the rows lane at the same pin, never an image
SELECT pg_temp.img('c4', '{"owner_id": ["o1"]}', '{"rows": 2}', 5,
                   '{"asOfCommitSeq": 2, "tables": ["items"], "tableIndex": 0, "rowCursor": "b"}');
-- 5. without bit 2: rows lane
SELECT pg_temp.img('c5', '{"owner_id": ["o1"]}', '{"rows": 2}', 1);

-- 6. the image opened with the sqlite3 CLI: schema, metadata, rows; compared with the rows lane
SELECT segment_id AS image FROM syncular.sync_segments WHERE media_type = 2 \gset
SELECT encode(body, 'hex') AS ihex
  FROM syncular.segment_download(:'image', 'p1', 'reader', '{"owner_id": ["o1"]}') \gset
\setenv IMG_HEX :ihex
\! sh -c 'echo "$IMG_HEX" | xxd -r -p > /tmp/syncular_segments_image_test.db'
\! sqlite3 /tmp/syncular_segments_image_test.db ".schema"
\! sqlite3 -header /tmp/syncular_segments_image_test.db "SELECT * FROM _syncular_segment"
\! sqlite3 /tmp/syncular_segments_image_test.db "SELECT typeof(id), typeof(n), typeof(score), typeof(flag), typeof(meta), typeof(raw), typeof(_syncular_version) FROM items WHERE id = 'a'"
\! sqlite3 /tmp/syncular_segments_image_test.db "SELECT * FROM items ORDER BY id"
-- row by row against the rows lane (one inline page of the same pin): every cell, as JSON
\set image_rows `sqlite3 /tmp/syncular_segments_image_test.db "SELECT json_group_array(json_object('id', id, 'owner_id', owner_id, 'title', title, 'n', n, 'score', score, 'flag', flag, 'meta', json(meta), 'raw', iif(raw IS NULL, NULL, lower(hex(raw))), 'v', _syncular_version)) FROM (SELECT * FROM items ORDER BY id)"; rm -f /tmp/syncular_segments_image_test.db`
WITH page AS (
  SELECT decode(f->>'payload', 'base64') AS seg
    FROM jsonb_array_elements(syncular.debug_render(syncular.handle(syncular.debug_encode(
      jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
        jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c6', 'schemaVersion', 1,
                           'logEpoch', syncular._producer_epoch('p1', 'reader', 'c6')),
        '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 100, "maxSnapshotPages": 1, "accept": 1}'::jsonb,
        '{"type": "SUBSCRIPTION", "id": "s", "table": "items", "scopes": {"owner_id": ["o1"]}, "cursor": -1}'::jsonb))),
      'p1', 'reader'))->'frames') f
   WHERE f->>'type' = 'SEGMENT_INLINE'),
rows_lane AS (
  SELECT jsonb_agg(jsonb_build_object('id', v->'id', 'owner_id', v->'owner_id', 'title', v->'title', 'n', v->'n',
           'score', v->'score', 'flag', CASE WHEN v->>'flag' IS NULL THEN 'null' WHEN (v->>'flag')::boolean THEN '1' ELSE '0' END::jsonb,
           'meta', v->'meta', 'raw', to_jsonb(encode(decode(v->>'raw', 'base64'), 'hex')), 'v', r->'serverVersion')
           ORDER BY v->>'id') AS rows
    FROM page, jsonb_array_elements(syncular.debug_render(seg)->'blocks') blk, jsonb_array_elements(blk) r,
         LATERAL (SELECT r->'values' AS v) x)
SELECT jsonb_array_length(rows) AS rows_compared, rows = :'image_rows'::jsonb AS image_equals_rows_lane,
       CASE WHEN rows <> :'image_rows'::jsonb THEN rows::text || E'\n' || :'image_rows' END AS difference
  FROM rows_lane;
-- the metadata's scope digest is the descriptor's (§3.5)
SELECT scope_digest = encode(sha256(convert_to('{"owner_id":["o1"]}', 'UTF8')), 'hex') AS digest_ok
  FROM syncular.segments('p1') WHERE media_type = 2;

ROLLBACK;
