-- segments_external: external rows segments (SPEC §5.1, §5.4, §5.7) and the direct download
-- endpoint (§5.5): descriptor fields, inline vs external from the accept bits and
-- syncular.inline_segment_max_bytes, reuse across clients, re-authorization, 304, encodings,
-- expiry by TTL and by RFC 0007 checkpoint, forgetting.
\i sql/pull_fixture.psql

-- L1 holds 5 todos, L2 two
SELECT pg_temp.push('[
 {"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "a", "list_id": "L1", "title": "one"}},
   {"table": "todos", "row": {"id": "b", "list_id": "L1", "title": "two"}},
   {"table": "todos", "row": {"id": "c", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "d", "list_id": "L1", "title": "four"}},
   {"table": "todos", "row": {"id": "e", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "x", "list_id": "L2", "title": null}},
   {"table": "todos", "row": {"id": "y", "list_id": "L2", "title": null}}]}]');

-- seg(actor, client, subs, limits, accept): one round, one line per frame; SEGMENT_REF shows
-- every descriptor field (the id shortened), inline segments their rows
CREATE FUNCTION pg_temp.seg(actor text, client text, subs jsonb, lim jsonb DEFAULT '{}', accept int DEFAULT 2)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  resp jsonb;
  f jsonb;
  seg jsonb;
BEGIN
  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('p1', actor, client)),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0,
                         'limitSnapshotRows', coalesce((lim->>'rows')::int, 0),
                         'maxSnapshotPages', coalesce((lim->>'pages')::int, 0), 'accept', accept))
      || (SELECT jsonb_agg(s || '{"type": "SUBSCRIPTION"}') FROM jsonb_array_elements(subs) s))),
    'p1', actor));
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'RESP_HEADER' THEN NULL;
    WHEN 'SUB_START' THEN RETURN NEXT format('SUB_START %s %s', f->>'id', f->>'status');
    WHEN 'SEGMENT_REF' THEN
      RETURN NEXT format('  REF %s %s %s bytes=%s rows=%s asOf=%s digest=%s cursor=%s next=%s url=%s',
        left(f->>'segmentId', 15), f->>'mediaType', f->>'table', f->>'byteLength', f->>'rowCount',
        f->>'asOfCommitSeq', left(f->>'scopeDigest', 8), coalesce(f->>'rowCursor', '-'),
        coalesce(f->>'nextRowCursor', '-'), coalesce(f->>'url', '-'));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      RETURN NEXT format('  INLINE [%s]',
        (SELECT coalesce(string_agg(r->'values'->>'id', ' ' ORDER BY b, o), '')
           FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY y(blk, b),
                jsonb_array_elements(blk) WITH ORDINALITY x(r, o)));
    WHEN 'SUB_END' THEN
      RETURN NEXT format('SUB_END next=%s%s', f->>'nextCursor', coalesce(' state=' || (f->'bootstrapState')::text, ''));
    ELSE RETURN NEXT f::text;
    END CASE;
  END LOOP;
END $$;

-- dl(segment, actor, scopes, if_none_match, accept_encoding, partition): status, headers, body summary
CREATE FUNCTION pg_temp.dl(id text, actor text, scopes jsonb, inm text DEFAULT NULL, ae text DEFAULT NULL,
                           part text DEFAULT 'p1')
RETURNS TABLE(status int, headers jsonb, body text) LANGUAGE sql AS $$
  SELECT d.status, d.headers - 'ETag',
         CASE WHEN d.headers->>'Content-Type' = 'application/json'
              THEN (convert_from(d.body, 'UTF8')::jsonb - 'message')::text
              ELSE length(d.body) || ' bytes' END
    FROM syncular.segment_download(id, part, actor, scopes, inm, ae) d
$$;

-- 1. accept bit 1 without bit 0: every page is a SEGMENT_REF, even a small one (§5.7)
SELECT pg_temp.seg('admin', 'c1', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                   '{"rows": 2, "pages": 10}');
-- descriptor fields: the id is sha256 of the stored (uncompressed) bytes, byteLength their length,
-- scopeDigest sha256 of the canonical effective map (§3.5); pages chain by row cursor
SELECT p.row_cursor, p.next_row_cursor, s.row_count, s.byte_length = length(s.bytes) AS length_ok,
       s.segment_id = 'sha256:' || encode(sha256(s.bytes), 'hex') AS content_addressed,
       p.scope_digest = encode(sha256(convert_to('{"list_id":["L1"]}', 'UTF8')), 'hex') AS digest_ok,
       p.as_of_commit_seq, p.page_rows, p.media_type,
       p.expires_at_ms - p.created_at_ms AS ttl_ms,
       (SELECT string_agg(r->'values'->>'id', ' ' ORDER BY b, o)
          FROM jsonb_array_elements(syncular.debug_render(s.bytes)->'blocks') WITH ORDINALITY y(blk, b),
               jsonb_array_elements(blk) WITH ORDINALITY x(r, o)) AS rows_in_segment
  FROM syncular.sync_segment_publications p JOIN syncular.sync_segments s USING (segment_id)
 ORDER BY p.row_cursor NULLS FIRST;
SELECT count(*) AS segments_after_first_client FROM syncular.sync_segments;

-- 2. reuse: a second client of another actor with the same grant gets the same segments, no rebuild
SELECT pg_temp.seg('other', 'c2', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                   '{"rows": 2, "pages": 10}');
SELECT count(*) AS segments, count(DISTINCT created_at_ms) AS builds FROM syncular.sync_segments;
-- a smaller page window is another publication (§5.1 key includes the page window)
SELECT pg_temp.seg('other', 'c2', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                   '{"rows": 5, "pages": 10}');
SELECT count(*) AS publications FROM syncular.sync_segment_publications;

-- 3. both bits: inline up to syncular.inline_segment_max_bytes, a larger page is a reference
SELECT pg_temp.seg('admin', 'c3', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": -1}]',
                   '{"rows": 4, "pages": 10}', 3);
SET LOCAL syncular.inline_segment_max_bytes = 80;
SELECT pg_temp.seg('admin', 'c3', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": -1}]',
                   '{"rows": 4, "pages": 10}', 3);
SET LOCAL syncular.inline_segment_max_bytes = 0;
-- resumed mid-table (page window of 2 after "b"): references continue from the row cursor
SELECT pg_temp.seg('admin', 'c3', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 1,
  "bootstrapState": {"asOfCommitSeq": 1, "tables": ["todos"], "tableIndex": 0, "rowCursor": "b"}}]',
                   '{"rows": 2, "pages": 1}', 3);
RESET syncular.inline_segment_max_bytes;

-- 4. direct download (§5.5)
SELECT segment_id AS first_page FROM syncular.sync_segment_publications
 WHERE row_cursor IS NULL AND page_rows = 2 AND scope_digest = encode(sha256(convert_to('{"list_id":["L1"]}', 'UTF8')), 'hex') \gset
SELECT * FROM pg_temp.dl(:'first_page', 'limited', '{"list_id": ["L1"]}');
-- the body is the stored bytes, the ETag the quoted id
SELECT d.body = s.bytes AS body_is_segment, d.headers->>'ETag' = '"' || s.segment_id || '"' AS etag_ok
  FROM syncular.segment_download(:'first_page', 'p1', 'admin', '{"list_id": "L1"}') d, syncular.sync_segments s
 WHERE s.segment_id = :'first_page';
-- 304 on a matching If-None-Match (weak or in a list too); another ETag downloads
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', '"' || :'first_page' || '"');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', '"x", W/"' || :'first_page' || '"');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', '"sha256:00"');
-- encodings: zstd preferred, gzip next, q=0 refuses; decoded with the zstd and gzip tools
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', NULL, 'gzip, deflate, br, zstd');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', NULL, 'gzip;q=1.0, zstd;q=0');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', NULL, 'identity, gzip;q=0');
SELECT encode(body, 'hex') AS zhex FROM syncular.segment_download(:'first_page', 'p1', 'admin', '{"list_id": ["L1"]}', NULL, 'zstd') \gset
SELECT encode(body, 'hex') AS ghex FROM syncular.segment_download(:'first_page', 'p1', 'admin', '{"list_id": ["L1"]}', NULL, 'gzip') \gset
SELECT encode(sha256(bytes), 'hex') AS want FROM syncular.sync_segments WHERE segment_id = :'first_page' \gset
\set zcmd 'echo ' :zhex ' | xxd -r -p | zstd -dc | sha256sum | cut -c1-64'
\set gcmd 'echo ' :ghex ' | xxd -r -p | gzip -dc | sha256sum | cut -c1-64'
\setenv SEG_WANT :want
\setenv SEG_ZCMD :zcmd
\setenv SEG_GCMD :gcmd
\! sh -c 'test "$(eval "$SEG_ZCMD")" = "$SEG_WANT" && echo zstd body decodes to the segment'
\! sh -c 'test "$(eval "$SEG_GCMD")" = "$SEG_WANT" && echo gzip body decodes to the segment'

-- 5. refusals: unknown id and another partition -> 404 not_found; another scope map -> 403
SELECT * FROM pg_temp.dl('sha256:0000', 'admin', '{"list_id": ["L1"]}');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}', part => 'p2');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L2"]}');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1", "L2"]}');
-- bad requested_scopes: 400
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"nope": ["L1"]}');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["*"]}');
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '[1]');
-- re-authorization on every call: revoke L1 from "limited" -> 403 sync.forbidden
CREATE OR REPLACE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT CASE actor WHEN 'limited' THEN '{"list_id": ["L2"], "owner_id": "*"}'::jsonb
                    ELSE '{"list_id": "*", "owner_id": "*"}'::jsonb END
$$;
SELECT * FROM pg_temp.dl(:'first_page', 'limited', '{"list_id": ["L1"]}');
-- a rotated log epoch hides the old publications: 404 not_found
SAVEPOINT before_rotate;
SELECT syncular.rotate_log_epoch('p1') IS NOT NULL AS rotated;
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}');
ROLLBACK TO SAVEPOINT before_rotate;

-- 6. expiry by RFC 0007 checkpoint: a checkpoint above the segment's schema version
SAVEPOINT before_checkpoint;
INSERT INTO syncular.sync_backfill_checkpoints (partition, name, schema_version, state, updated_at_ms)
VALUES ('p1', 'next', 2, 'declared', 0);
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}');
-- ... and at issuance: a client that also takes inline gets inline pages, none is reused
SET LOCAL syncular.inline_segment_max_bytes = 0;
SELECT pg_temp.seg('admin', 'c4', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                   '{"rows": 2, "pages": 1}', 3);
ROLLBACK TO SAVEPOINT before_checkpoint;

-- 7. expiry by TTL: publications live syncular.segment_ttl; past it -> 404 segment_expired,
-- then prune_segments forgets them -> 404 not_found
SET LOCAL syncular.segment_ttl = '1h';
SELECT pg_temp.seg('admin', 'c5', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]');
SELECT expires_at_ms - created_at_ms AS ttl_ms FROM syncular.sync_segment_publications
 WHERE scope_digest = encode(sha256(convert_to('{"list_id":["L2"]}', 'UTF8')), 'hex');
UPDATE syncular.sync_segment_publications SET expires_at_ms = created_at_ms WHERE segment_id = :'first_page';
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}');
SELECT syncular.prune_segments();
SELECT * FROM pg_temp.dl(:'first_page', 'admin', '{"list_id": ["L1"]}');
-- a day later every publication has expired (TTL 24 h, and 1 h for the last one): all forgotten
SELECT syncular.prune_segments((extract(epoch FROM now()) * 1000)::bigint + 25 * 3600 * 1000);
SELECT count(*) AS left_over FROM syncular.sync_segments;
-- after forgetting, the next pull builds and publishes the same page again (same content address)
SELECT pg_temp.seg('admin', 'c1', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                   '{"rows": 2, "pages": 1}');
SELECT row_cursor, next_row_cursor, row_count, expires_at_ms > created_at_ms AS live FROM syncular.segments('p1');

-- 8. signed URLs (§5.4): issued only with accept bit 3 and a configured base
SELECT pg_temp.seg('admin', 'c6', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]', '{}', 10);
SET LOCAL syncular.segment_url_base = 'https://cdn.example/segments/';
SELECT pg_temp.seg('admin', 'c6', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]', '{}', 2);
CREATE TEMP TABLE refs AS
SELECT f->>'segmentId' AS id, f->>'url' AS url, (f->>'urlExpiresAtMs')::bigint AS exp_ms
  FROM jsonb_array_elements(syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c6', 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('p1', 'admin', 'c6')),
      '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 10}'::jsonb,
      '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}'::jsonb))),
    'p1', 'admin'))->'frames') f
 WHERE f->>'type' = 'SEGMENT_REF';
SELECT url LIKE 'https://cdn.example/segments/' || id || '?st=%' AS url_shape,
       exp_ms % 1000 = 0 AND exp_ms BETWEEN (extract(epoch FROM clock_timestamp())::bigint + 895) * 1000
                                        AND (extract(epoch FROM clock_timestamp())::bigint + 905) * 1000 AS expires_in_15_min
  FROM refs;
-- the token: base64url(payload) "." base64url(HMAC-SHA256(secret, payload)), checked here with a SQL HMAC
CREATE FUNCTION pg_temp.b64url_decode(s text) RETURNS bytea LANGUAGE sql AS $$
  SELECT decode(rpad(translate(s, '-_', '+/'), (length(s) + 3) / 4 * 4, '='), 'base64') $$;
CREATE FUNCTION pg_temp.b64url(b bytea) RETURNS text LANGUAGE sql AS $$
  SELECT rtrim(translate(replace(encode(b, 'base64'), E'\n', ''), '+/', '-_'), '=') $$;
CREATE FUNCTION pg_temp.hmac256(key bytea, msg bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  k bytea := key || decode(repeat('00', 64 - length(key)), 'hex');
  ipad bytea := k;
  opad bytea := k;
BEGIN
  FOR i IN 0..63 LOOP
    ipad := set_byte(ipad, i, get_byte(k, i) # 54);
    opad := set_byte(opad, i, get_byte(k, i) # 92);
  END LOOP;
  RETURN sha256(opad || sha256(ipad || msg));
END $$;
SELECT split_part(url, '?st=', 2) AS st, id AS url_seg FROM refs \gset
SELECT convert_from(pg_temp.b64url_decode(split_part(:'st', '.', 1)), 'UTF8')::jsonb - 'exp' - 'aud' AS claims,
       pg_temp.b64url(pg_temp.hmac256((SELECT key FROM syncular.sync_segment_secret),
                                      pg_temp.b64url_decode(split_part(:'st', '.', 1)))) = split_part(:'st', '.', 2) AS mac_ok;
-- the bare-URL fetch: 200 with the bytes, 304, encodings as the direct endpoint
SELECT status, headers - 'ETag' AS headers, length(body)
  FROM syncular.segment_url_download(:'url_seg', :'st');
SELECT d.body = s.bytes AS body_is_segment FROM syncular.segment_url_download(:'url_seg', :'st') d, syncular.sync_segments s
 WHERE s.segment_id = :'url_seg';
SELECT status FROM syncular.segment_url_download(:'url_seg', :'st', '"' || :'url_seg' || '"');
SELECT status, headers->>'Content-Encoding' AS encoding FROM syncular.segment_url_download(:'url_seg', :'st', NULL, 'gzip');
-- tampered payload, tampered MAC, garbage, another segment: 403 sync.forbidden
SELECT status, convert_from(body, 'UTF8')::jsonb->>'code' AS code
  FROM (VALUES (:'url_seg', pg_temp.b64url(convert_to(replace(convert_from(pg_temp.b64url_decode(split_part(:'st', '.', 1)), 'UTF8'),
                                   '"v":1', '"v":2'), 'UTF8')) || '.' || split_part(:'st', '.', 2)),
               (:'url_seg', split_part(:'st', '.', 1) || '.' || pg_temp.b64url(sha256('x'))),
               (:'url_seg', 'not-a-token'),
               (:'first_page', :'st')) v(seg, tok),
       LATERAL syncular.segment_url_download(seg, tok);
-- every other spelling of the token is refused: each of the last four characters of the payload
-- and of the MAC replaced by each base64url character.  A MAC of 32 bytes is 43 characters
-- whose last one carries 2 bits no byte uses: accepting those spellings let a "tampered"
-- token verify (3 of the 63 changes of the last character), only canonical encodings verify.
SELECT count(*) AS variants, count(*) FILTER (WHERE d.status <> 403) AS accepted
  FROM (SELECT p.part, k.i, c
          FROM (VALUES (1), (2)) p(part),
               generate_series(0, 3) k(i),
               unnest(string_to_array('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', NULL)) c) v,
       LATERAL (SELECT CASE v.part WHEN 1 THEN
                         overlay(split_part(:'st', '.', 1) placing v.c from length(split_part(:'st', '.', 1)) - v.i for 1)
                         || '.' || split_part(:'st', '.', 2)
                       ELSE split_part(:'st', '.', 1) || '.' ||
                         overlay(split_part(:'st', '.', 2) placing v.c from length(split_part(:'st', '.', 2)) - v.i for 1)
                       END AS tok) t,
       LATERAL syncular.segment_url_download(:'url_seg', t.tok) d
 WHERE t.tok <> :'st';
-- a token signed with the secret, expired 2 minutes ago (past the 60 s skew): 404 sync.segment_expired
SELECT convert_from(pg_temp.b64url_decode(split_part(:'st', '.', 1)), 'UTF8')::jsonb
         || jsonb_build_object('exp', extract(epoch FROM clock_timestamp())::bigint - 120) AS old_claims \gset
SELECT status, convert_from(body, 'UTF8')::jsonb->>'code' AS code
  FROM syncular.segment_url_download(:'url_seg',
         pg_temp.b64url(convert_to(:'old_claims', 'UTF8')) || '.' ||
         pg_temp.b64url(pg_temp.hmac256((SELECT key FROM syncular.sync_segment_secret), convert_to(:'old_claims', 'UTF8'))));
-- a lost URL: the segment forgotten -> 404 sync.not_found; a new secret invalidates every URL -> 403
SAVEPOINT before_lost;
DELETE FROM syncular.sync_segment_publications WHERE segment_id = :'url_seg';
SELECT status, convert_from(body, 'UTF8')::jsonb->>'code' AS code FROM syncular.segment_url_download(:'url_seg', :'st');
ROLLBACK TO SAVEPOINT before_lost;
UPDATE syncular.sync_segment_secret SET key = sha256('another secret');
SELECT status, convert_from(body, 'UTF8')::jsonb->>'code' AS code FROM syncular.segment_url_download(:'url_seg', :'st');

ROLLBACK;
