-- scenario_epoch_reset: the log epoch (push-and-pull.md §1.2 and §7):
-- backup-restore/log-epoch-resets-ahead-client, with epoch acquisition.  After a backup restore
-- the log is shorter than what clients have seen, and commit seqs will be handed out again;
-- the operator rotates the partition's epoch (syncular.rotate_log_epoch) before traffic
-- resumes.  A client presenting the old epoch gets RESP_HEADER resetRequired + the new epoch and
-- nothing else (its push is not applied); it wipes its replica, keeps its outbox, re-bootstraps
-- and replays, and converges with the restored server.
\set testdb syncular_t_scenario_epoch_reset
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}');
-- epoch acquisition: a request without logEpoch is answered resetRequired + the epoch, END ...
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
-- ... and must not carry pushes: request-level sync.invalid_request
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')',
         pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('x-1', pg_temp.del('todos', 't1'))), 3, NULL)));
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT log_epoch AS old_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1' \gset

-- ---------------------------------------------------------------------------------------------
-- backup-restore/log-epoch-resets-ahead-client.  The backup is taken here (seq 1); what follows
-- in the transaction is lost by the restore (ROLLBACK), but the devices keep what they saw.
BEGIN;
SELECT sim.queue('B', 'b-1', '[{"ins": {"id": "t3", "list_id": "l1", "title": "bread"}}]');
SELECT * FROM sim.sync('B');
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('A');
SELECT sim.export('A') AS a_state \gset
SELECT sim.export('B') AS b_state \gset
ROLLBACK;
SELECT sim.import(:'a_state'), sim.import(:'b_state');
-- the restored server is behind both clients (cursor 3 > maxSeq 1)
SELECT (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1') AS max_seq,
       (SELECT string_agg(name || ':' || cursor, ' ' ORDER BY name) FROM sim.subs) AS client_cursors;
-- the operator rotates the epoch: new epoch, epoch_required, the client records dropped
SELECT syncular.rotate_log_epoch('p1') <> :'old_epoch' AS rotated;
SELECT epoch_required, (SELECT count(*) FROM syncular.sync_clients) AS client_records
  FROM syncular.sync_partition_registry WHERE partition = 'p1';

-- A comes back with a queued commit and the old epoch: reset only, nothing applied or pulled
SELECT sim.queue('A', 'a-3', '[{"row": {"id": "t2", "title": "brown eggs"}}]');
SELECT * FROM sim.sync('A');
SELECT (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1') AS max_seq,
       (SELECT count(*) FROM syncular.push_results WHERE client_commit_id = 'a-3') AS a3_results,
       (SELECT count(*) FROM sim.rows WHERE name = 'A') AS a_rows,
       (SELECT string_agg(commit_id, ' ') FROM sim.outbox WHERE name = 'A') AS a_outbox;
-- with the new epoch: the outbox replays (seq 2 is handed out again), the bootstrap brings the
-- restored rows, and A converges
SELECT * FROM sim.sync('A');
SELECT sim.converged('A');
SELECT * FROM sim.replica('A');
-- B's t3 was lost with the restore: B resets, re-bootstraps and no longer has it
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('B');
SELECT sim.converged('A'), sim.converged('B');
SELECT client_id, cursor FROM syncular.sync_clients ORDER BY client_id;

\i sql/scenario_done.psql
