-- realtime_ack (SPEC §8.2; docs/realtime.md §3): only the existing record's cursor and activity
-- time move, to their maxima; actor and current log epoch required; nothing else written
\set testdb syncular_t_realtime_ack
\i sql/realtime_helpers.psql

SELECT sim.client('W', 'admin'), sim.client('A', 'u1'), sim.client('N', 'u1');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1"}}]');
SELECT * FROM sim.sync('W');
SELECT sim.subscribe('A', 'a-l1', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT sim.queue('W', 'w-2', '[{"ins": {"id": "t2", "list_id": "l1"}}]'),
       sim.queue('W', 'w-3', '[{"ins": {"id": "t3", "list_id": "l1"}}]');
SELECT * FROM sim.sync('W');
-- A's record: cursor 1 (its last pull), wire 3, its subscription list; deltas 2 and 3 follow
SELECT gw.connect(1, 'A');
SELECT * FROM gw.fanout(3);
SELECT gw.record('A');
UPDATE syncular.sync_clients SET updated_at_ms = 0 WHERE client_id = 'A';

-- an ack advances the cursor and the activity time; subscriptions, actor and wire version stay
SELECT gw.ack(1, 3);
SELECT gw.record('A'), updated_at_ms > 0 AS touched FROM syncular.sync_clients WHERE client_id = 'A';
-- monotonic: a lower or equal ack never lowers the cursor (the record still matches)
SELECT gw.ack(1, 2);
SELECT gw.ack(1, 3);
SELECT gw.record('A');
-- a cursor beyond the log is not recorded
SELECT gw.ack(1, 4);
SELECT gw.record('A');

-- another actor's socket, a stale epoch, no record: ignored, nothing created
SELECT syncular.realtime_ack('p1', 'u2', 'A', 3, (SELECT log_epoch FROM syncular.sync_partition_registry)) AS other_actor;
SELECT gw.ack(1, 3, 'not-the-epoch');
SELECT syncular.realtime_ack('p1', 'u1', 'N', 1, (SELECT log_epoch FROM syncular.sync_partition_registry)) AS no_record;
SELECT gw.record('N');

-- after a rotation a delayed ack of the old epoch cannot touch the client registered anew
SELECT registration ->> 'logEpoch' AS old_epoch FROM gw.sockets WHERE conn = 1 \gset
SELECT syncular.rotate_log_epoch('p1') IS NOT NULL AS rotated;
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT sim.queue('W', 'w-4', '[{"ins": {"id": "t4", "list_id": "l1"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM sim.sync('W');
SELECT gw.record('A');
SELECT syncular.realtime_ack('p1', 'u1', 'A', 4, :'old_epoch') AS delayed_ack;
SELECT gw.record('A');
SELECT gw.connect(1, 'A');
SELECT gw.ack(1, 4);
SELECT gw.record('A');

-- bad input
SELECT pg_temp.try($$SELECT syncular.realtime_ack('p1', 'u1', 'A', -1, 'e')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack('p1', 'u1', 'A', 9007199254740992, 'e')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack('p1', 'u1', 'A', NULL, 'e')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack('p1', 'u1', 'A', 1, '')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack('p1', NULL, 'A', 1, 'e')$$);

\i sql/scenario_done.psql
