-- scenario_horizon_reset: conformance catalogue B.8, horizon-forced re-bootstrap
-- (push-and-pull.md §7): cursor/horizon-reset-rebootstrap-and-boundary.  syncular.prune moves
-- the horizon past an absent client's cursor (the retention floor only counts clients active
-- within the window); that client's next pull is reset / sync.cursor_expired with nextCursor =
-- its cursor, it re-bootstraps from -1 and converges; a client whose cursor equals horizonSeq
-- still pulls incrementally.
\set testdb syncular_t_scenario_horizon_reset
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2'), sim.client('C', 'u2');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}'),
       sim.subscribe('C', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('C');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}},
                               {"ins": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('C');

-- B goes away.  A keeps writing (seqs 2..4); C pulls after seq 3
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT sim.queue('A', 'a-3', '[{"del": "t2"}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('C');
SELECT sim.queue('A', 'a-4', '[{"ins": {"id": "t4", "list_id": "l1", "title": "jam"}}]');
SELECT * FROM sim.sync('A');
-- ... for longer than the 14-day active window
UPDATE syncular.sync_clients SET updated_at_ms = updated_at_ms - 15 * 86400000 WHERE client_id = 'B';
-- the floor is the lowest cursor of the active clients (C: 3); keep no minimum of commits
SELECT syncular.prune('p1', '{"minRetainedCommits": 0}');
SELECT partition, max_commit_seq, horizon_seq FROM syncular.partitions;
SELECT client_id, cursor, behind_horizon FROM syncular.clients ORDER BY client_id;
SELECT min(commit_seq) AS oldest_kept, count(*) AS commits FROM syncular.sync_commits;

-- B comes back at cursor 1 < horizon 3: reset, sync.cursor_expired, nextCursor 1, no commits;
-- B keeps its rows until the new bootstrap replaces them
SELECT * FROM sim.sync('B');
SELECT * FROM sim.replica('B');
-- it re-bootstraps from -1: the first page replaces the stale rows (t2 is gone), cursor 4
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');
-- the boundary: C's cursor 3 = horizonSeq is still incremental
SELECT * FROM sim.sync('C');
SELECT sim.converged('C');
-- and one below it is not (a pull from cursor 2 by a client that skipped its reset)
SELECT * FROM pg_temp.round('p1', 'u2', 'C', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 2)));
SELECT sim.converged('A');

\i sql/scenario_done.psql
