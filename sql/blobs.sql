-- blobs: the blob store (SPEC §5.9; docs/blobs.md).  Upload verifies the content address
-- (blob.hash_mismatch, nothing stored), the size cap (blob.too_large), idempotent re-upload,
-- chunked storage; the push-time existence check (blob.not_found, durable); the reference index
-- kept by upserts and deletes; download re-authorized from the referencing rows (403/404 with
-- catalogue bodies); garbage collection of unreferenced blobs after the grace period.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS blobs;
CREATE DATABASE blobs;
\c blobs
\i sql/test_helpers.psql

\i sql/blob_fixture.psql

-- blob ids of test bytes
CREATE FUNCTION pg_temp.bid(b bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT 'sha256:' || encode(sha256(b), 'hex') $$;
CREATE FUNCTION pg_temp.ref(b bytea) RETURNS jsonb LANGUAGE sql IMMUTABLE AS
$$ SELECT jsonb_build_object('blobId', pg_temp.bid(b), 'byteLength', length(b)) $$;
-- push one upsert of files (id, org, att); one line "<status> <code> <details>"
CREATE FUNCTION pg_temp.put_row(actor text, ccid text, id text, org text, att jsonb) RETURNS text
LANGUAGE sql AS $$
  SELECT concat_ws(' ', r ->> 'status', r -> 'results' -> 0 ->> 'code', r -> 'results' -> 0 ->> 'details')
    FROM jsonb_array_elements(syncular.push('p1', actor, 'c-' || actor, jsonb_build_array(
      jsonb_build_object('clientCommitId', ccid, 'operations', jsonb_build_array(
        jsonb_build_object('table', 'files', 'op', 'upsert', 'row',
          jsonb_build_object('id', id, 'org', org, 'att', att, 'thumb', NULL))))))) r
$$;
-- a download as "<status> <content_type> <byte_length> <sha of the body>" or the JSON error body
CREATE FUNCTION pg_temp.get(actor text, id text) RETURNS text LANGUAGE sql AS $$
  SELECT concat_ws(' ', min(status), min(content_type), min(byte_length), count(*) || ' rows',
                   CASE WHEN min(status) = 200 THEN pg_temp.bid(string_agg(body, ''::bytea ORDER BY o))
                        ELSE convert_from(string_agg(body, ''::bytea ORDER BY o), 'UTF8') END)
    FROM syncular.blob_get('p1', actor, id) WITH ORDINALITY g(status, content_type, byte_length, body, o)
$$;

-- 1. upload: the content address is verified, re-upload is idempotent
SELECT syncular.put_blob('p1', 'alice', pg_temp.bid('hello'), 'hello') - 'blobId' AS first_upload;
SELECT syncular.put_blob('p1', 'alice', pg_temp.bid('hello'), 'hello') - 'blobId' AS again;
SELECT pg_temp.try($$SELECT syncular.put_blob('p1', 'alice', pg_temp.bid('hello'), 'hellO')$$) LIKE
       '22023 blob content does not match its id | blob.hash_mismatch %' AS mismatch_refused;
SELECT pg_temp.try($$SELECT syncular.put_blob('p1', 'alice', 'sha256:ABC', 'x')$$) AS malformed_id;
SELECT pg_temp.try($$SELECT syncular.put_blob('p1', 'alice', NULL, 'x')$$) AS null_id;
-- the wrong bytes were not stored under any id, in any partition
SELECT partition, blob_id = pg_temp.bid('hello') AS is_hello, byte_length, uploader
  FROM syncular.sync_blobs ORDER BY 1;

-- 2. the size cap: declared and streamed
SET syncular.blob_max_bytes = 4;
SELECT pg_temp.try($$SELECT syncular.put_blob('p1', 'alice', pg_temp.bid('12345'), '12345')$$) AS over_cap;
SELECT pg_temp.try($$SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('12345'), 5)$$) AS declared_over_cap;
BEGIN;
SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('12345')) AS up \gset
SELECT syncular.blob_upload_append(:up, '123') AS received;
SELECT pg_temp.try(format('SELECT syncular.blob_upload_append(%s, %L::bytea)', :up, '45')) AS streamed_over_cap;
ROLLBACK;
RESET syncular.blob_max_bytes;
SELECT count(*) AS blobs, (SELECT count(*) FROM syncular.sync_blob_chunks) AS chunks FROM syncular.sync_blobs;

-- 3. a streamed upload in pieces; a 2.5 MiB body is stored as 1 MiB chunks and read back whole
BEGIN;
SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('part one, part two'), 18) AS up \gset
SELECT syncular.blob_upload_append(:up, 'part one, ') AS received;
SELECT syncular.blob_upload_append(:up, 'part two') AS received;
SELECT syncular.blob_upload_finish(:up) - 'blobId' AS finished;
SELECT pg_temp.try(format('SELECT syncular.blob_upload_append(%s, %L::bytea)', :up, 'x')) AS after_finish;
COMMIT;
CREATE TEMP TABLE big AS
  SELECT string_agg(sha256(int4send(i)), ''::bytea) AS b FROM generate_series(1, 81920) i;
SELECT length(b) AS big_bytes, syncular.put_blob('p1', 'alice', pg_temp.bid(b), b) ->> 'stored' AS stored FROM big;
SELECT count(*) AS big_chunks, max(length(data)) AS largest_chunk FROM syncular.sync_blob_chunks c
  JOIN syncular.sync_blobs s USING (upload_id) WHERE s.blob_id = (SELECT pg_temp.bid(b) FROM big);

-- an upload begun and not finished cannot commit; one begun in a rolled-back savepoint is gone
BEGIN;
SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('left open')) IS NOT NULL AS begun;
COMMIT;
BEGIN;
SAVEPOINT s;
SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('rolled back')) AS up \gset
ROLLBACK TO SAVEPOINT s;
SELECT pg_temp.try(format('SELECT syncular.blob_upload_append(%s, %L::bytea)', :up, 'x')) AS abandoned;
COMMIT;
-- an append rolled back by a savepoint: finish refuses rather than store a hole
BEGIN;
SELECT syncular.blob_upload_begin('p1', 'alice', pg_temp.bid('ab')) AS up \gset
SAVEPOINT s;
SELECT syncular.blob_upload_append(:up, 'a') AS received;
ROLLBACK TO SAVEPOINT s;
SELECT syncular.blob_upload_append(:up, 'b') AS received;
SELECT pg_temp.try(format('SELECT syncular.blob_upload_finish(%s)', :up)) AS hole_refused;
ROLLBACK;

-- 4. push-time existence check (§5.9.6): durable rejection, replayed unchanged
SELECT pg_temp.put_row('alice', 'a-1', 'f1', 'o1', pg_temp.ref('not uploaded')) AS missing_blob;
SELECT syncular.put_blob('p1', 'alice', pg_temp.bid('not uploaded'), 'not uploaded') ->> 'stored' AS now_uploaded;
SELECT pg_temp.put_row('alice', 'a-1', 'f1', 'o1', pg_temp.ref('not uploaded')) AS replayed;
SELECT pg_temp.put_row('alice', 'a-2', 'f1', 'o1', pg_temp.ref('not uploaded')) AS new_commit;
-- a blob of another partition does not count
SELECT syncular.put_blob('p2', 'alice', pg_temp.bid('only in p2'), 'only in p2') ->> 'stored' AS p2_upload;
SELECT pg_temp.put_row('alice', 'a-3', 'f2', 'o1', pg_temp.ref('only in p2')) AS other_partition;
SELECT pg_temp.put_row('alice', 'a-4', 'f2', 'o1', pg_temp.ref('hello')) AS f2_hello;
SELECT pg_temp.put_row('bob', 'b-1', 'f3', 'o2', pg_temp.ref('hello')) AS f3_hello;
SELECT tbl, row_id, blob_id = pg_temp.bid('hello') AS hello FROM syncular.sync_blob_refs ORDER BY 1, 2;

-- 5. download: re-authorized from the referencing rows on every request
SELECT pg_temp.get('alice', pg_temp.bid('not uploaded')) AS alice_f1;
SELECT pg_temp.get('bob', pg_temp.bid('not uploaded')) AS bob_f1;
SELECT pg_temp.get('bob', pg_temp.bid('hello')) AS bob_hello_via_f3;
SELECT pg_temp.get('broken', pg_temp.bid('hello')) AS resolver_failed;
SELECT pg_temp.get('alice', pg_temp.bid('never')) AS unknown;
SELECT pg_temp.get('alice', 'not-an-id') AS malformed;
SELECT pg_temp.get('root', pg_temp.bid('part one, part two')) AS unreferenced;
DELETE FROM public.grants WHERE actor = 'alice';
SELECT pg_temp.get('alice', pg_temp.bid('not uploaded')) AS alice_grant_gone;
INSERT INTO public.grants VALUES ('alice', 'o1');
-- the big blob streams back as chunks that hash to its id
SELECT pg_temp.put_row('alice', 'a-5', 'f4', 'o1', (SELECT pg_temp.ref(b) FROM big)) AS f4_big;
SELECT pg_temp.get('alice', (SELECT pg_temp.bid(b) FROM big)) = concat_ws(' ', 200, 'application/octet-stream',
         2621440, '3 rows', (SELECT pg_temp.bid(b) FROM big)) AS big_roundtrip;

-- 6. the index follows the rows: a changed ref replaces the entry, a delete removes it
SELECT pg_temp.put_row('alice', 'a-6', 'f2', 'o1', pg_temp.ref('part one, part two')) AS f2_changed;
SELECT pg_temp.put_row('alice', 'a-7', 'f4', 'o1', NULL) AS f4_cleared;
SELECT (syncular.push('p1', 'bob', 'c-bob', '[{"clientCommitId": "b-2", "operations": [
         {"table": "files", "op": "delete", "rowId": "f3"}]}]') -> 0 ->> 'status') AS f3_deleted;
SELECT tbl, row_id, blob_id = pg_temp.bid('part one, part two') AS parts FROM syncular.sync_blob_refs ORDER BY 1, 2;
-- a cascade delete (§6.11) removes the child's entries too
SELECT syncular.push('p1', 'alice', 'c-alice', jsonb_build_array(jsonb_build_object(
  'clientCommitId', 'a-8', 'operations', jsonb_build_array(
    jsonb_build_object('table', 'albums', 'op', 'upsert', 'row', '{"id": "al1", "org": "o1"}'::jsonb),
    jsonb_build_object('table', 'photos', 'op', 'upsert', 'row', jsonb_build_object(
      'id', 'ph1', 'org', 'o1', 'album_id', 'al1', 'img', pg_temp.ref('hello')))))))
  -> 0 ->> 'status' AS album_and_photo;
SELECT tbl, row_id FROM syncular.sync_blob_refs WHERE tbl = 'photos';
SELECT syncular.push('p1', 'alice', 'c-alice', '[{"clientCommitId": "a-9", "operations": [
         {"table": "albums", "op": "delete", "rowId": "al1"}]}]') -> 0 ->> 'status' AS album_deleted;
SELECT count(*) AS photo_refs_after_cascade FROM syncular.sync_blob_refs WHERE tbl = 'photos';

-- 7. garbage collection: nothing inside the grace period; then only unreferenced blobs
SELECT syncular.blob_gc('p1') AS within_grace;
SELECT syncular.blob_gc('p1', 0) AS swept;
SELECT partition, blob_id = pg_temp.bid('not uploaded') AS not_uploaded,
       blob_id = pg_temp.bid('part one, part two') AS parts, blob_id = pg_temp.bid('only in p2') AS p2
  FROM syncular.sync_blobs ORDER BY 1, 2, 3;
SELECT count(*) AS chunks_left FROM syncular.sync_blob_chunks;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.try($$SELECT syncular.blob_gc(NULL, 0)$$) AS repeatable_read_refused;
ROLLBACK;
SELECT pg_temp.get('alice', pg_temp.bid('hello')) AS swept_blob;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE blobs;
