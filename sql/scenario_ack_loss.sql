-- scenario_ack_loss: conformance catalogue B.3, idempotent retry under ack loss (push-and-pull.md
-- §7): offline/ack-loss-cached-replay, offline/duplicate-request-delivery,
-- offline/stale-retransmit-is-harmless, offline/idempotency-cache-miss-keeps-commit-queued.
-- A commit is applied exactly once per (partition, clientId, clientCommitId); its result may be
-- delivered any number of times: applied -> cached with the original commitSeq and results,
-- rejected -> the same rejection; only sync.idempotency_cache_miss keeps the commit queued.
\set testdb syncular_t_scenario_ack_loss
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's-l1', '{"list_id": ["l1"]}'), sim.subscribe('B', 's-l1', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
-- B, the observer, is level with the (empty) log: cursor 0
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- offline/ack-loss-cached-replay: the server applies a-1 (seq 1) but A never gets the response
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}}]');
SELECT * FROM sim.sync('A', deliver => false);
SELECT (SELECT string_agg(commit_id, ' ') FROM sim.outbox WHERE name = 'A') AS a_outbox,
       (SELECT cursor FROM sim.subs WHERE name = 'A') AS a_cursor;
-- B sees commit 1 once
SELECT * FROM sim.sync('B');
-- A retries the same commit: cached, the original seq 1 and one result per operation; nothing
-- is applied again, and B's next pull has nothing new
SELECT * FROM sim.sync('A');
SELECT count(*) AS a1_commits FROM syncular.sync_commits WHERE client_commit_id = 'a-1';
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1;
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');

-- ---------------------------------------------------------------------------------------------
-- offline/duplicate-request-delivery: the network delivers the very same request bytes twice
SELECT pg_temp.req('p1', 'A', jsonb_build_array(
         pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t1", "n": 2}', 1)))) AS dup \gset
SELECT * FROM pg_temp.show('p1', syncular.handle(:'dup'::bytea, 'p1', 'u1'));
SELECT * FROM pg_temp.show('p1', syncular.handle(:'dup'::bytea, 'p1', 'u1'));
-- ... and a commit repeated inside one request is applied once, the repeat replays as cached
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t2", "n": 3}')),
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t2", "n": 33}'))));
SELECT client_commit_id, count(*) AS commits FROM syncular.sync_commits
 WHERE client_commit_id IN ('a-2', 'a-3') GROUP BY 1 ORDER BY 1;
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1, pg_temp.row_state('todos', 'p1', 't2') AS t2;
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- offline/stale-retransmit-is-harmless: A sets t1's title (a-4), B overwrites it later (b-1);
-- a late retransmission of a-4 replays as cached and does not undo B's write
SELECT sim.queue('A', 'a-4', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('A');
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "title": "soy milk"}}]');
SELECT * FROM sim.sync('B');
SELECT sim.queue('A', 'a-4', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('A');
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1_keeps_soy_milk;
SELECT sim.converged('A'), sim.converged('B');

-- a rejected commit replays as the same rejection (status stays rejected, no seq)
SELECT sim.queue('A', 'a-5', '[{"ins": {"id": "x1", "list_id": "l7", "title": "not mine"}}]');
SELECT * FROM sim.sync('A', deliver => false);
SELECT * FROM sim.sync('A');

-- ---------------------------------------------------------------------------------------------
-- offline/idempotency-cache-miss-keeps-commit-queued: a-6 is applied (seq 6) but its response is
-- lost, then its stored result becomes unreadable
SELECT sim.queue('A', 'a-6', '[{"row": {"id": "t2", "title": "brown eggs"}}]');
SELECT * FROM sim.sync('A', deliver => false);
SELECT result AS a6_result FROM syncular.push_results WHERE client_commit_id = 'a-6' \gset
UPDATE syncular.sync_commits SET result = '{"status": "applied"}' WHERE client_commit_id = 'a-6';
-- the retry: rejected, no seq, retryable sync.idempotency_cache_miss at op 0; not persisted,
-- not applied again, and the commit stays in A's outbox
SELECT * FROM sim.sync('A');
SELECT (SELECT string_agg(commit_id, ' ') FROM sim.outbox WHERE name = 'A') AS a_outbox,
       (SELECT result FROM syncular.push_results WHERE client_commit_id = 'a-6') AS stored,
       (SELECT count(*) FROM syncular.sync_commits WHERE client_commit_id = 'a-6') AS a6_commits;
-- once the result is readable again the queued commit replays as cached with its seq
UPDATE syncular.sync_commits SET result = :'a6_result'::jsonb WHERE client_commit_id = 'a-6';
SELECT * FROM sim.sync('A');
SELECT count(*) AS outbox_left FROM sim.outbox WHERE name = 'A';
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');

\i sql/scenario_done.psql
