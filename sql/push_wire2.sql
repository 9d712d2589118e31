-- push_wire2: each wire version is served by its own rules.  The same writes are pushed as
-- wire 2 (SPEC v2 as of the 0.15 SDKs: full-row payloads) and as wire 3 (sparse rows), side by
-- side.  Wire 2: a changed scope column is stripped from the update set (SPEC v2 §3.4 rule 5)
-- on both the baseVersion and the last-write-wins paths; baseVersion is compared with the row
-- version and any other value, ahead or behind, is sync.version_conflict with the server version
-- and row (SPEC v2 §6.2); an unversioned upsert onto a deleted row inserts (wire 2 has no delete
-- precedence and no sync.row_deleted).  Wire 3 keeps its rules (push_conflicts).
\set testdb syncular_t_push_wire2
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
-- w2 and w3 start equal: version 1, list l1
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('seed',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two", "done": false, "n": 1, "meta": null, "doc": null, "att": null}'),
  pg_temp.up('todos', '{"id": "w3", "list_id": "l1", "title": "three", "done": false, "n": 1, "meta": null, "doc": null, "att": null}'))));

-- 1. last-write-wins upsert that changes the scope column, with a sibling insert in the commit.
-- wire 2: applied; list_id stays l1 (stored scopes), title and n change, the sibling lands
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-lww',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l2", "title": "two moved", "done": false, "n": 2, "meta": null, "doc": null, "att": null}', NULL, 2),
  pg_temp.up('todos', '{"id": "s2", "list_id": "l1", "title": "sibling two", "done": null, "n": null, "meta": null, "doc": null, "att": null}', NULL, 2))), 2);
SELECT pg_temp.row_state('todos', 'p1', 'w2') AS w2, pg_temp.row_state('todos', 'p1', 's2') AS s2;
-- wire 3: the whole commit is rejected with sync.invalid_request, the sibling rolls back
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v3-lww',
  pg_temp.up('todos', '{"id": "w3", "list_id": "l2", "title": "three moved", "n": 2}'),
  pg_temp.up('todos', '{"id": "s3", "list_id": "l1", "title": "sibling three", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT pg_temp.row_state('todos', 'p1', 'w3') AS w3, pg_temp.row_state('todos', 'p1', 's3') AS s3;

-- 2. the baseVersion path: wire 2 at the current version (2) strips list_id and applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-base',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l2", "title": "two again", "done": true, "n": 3, "meta": null, "doc": null, "att": null}', 2, 2))), 2);
SELECT pg_temp.row_state('todos', 'p1', 'w2') AS w2;
-- wire 3 at the current version (1): refused as before
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v3-base',
  pg_temp.up('todos', '{"id": "w3", "list_id": "l2", "title": "three again"}', 1))));
-- the pull of wire 2 sees the update under the stored scope l1 only
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.sub('s-l2', 'todos', '{"list_id": ["l2"]}', 2)), 2);

-- 3. baseVersion ahead of the server version (w2 is at 3, w3 at 1)
-- wire 2: sync.version_conflict with serverVersion and serverRow (no conflictColumns on wire 2)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-ahead',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two ahead", "done": true, "n": 9, "meta": null, "doc": null, "att": null}', 7, 2))), 2);
-- ... durable: a retry replays the same conflict
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-ahead',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two ahead", "done": true, "n": 9, "meta": null, "doc": null, "att": null}', 7, 2))), 2);
-- wire 3: sync.invalid_request
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v3-ahead',
  pg_temp.up('todos', '{"id": "w3", "n": 9}', 7))));

-- 4. baseVersion behind: wire 2 compares row versions, wire 3 column versions.  A wire-3 patch
-- of n moves both rows one version up; a base one behind conflicts on wire 2 (a full row), and
-- on wire 3 a patch of done (not written since base 1) applies.
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('bump',
  pg_temp.up('todos', '{"id": "w2", "n": 10}'), pg_temp.up('todos', '{"id": "w3", "n": 10}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-behind',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two again", "done": false, "n": 10, "meta": null, "doc": null, "att": null}', 3, 2))), 2);
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v3-behind',
  pg_temp.up('todos', '{"id": "w3", "done": true}', 1))));
-- wire 2 at the current version applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-current',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two again", "done": false, "n": 10, "meta": null, "doc": null, "att": null}', 4, 2))), 2);
SELECT pg_temp.row_state('todos', 'p1', 'w2') AS w2, pg_temp.row_state('todos', 'p1', 'w3') AS w3;

-- 5. an unversioned upsert onto a deleted row: wire 2 inserts at version 1 and clears the
-- tombstone; wire 3 answers sync.row_deleted
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('del',
  pg_temp.del('todos', 'w2'), pg_temp.del('todos', 'w3'))));
SELECT row_id FROM syncular.sync_tombstones WHERE partition = 'p1' ORDER BY row_id;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-revive',
  pg_temp.up('todos', '{"id": "w2", "list_id": "l1", "title": "two revived", "done": null, "n": null, "meta": null, "doc": null, "att": null}', NULL, 2))), 2);
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v3-revive',
  pg_temp.up('todos', '{"id": "w3", "list_id": "l1", "title": "three revived", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT pg_temp.row_state('todos', 'p1', 'w2') AS w2, pg_temp.row_state('todos', 'p1', 'w3') AS w3;
SELECT row_id FROM syncular.sync_tombstones WHERE partition = 'p1' ORDER BY row_id;
-- ... still authorized first: u3 (l2 only) reviving an l1 row is forbidden on wire 2 too
SELECT * FROM pg_temp.round('p1', 'u3', 'C', jsonb_build_array(pg_temp.pc('v2-revive-forbidden',
  pg_temp.up('todos', '{"id": "w3", "list_id": "l1", "title": "not yours", "done": null, "n": null, "meta": null, "doc": null, "att": null}', NULL, 2))), 2);

-- 5. the blob existence check (§5.9.6) is the same on wire 2 (blob.not_found is in the wire-2
--    catalogue): rejected until the blob is uploaded, then applied
SELECT 'sha256:' || encode(sha256('w2'), 'hex') AS w2_blob_id \gset
SELECT jsonb_build_object('blobId', :'w2_blob_id', 'byteLength', 2)::text AS blob_w2 \gset
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-blob-missing',
  pg_temp.up('todos', jsonb_build_object('id', 'b2', 'list_id', 'l1', 'title', 'with file', 'done', null,
    'n', null, 'meta', null, 'doc', null, 'att', :'blob_w2'::jsonb), NULL, 2))), 2);
SELECT syncular.put_blob('p1', 'u1', :'w2_blob_id', 'w2') ->> 'stored' AS uploaded;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('v2-blob-present',
  pg_temp.up('todos', jsonb_build_object('id', 'b2', 'list_id', 'l1', 'title', 'with file', 'done', null,
    'n', null, 'meta', null, 'doc', null, 'att', :'blob_w2'::jsonb), NULL, 2))), 2);

\i sql/push_done.psql
