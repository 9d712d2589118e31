-- scenario_column_writes: conformance catalogue B.21, column-granular writes (push-and-pull.md
-- §7): sparse-rows/disjoint-unversioned-patches-both-land, …/disjoint-versioned-patches-both-land,
-- …/same-column-versioned-patch-conflicts, …/crdt-patch-with-stale-base-applies-clean,
-- …/absent-base-rejects-at-author-time (server side: sync.row_missing),
-- …/present-scope-column-change-rejects, …/patch-scope-column-matches-stored-local-row,
-- …/byte-identical-sparse-payload, and sparse-rows/atomic-mixed-batch.  A push row is sparse: only
-- its present columns are written and each column keeps its own version, so a conflict needs
-- a column both sides wrote; pulls always deliver the full row.
\set testdb syncular_t_scenario_column_writes
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- (a) disjoint unversioned patches both land: A writes title, B (not having seen it) writes n
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "n": 5}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('A');
-- column versions (hex, one (index, version) pair per written column): title at 2, n at 3
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1;
SELECT sim.converged('A'), sim.converged('B');

-- (b) disjoint versioned patches both land: both on version 3; A writes done (-> 4), then B
-- writes title on base 3: title was last written at 2, so nothing conflicts (-> 5)
SELECT sim.queue('A', 'a-3', '[{"row": {"id": "t1", "done": true}, "base": 3}]');
SELECT sim.queue('B', 'b-2', '[{"row": {"id": "t1", "title": "soy milk"}, "base": 3}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- (c) same-column versioned patch conflicts: B writes done and n on base 3; done was written at
-- 4, n at 3: exactly done is marked
SELECT sim.queue('B', 'b-3', '[{"row": {"id": "t1", "done": false, "n": 6}, "base": 3}]');
SELECT * FROM sim.sync('B');

-- sparse-rows/atomic-mixed-batch: a fresh patch (t2) and a stale one (t1: title written at 5,
-- base 4) in one commit -> rejected as a whole at the stale op, t2 unchanged
SELECT sim.queue('A', 'a-4', '[{"row": {"id": "t2", "n": 7}, "base": 1},
                               {"row": {"id": "t1", "title": "rice milk"}, "base": 4}]');
SELECT * FROM sim.sync('A');
SELECT pg_temp.row_state('todos', 'p1', 't2') AS t2_unchanged;

-- (d) crdt-patch-with-stale-base-applies-clean: a patch of the crdt column only never conflicts,
-- whatever its base.  (With a non-NULL value it needs a CRDT merger; none is registered, so it
-- is refused with sync.crdt_merge_failed -- not with a version conflict.)
SELECT sim.queue('B', 'b-4', '[{"row": {"id": "t1", "doc": null}, "base": 1}]');
SELECT sim.queue('B', 'b-5', '[{"row": {"id": "t1", "doc": "AQID"}, "base": 1}]');
SELECT * FROM sim.sync('B');

-- (e) a partial patch with a base version on a row that does not exist: sync.row_missing
SELECT sim.queue('A', 'a-5', '[{"row": {"id": "t7", "list_id": "l1", "title": "ghost"}, "base": 1}]');
-- (f) a present scope column that differs from the stored one: sync.invalid_request
SELECT sim.queue('A', 'a-6', '[{"row": {"id": "t1", "list_id": "l2", "n": 8}}]');
-- patch-scope-column-matches-stored-local-row: present and equal is a no-op, the patch applies
SELECT sim.queue('A', 'a-7', '[{"row": {"id": "t1", "list_id": "l1", "n": 8}, "base": 6}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1;

-- byte-identical-sparse-payload: the sparse encoding of a patch depends on its columns and
-- values only (key order is irrelevant): presence bitmap 05 (id, title), null bitmap 00, values
SELECT encode(syncular.encode_sparse_row('todos', '{"title": "x", "id": "t1"}'), 'hex') AS title_first,
       encode(syncular.encode_sparse_row('todos', '{"id": "t1", "title": "x"}'), 'hex') AS id_first;

\i sql/scenario_done.psql
