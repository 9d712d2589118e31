-- scenario_conflicts: conformance catalogue B.6, conflict resolve and rebase (push-and-pull.md
-- §7): conflict/version-conflict-resolution-paths, conflict/sibling-operations-roll-back-atomically,
-- conflict/insert-race-discloses-winner, conflict/base-version-on-absent-row-is-row-missing, and
-- the project regression of README decision 3: conflictColumns never marks the primary key, also
-- for a row without a column-version blob.  Same-base edits: the loser's commit is rejected with
-- serverVersion, serverRow and exactly the conflicting columns; keep-local, keep-server and merge
-- all converge.
\set testdb syncular_t_scenario_conflicts
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2'), sim.client('C', 'u3');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('C');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk", "n": 1}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "bread", "n": 1}},
                               {"ins": {"id": "t3", "list_id": "l1", "title": "tea", "n": 1}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- conflict/version-conflict-resolution-paths: A and B both edit t1, t2, t3 on version 1; A is
-- first (seq 2, every row at version 2); each of B's three commits is rejected with
-- serverVersion 2, A's row and exactly the column both wrote
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}, "base": 1},
                               {"row": {"id": "t2", "title": "rye bread"}, "base": 1},
                               {"row": {"id": "t3", "n": 3}, "base": 1}]');
SELECT * FROM sim.sync('A');
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "title": "soy milk"}, "base": 1}]');
SELECT sim.queue('B', 'b-2', '[{"row": {"id": "t2", "title": "white bread"}, "base": 1}]');
SELECT sim.queue('B', 'b-3', '[{"row": {"id": "t3", "n": 7}, "base": 1}]');
SELECT * FROM sim.sync('B');
-- B resolves: keep-local on t1 (rebased on serverVersion 2), keep-server on t2 (nothing to
-- send), merge on t3 (3 + 7 - 1 = 9, on serverVersion 2)
SELECT sim.queue('B', 'b-4', '[{"row": {"id": "t1", "title": "soy milk"}, "base": 2}]');
SELECT sim.queue('B', 'b-5', '[{"row": {"id": "t3", "n": 9}, "base": 2}]');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('A');
SELECT sim.converged('A'), sim.converged('B');
SELECT * FROM sim.replica('A');

-- ---------------------------------------------------------------------------------------------
-- conflict/sibling-operations-roll-back-atomically: op 0 inserts t4, op 1 is stale on t1 -> the
-- commit is rejected with the record of op 1 only, and t4 never exists
SELECT sim.queue('A', 'a-3', '[{"ins": {"id": "t4", "list_id": "l1", "title": "jam"}},
                               {"row": {"id": "t1", "title": "almond milk"}, "base": 2}]');
SELECT * FROM sim.sync('A');
SELECT pg_temp.row_state('todos', 'p1', 't4') AS t4;

-- ---------------------------------------------------------------------------------------------
-- conflict/insert-race-discloses-winner: both insert t5 with insert intent (baseVersion 0); the
-- loser gets the winner's row and every present non-PK, non-crdt column marked
SELECT sim.queue('A', 'a-4', '[{"ins": {"id": "t5", "list_id": "l1", "title": "honey"}, "base": 0}]');
SELECT sim.queue('B', 'b-6', '[{"ins": {"id": "t5", "list_id": "l1", "title": "butter", "n": 2}, "base": 0}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- conflict/base-version-on-absent-row-is-row-missing: a base version on a row that never
-- existed is sync.row_missing, final -- only for an actor the payload's scopes authorize; C
-- (u3, list l2 only) learns nothing: sync.forbidden
SELECT sim.queue('B', 'b-7', '[{"row": {"id": "t9", "list_id": "l1", "n": 1}, "base": 5}]');
SELECT * FROM sim.sync('B');
SELECT sim.queue('C', 'c-1', '[{"row": {"id": "t9", "list_id": "l1", "n": 1}, "base": 5}]');
SELECT * FROM sim.sync('C');

-- ---------------------------------------------------------------------------------------------
-- project regression (README decision 3): the PK is never marked.  t6 is updated by a PK-only
-- patch, so it is at version 2 without a column-version blob (every column counts at 2); a
-- stale patch of n marks n alone, a stale PK-only patch conflicts on nothing and applies
SELECT sim.queue('A', 'a-5', '[{"ins": {"id": "t6", "list_id": "l1", "title": "salt"}}]');
SELECT sim.queue('A', 'a-6', '[{"row": {"id": "t6"}}]');
SELECT * FROM sim.sync('A');
SELECT pg_temp.row_state('todos', 'p1', 't6') AS t6_blobless;
SELECT sim.queue('B', 'b-8', '[{"row": {"id": "t6", "n": 1}, "base": 1}]');
SELECT sim.queue('B', 'b-9', '[{"row": {"id": "t6"}, "base": 1}]');
SELECT * FROM sim.sync('B');
SELECT pg_temp.row_state('todos', 'p1', 't6') AS t6_after_pk_only_update;
-- the SQL producer (syncular.push) names the same columns: n alone, never id; and on t1 (title
-- written at 3, done never written) a title+done patch on base 2 marks title alone
SELECT r ->> 'clientCommitId' AS commit, r ->> 'status' AS status, r -> 'results' -> 0 ->> 'serverVersion' AS server_version,
       r -> 'results' -> 0 -> 'conflictColumns' AS conflict_columns
  FROM jsonb_array_elements(syncular.push('p1', 'u2', 'B', '[
         {"clientCommitId": "b-10", "operations": [{"table": "todos", "row": {"id": "t6", "n": 5}, "baseVersion": 1}]},
         {"clientCommitId": "b-11", "operations": [{"table": "todos", "row": {"id": "t1", "title": "rice milk", "done": true}, "baseVersion": 2}]}]')) r;
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');

\i sql/scenario_done.psql
