-- push_conflicts: per-operation rules (push-and-pull.md §2.3) — version conflicts and
-- conflictColumns (B.6, B.21), the baseVersion 0 insert race, delete precedence (B.20),
-- column-granular writes, authorize-before-disclosing, immutable scope columns, baseVersion
-- ahead of the server.
\set testdb syncular_t_push_conflicts
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
-- the row every case starts from: t1 at version 1 (no column-version blob)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('seed',
  pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1, "meta": null, "doc": null, "att": null}'))));

-- B.21(a) disjoint unversioned patches both land; each column gets the new version
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "title": "oat milk"}'))));
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t1", "n": 5}'))));
SELECT pg_temp.row_state('todos', 'p1', 't1');
-- B.21(b) disjoint versioned patches both land: title is at 2, done at 1, base 2 < version 3
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t1", "done": true}', 2))));
SELECT pg_temp.row_state('todos', 'p1', 't1');
-- B.21(c) same-column conflict: done was written at 4 > base 3 and is marked, title (at 2) is
-- not; serverRow is the stored row
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-2', pg_temp.up('todos', '{"id": "t1", "title": "soy milk", "done": false}', 3))));
-- the PK is present in every payload and never marked, list_id (equal, present) is column 1 at 1
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-3', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "n": 6}', 1))));
-- the conflict is durable: replaying b-3 gives the same rejection (status stays rejected)
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-3', pg_temp.up('todos', '{"id": "t1", "n": 99}'))));
SELECT result -> 'results' -> 0 ->> 'status' AS stored, result ? 'commitSeq' AS has_seq
  FROM syncular.push_results WHERE client_commit_id = 'b-3';
-- siblings roll back with the conflicting op: op 0 would apply, op 1 conflicts
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-4',
  pg_temp.up('todos', '{"id": "t9", "list_id": "l1", "title": "new", "done": null, "n": null, "meta": null, "doc": null, "att": null}'),
  pg_temp.up('todos', '{"id": "t1", "title": "x"}', 1))));
SELECT pg_temp.row_state('todos', 'p1', 't9') AS t9_rolled_back;
-- baseVersion equal to the server version applies
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-5', pg_temp.up('todos', '{"id": "t1", "title": "soy milk"}', 4))));
SELECT pg_temp.row_state('todos', 'p1', 't1');

-- blob-less row above version 1: every column counts at the row version, the PK still never marks
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-3',
  pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "eggs", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t2"}'))));
SELECT pg_temp.row_state('todos', 'p1', 't2') AS pk_only_update;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t2"}', 1))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-6', pg_temp.up('todos', '{"id": "t2", "n": 1}', 1))));

-- baseVersion 0 on an existing row: the lost-insert race; every present non-crdt non-PK column
-- marked (doc is crdt: never marked), the winner's row disclosed
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('b-6',
  pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "tea", "done": null, "n": null, "meta": null, "doc": null, "att": null}', 0))));
-- ... but an actor who may not see the row gets sync.forbidden, not the row
SELECT * FROM pg_temp.round('p1', 'u3', 'C', jsonb_build_array(pg_temp.pc('c-1',
  pg_temp.up('todos', '{"id": "t1", "list_id": "l2", "title": "tea", "done": null, "n": null, "meta": null, "doc": null, "att": null}', 0))));
-- baseVersion ahead of the server version -> sync.invalid_request
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-7', pg_temp.up('todos', '{"id": "t1", "n": 1}', 6))));
-- B.21(f) a present scope column that changes -> sync.invalid_request; equal is a no-op
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-8', pg_temp.up('todos', '{"id": "t1", "list_id": "l2"}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-9', pg_temp.up('todos', '{"id": "t1", "list_id": "l1"}'))));
-- writes on a stored row are authorized on the stored scopes (u3 may write l2 only)
SELECT * FROM pg_temp.round('p1', 'u3', 'C', jsonb_build_array(pg_temp.pc('c-2', pg_temp.up('todos', '{"id": "t1", "n": 1}'))));
SELECT * FROM pg_temp.round('p1', 'u3', 'C', jsonb_build_array(pg_temp.pc('c-3', pg_temp.del('todos', 't1'))));
-- PK rendered from the payload must equal rowId
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-10',
  pg_temp.up('todos', '{"id": "t1", "n": 1}') || '{"rowId": "t2"}')));
-- a payload that does not decode as a sparse row of the table
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-11',
  '{"table": "todos", "rowId": "t1", "op": "upsert", "payload": "AQ=="}')));
-- an unknown table: commit-level sync.unknown_table
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-12', pg_temp.del('nope', 'x'))));

-- ---------------------------------------------------------------------------------------------
-- B.20 delete precedence
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-1', pg_temp.del('todos', 't2'))));
SELECT tbl, row_id, commit_seq FROM syncular.sync_tombstones ORDER BY row_id;
-- a stale unversioned patch after the delete: sync.row_deleted (with or without scope columns)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-2', pg_temp.up('todos', '{"id": "t2", "title": "late"}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-3', pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "late"}'))));
-- ... an unversioned full row too
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-4',
  pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "again", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
-- authorize before disclosing: u2 (l1 only) learns nothing about the deleted l2 row
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('d-5', pg_temp.up('todos', '{"id": "t2", "title": "late"}'))));
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('d-6', pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "late"}'))));
-- baseVersion > 0 on the absent row: sync.row_missing after authorization, sync.forbidden before
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-7', pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "n": 3}', 5))));
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('d-8', pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "n": 3}', 5))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-9', pg_temp.up('todos', '{"id": "t2", "n": 3}', 5))));
-- baseVersion 0 recreates at version 1 and clears the tombstone
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-10',
  pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "reborn", "done": null, "n": null, "meta": null, "doc": null, "att": null}', 0))));
SELECT pg_temp.row_state('todos', 'p1', 't2'), (SELECT count(*) FROM syncular.sync_tombstones WHERE row_id = 't2') AS tombstones;
-- after pruning the tombstone (horizon past the delete) the insert rule applies again
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-11', pg_temp.del('todos', 't2'))));
UPDATE syncular.sync_partitions SET horizon_seq = (SELECT max(commit_seq) FROM syncular.sync_commits
  WHERE partition = 'p1') WHERE partition = 'p1';
DELETE FROM syncular.sync_tombstones WHERE partition = 'p1';
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-12', pg_temp.up('todos', '{"id": "t2", "title": "partial"}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-13', pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "partial"}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('d-14',
  pg_temp.up('todos', '{"id": "t2", "list_id": "l2", "title": "full", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT pg_temp.row_state('todos', 'p1', 't2');
-- an insert whose scope column is outside the grant, or NULL... (list_id is NOT NULL: empty string)
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.pc('d-15',
  pg_temp.up('todos', '{"id": "t5", "list_id": "l2", "title": "nope", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT * FROM pg_temp.round('p1', 'admin', 'Z', jsonb_build_array(pg_temp.pc('z-1',
  pg_temp.up('todos', '{"id": "t5", "list_id": "", "title": "empty scope", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
-- '*' in the grant allows any value
SELECT * FROM pg_temp.round('p1', 'admin', 'Z', jsonb_build_array(pg_temp.pc('z-2',
  pg_temp.up('todos', '{"id": "t5", "list_id": "l9", "title": "anywhere", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
-- a delete of a stored row with another actor's scope: forbidden; the owner deletes it
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-13', pg_temp.del('todos', 't5'))));
SELECT * FROM pg_temp.round('p1', 'admin', 'Z', jsonb_build_array(pg_temp.pc('z-3', pg_temp.del('todos', 't5'))));

-- every rejection above is durable; nothing of a rejected commit reached the log
SELECT client_commit_id, result ->> 'status' AS status, result -> 'results' -> 0 ->> 'code' AS code
  FROM syncular.push_results WHERE result ->> 'status' = 'rejected' ORDER BY client_commit_id;
SELECT count(*) AS logged_rejections FROM syncular.sync_commits c
  JOIN syncular.push_results r USING (partition, client_id, client_commit_id)
 WHERE r.result ->> 'status' = 'rejected';

\i sql/push_done.psql
