-- scenario_delete_precedence: conformance catalogue B.20, delete precedence (push-and-pull.md
-- §7): delete-precedence/stale-patch-loses-to-delete, delete-precedence/explicit-insert-recreates,
-- delete-precedence/pruned-tombstone-restores-the-insert-rule, and the project regression of
-- README decision 1: sync.row_deleted and sync.row_missing are answered only after the payload's
-- scopes (or, for a patch without scope columns, the tombstone's stored scopes) authorize the
-- actor; anyone else gets sync.forbidden and learns nothing about the row.
\set testdb syncular_t_scenario_delete_precedence
\i sql/scenario_helpers.psql

-- A (u1) and B (u2) share list l1; E (u3) may only see l2
SELECT sim.client('A', 'u1'), sim.client('B', 'u2'), sim.client('E', 'u3');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}'),
       sim.subscribe('E', 's', '{"list_id": ["l2"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('E');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- delete-precedence/stale-patch-loses-to-delete: A deletes t1 (seq 2, tombstone); B, unaware,
-- patches it without a base version, with and without the scope column: sync.row_deleted,
-- final; B's pull then removes t1
SELECT sim.queue('A', 'a-2', '[{"del": "t1"}]');
SELECT * FROM sim.sync('A');
SELECT tbl, row_id, commit_seq FROM syncular.sync_tombstones;
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT sim.queue('B', 'b-2', '[{"row": {"id": "t1", "list_id": "l1", "title": "oat milk"}}]');
SELECT sim.queue('B', 'b-3', '[{"ins": {"id": "t1", "list_id": "l1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');

-- project regression (README decision 1): E is not authorized on l1.  The same writes, and a
-- versioned patch on the absent row, are all sync.forbidden for E; for B the versioned patch
-- is sync.row_missing
SELECT sim.queue('E', 'e-1', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT sim.queue('E', 'e-2', '[{"row": {"id": "t1", "list_id": "l1", "title": "oat milk"}}]');
SELECT sim.queue('E', 'e-3', '[{"row": {"id": "t1", "list_id": "l1", "n": 1}, "base": 3}]');
SELECT * FROM sim.sync('E');
SELECT sim.queue('B', 'b-4', '[{"row": {"id": "t1", "list_id": "l1", "n": 1}, "base": 3}]');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- delete-precedence/explicit-insert-recreates: an insert with baseVersion 0 recreates t1 at
-- version 1 and clears the tombstone; A sees the recreated row
SELECT sim.queue('B', 'b-5', '[{"ins": {"id": "t1", "list_id": "l1", "title": "reborn"}, "base": 0}]');
SELECT * FROM sim.sync('B');
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1, (SELECT count(*) FROM syncular.sync_tombstones) AS tombstones;
SELECT * FROM sim.sync('A');
SELECT sim.converged('A'), sim.converged('B');

-- ---------------------------------------------------------------------------------------------
-- delete-precedence/pruned-tombstone-restores-the-insert-rule: A deletes t2 (seq 4); while the
-- tombstone lives, an unversioned full row loses to it
SELECT sim.queue('A', 'a-3', '[{"del": "t2"}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.queue('B', 'b-6', '[{"ins": {"id": "t2", "list_id": "l1", "title": "fresh eggs"}}]');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('E');
-- every client is past seq 4: pruning moves the horizon there and drops the tombstone
SELECT syncular.prune('p1', '{"minRetainedCommits": 0}');
SELECT count(*) AS tombstones FROM syncular.sync_tombstones;
-- now the insert rule applies: an unversioned full row inserts at version 1; a partial patch of
-- an absent row is sync.row_missing with its scope column, sync.forbidden without (nothing
-- authorizes it any more), and sync.forbidden for E either way
SELECT sim.queue('B', 'b-7', '[{"ins": {"id": "t2", "list_id": "l1", "title": "fresh eggs"}}]');
SELECT sim.queue('B', 'b-8', '[{"row": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT sim.queue('B', 'b-9', '[{"row": {"id": "t3", "title": "bread"}}]');
SELECT * FROM sim.sync('B');
SELECT sim.queue('E', 'e-4', '[{"row": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT * FROM sim.sync('E');
SELECT pg_temp.row_state('todos', 'p1', 't2') AS t2;
SELECT * FROM sim.sync('A');
SELECT sim.converged('A'), sim.converged('B');

\i sql/scenario_done.psql
