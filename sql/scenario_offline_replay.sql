-- scenario_offline_replay: conformance catalogue B.2, offline replay (push-and-pull.md §7):
-- offline/outbox-fifo-replay, with errors/commit-level-rejection-continues-batch.  A client that
-- was offline replays a multi-commit outbox in one push+pull round: the commits apply in FIFO
-- order (each versioned write builds on the previous one), a rejected commit does not stop the
-- batch, and the same round's pull brings the client level with the server.
\set testdb syncular_t_scenario_offline_replay
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's-l1', '{"list_id": ["l1"]}'), sim.subscribe('B', 's-l1', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- A goes offline and keeps working: five commits, each written on top of the previous one
-- (baseVersion 1, 2, 3 on t1), one of them outside A's grant (list l7), one deleting a row the
-- outbox itself inserted
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}, "base": 1}]');
SELECT sim.queue('A', 'a-3', '[{"row": {"id": "t1", "n": 2}, "base": 2},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}}]');
SELECT sim.queue('A', 'a-4', '[{"ins": {"id": "x1", "list_id": "l7", "title": "not mine"}}]');
SELECT sim.queue('A', 'a-5', '[{"del": "t2"}]');
SELECT sim.queue('A', 'a-6', '[{"row": {"id": "t1", "done": true}, "base": 3}]');
-- meanwhile B, online, adds t3 (seq 2)
SELECT sim.queue('B', 'b-1', '[{"ins": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT * FROM sim.sync('B');

-- A reconnects: one round carries the whole outbox in order and its subscription at cursor 1.
-- a-2, a-3, a-5, a-6 apply as seqs 3, 4, 5, 6 (a-4 is refused with sync.forbidden and takes no
-- seq); the pull replays commits 2..6 and leaves the cursor at 6
SELECT * FROM sim.sync('A');
SELECT count(*) AS outbox_left FROM sim.outbox WHERE name = 'A';
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1, pg_temp.row_state('todos', 'p1', 't2') AS t2;
SELECT sim.converged('A');
SELECT * FROM sim.replica('A');
-- B catches up with A's replayed commits
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');

-- the server's order is the outbox order, and a-4 left nothing in the log
SELECT commit_seq, client_commit_id FROM syncular.sync_commits WHERE client_id = 'A' ORDER BY commit_seq;
SELECT client_commit_id, result ->> 'status' AS status, result -> 'results' -> 0 ->> 'code' AS code
  FROM syncular.push_results WHERE client_id = 'A' ORDER BY client_commit_id;

-- order matters: a-6 (done on version 3) sent after a write of done at version 4 would conflict,
-- marking exactly done
SELECT sim.queue('A', 'a-7', '[{"row": {"id": "t1", "done": false}, "base": 3}]');
SELECT * FROM sim.sync('A');

\i sql/scenario_done.psql
