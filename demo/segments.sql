-- Demo part: bootstrap segments (SPEC §5).  A client that accepts SQLite images bootstraps a list
-- and causes one image to be built; a second client with the same scopes gets the same image
-- (no rebuild) and downloads it through the direct endpoint, re-authorized on the call.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i :demodir/client.sql
SELECT syncular.ensure_schema(:'ir'::jsonb) IS NOT NULL AS registered \gset
CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["groceries"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)') IS NOT NULL AS hooked \gset

\echo
\echo ════ segments: one SQLite image per key, shared by every client with the same scopes ════
-- 300 groceries, pushed by a backend job
SELECT count(*) AS pushed FROM jsonb_array_elements(syncular.push('acme', 'alice', 'importer',
  (SELECT jsonb_agg(jsonb_build_object('clientCommitId', 'import-' || b, 'operations',
     (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'row', jsonb_build_object(
        'id', format('g%s', lpad(g::text, 3, '0')), 'list_id', 'groceries', 'title', 'item ' || g,
        'done', g % 7 = 0, 'position', g, 'updated_at_ms', 1000)))
        FROM generate_series(b * 100 + 1, b * 100 + 100) g)))
     FROM generate_series(0, 2) b))) r
 WHERE r->>'status' = 'applied' \gset

-- boot(client, actor): a fresh bootstrap accepting inline rows (bit 0) and images (bit 2),
-- pages of 100 rows: the list holds 300, more than a page, so the image lane serves it
CREATE FUNCTION demo.boot(client text, actor text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('acme', actor, client)),
      '{"type": "PULL_HEADER", "limitCommits": 100, "limitSnapshotRows": 100, "maxSnapshotPages": 4, "accept": 5}'::jsonb,
      '{"type": "SUBSCRIPTION", "id": "groceries", "table": "todos", "scopes": {"list_id": ["groceries"]}, "cursor": -1}'::jsonb))),
    'acme', actor))
$$;
SELECT demo.boot('phone-A', 'alice') AS a_resp \gset
SELECT demo.boot('laptop-B', 'bob') AS b_resp \gset
\o /dev/null
SELECT demo.describe(:'a_resp'::jsonb, '  A ←'), demo.describe(:'b_resp'::jsonb, '  B ←');
\o
\pset format unaligned
\pset tuples_only on
SELECT line FROM demo.transcript ORDER BY n;
\pset format aligned
\pset tuples_only off

\echo
\echo ── the store: one image, built for A, reused for B ─────────────────────────
SELECT segment_id, CASE media_type WHEN 2 THEN 'sqlite' ELSE 'rows' END AS media, tbl, as_of_commit_seq AS pin,
       row_count, byte_length, to_timestamp(expires_at_ms / 1000.0) - to_timestamp(created_at_ms / 1000.0) AS lifetime
  FROM syncular.segments('acme');
SELECT f->>'segmentId' AS image FROM jsonb_array_elements(:'b_resp'::jsonb->'frames') f
 WHERE f->>'type' = 'SEGMENT_REF' \gset
SELECT demo.check((SELECT count(*) FROM syncular.sync_segments) = 1
                  AND :'a_resp'::jsonb->'frames'->2->>'segmentId' = :'image',
                  'B got the image A caused (same segmentId, one stored image)') AS reuse;

\echo
\echo ── B downloads it: GET /segments/{id}, re-authorized, zstd ───────────────
SELECT status, headers, length(body) AS bytes
  FROM syncular.segment_download(:'image', 'acme', 'bob', '{"list_id": ["groceries"]}', NULL, 'zstd, gzip');
SELECT status, headers->>'ETag' = '"' || :'image' || '"' AS etag_ok, length(body) AS bytes
  FROM syncular.segment_download(:'image', 'acme', 'bob', '{"list_id": ["groceries"]}', '"' || :'image' || '"');
SELECT encode(body, 'hex') AS image_hex
  FROM syncular.segment_download(:'image', 'acme', 'bob', '{"list_id": ["groceries"]}') \gset
\setenv DEMO_IMAGE_HEX :image_hex
\echo the image, opened with the sqlite3 CLI:
\! sh -c 'command -v sqlite3 >/dev/null || { echo "(sqlite3 CLI not installed)"; exit 0; }; f=$(mktemp); echo "$DEMO_IMAGE_HEX" | xxd -r -p > "$f"; sqlite3 -header "$f" "SELECT * FROM _syncular_segment" "SELECT count(*) AS rows, sum(done) AS done FROM todos" "SELECT * FROM todos ORDER BY id LIMIT 3"; rm -f "$f"'
