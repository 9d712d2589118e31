-- scenario_convergence: conformance catalogue B.1, two-client convergence (push-and-pull.md §7):
-- convergence/two-client-basic, convergence/interleaved-upserts-deletes,
-- convergence/quiet-subscription-cursor-advances.  Two simulated clients (A: actor u1, B: actor
-- u2, both granted list l1) push and pull through syncular.handle; after every exchange both
-- replicas equal the server, row by row and version by version; commits are atomic.
\set testdb syncular_t_scenario_convergence
\i sql/scenario_helpers.psql

-- ---------------------------------------------------------------------------------------------
-- convergence/two-client-basic
SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's-l1', '{"list_id": ["l1"]}'), sim.subscribe('B', 's-l1', '{"list_id": ["l1"]}');
-- the first round of each client acquires the partition's log epoch (header only)
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
-- A inserts two todos in one commit (seq 1) and bootstraps in the same round
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk", "n": 1}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs", "n": 2}}]');
SELECT * FROM sim.sync('A');
-- B bootstraps: the same two rows at version 1, cursor = maxSeq = 1
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');
-- B edits t1 on the version it saw; A inserts t3 without having seen B's edit
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "title": "oat milk"}, "base": 1}]');
SELECT sim.queue('A', 'a-2', '[{"ins": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT * FROM sim.sync('B');
-- A gets B's commit 2 and its own commit 3 back, in commitSeq order
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');

-- ---------------------------------------------------------------------------------------------
-- convergence/interleaved-upserts-deletes: A deletes t2 and patches t3 while B (not yet aware)
-- patches t2 and t1, deletes t3 and inserts t4, in two commits
SELECT sim.queue('A', 'a-3', '[{"del": "t2"}, {"row": {"id": "t3", "n": 5}}]');
SELECT sim.queue('B', 'b-2', '[{"row": {"id": "t2", "title": "brown eggs"}}]');
SELECT sim.queue('B', 'b-3', '[{"row": {"id": "t1", "done": true}}, {"del": "t3"},
                               {"ins": {"id": "t4", "list_id": "l1", "title": "jam"}}]');
SELECT * FROM sim.sync('A');
-- b-2 loses to the delete (sync.row_deleted, final: it leaves the outbox); b-3 still applies
-- (a rejected commit does not stop the batch); B replays commits 4 and 5
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('A');
SELECT sim.converged('A'), sim.converged('B');
SELECT * FROM sim.replica('A');
SELECT * FROM sim.replica('B');

-- commit atomicity: op 0 (insert t5) would apply, op 1 changes a scope column -> the commit is
-- rejected as a whole; nobody ever sees t5
SELECT sim.queue('B', 'b-4', '[{"ins": {"id": "t5", "list_id": "l1", "title": "tea"}},
                               {"row": {"id": "t1", "list_id": "l2"}}]');
SELECT * FROM sim.sync('B');
SELECT pg_temp.row_state('todos', 'p1', 't5') AS t5, pg_temp.row_state('todos', 'p1', 't1') AS t1;
SELECT * FROM sim.sync('A');
SELECT sim.converged('A'), sim.converged('B');

-- ---------------------------------------------------------------------------------------------
-- convergence/quiet-subscription-cursor-advances: A also follows list l2, where nothing happens;
-- its cursor still advances to maxSeq with every round
SELECT sim.subscribe('A', 's-l2', '{"list_id": ["l2"]}');
SELECT * FROM sim.sync('A');
SELECT sim.queue('B', 'b-5', '[{"row": {"id": "t4", "n": 4}, "base": 1}]');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('A');
-- the client record holds the lowest nextCursor of the active subscriptions (6)
SELECT client_id, actor_id, cursor, jsonb_array_length(subscriptions) AS subscriptions
  FROM syncular.sync_clients ORDER BY client_id;
SELECT sim.converged('A'), sim.converged('B');

-- the log: one commit per applied client commit, dense seqs, nothing of the rejected ones
SELECT commit_seq, client_id, client_commit_id, actor_id,
       (SELECT string_agg(format('%s %s@%s', CASE op WHEN 1 THEN 'upsert' ELSE 'delete' END, row_id,
                                 coalesce(row_version::text, '-')), ', ' ORDER BY idx)
          FROM syncular.changes x WHERE x.commit_seq = c.commit_seq) AS changes
  FROM syncular.sync_commits c ORDER BY commit_seq;

\i sql/scenario_done.psql
