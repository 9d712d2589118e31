-- realtime_ack_many (SPEC §8.2; docs/realtime.md §3): a batch of acks of one partition in one
-- statement, each element judged as realtime_ack judges its call; per client the highest
-- acceptable cursor counts; nothing but cursor and activity time is written
\set testdb syncular_t_realtime_ack_many
\i sql/realtime_helpers.psql

SELECT sim.client('W', 'admin'), sim.client('A', 'u1'), sim.client('B', 'u1'), sim.client('C', 'u2'),
       sim.client('N', 'u1');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1"}}]');
SELECT * FROM sim.sync('W');
SELECT sim.subscribe('A', 'a-l1', '{"list_id": ["l1"]}'), sim.subscribe('B', 'b-l1', '{"list_id": ["l1"]}'),
       sim.subscribe('C', 'c-l1', '{"list_id": ["l1"]}');
-- the first sync acquires the epoch, the second registers the subscription (cursor 1)
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('C');
SELECT * FROM sim.sync('C');
SELECT sim.queue('W', 'w-2', '[{"ins": {"id": "t2", "list_id": "l1"}}]'),
       sim.queue('W', 'w-3', '[{"ins": {"id": "t3", "list_id": "l1"}}]');
SELECT * FROM sim.sync('W');
SELECT log_epoch AS epoch FROM syncular.sync_partition_registry WHERE partition = 'p1' \gset
SELECT gw.record('A'), gw.record('B'), gw.record('C');
UPDATE syncular.sync_clients SET updated_at_ms = 0 WHERE client_id IN ('A', 'B', 'C');

-- one call for three sockets: A acked twice in one batch (the highest counts, whatever the
-- order), B once, C under the wrong actor (ignored), N has no record (ignored, none created)
SELECT syncular.realtime_ack_many('p1', ARRAY['u1', 'u1', 'u1', 'u1', 'u1'], ARRAY['A', 'B', 'A', 'C', 'N'],
                                  ARRAY[3, 2, 2, 3, 3]::bigint[], ARRAY[:'epoch', :'epoch', :'epoch', :'epoch', :'epoch'])
       AS updated;
SELECT gw.record(n), updated_at_ms > 0 AS touched
  FROM unnest(ARRAY['A', 'B', 'C']) n LEFT JOIN syncular.sync_clients c ON c.client_id = n ORDER BY n;
SELECT gw.record('N');

-- a cursor going backwards never lowers a record; an equal one still counts as written
SELECT syncular.realtime_ack_many('p1', ARRAY['u1', 'u1'], ARRAY['A', 'B'], ARRAY[1, 2]::bigint[],
                                  ARRAY[:'epoch', :'epoch']) AS updated;
SELECT gw.record('A'), gw.record('B');
-- beyond the log: that element is skipped, the other one of the same client still counts
SELECT syncular.realtime_ack_many('p1', ARRAY['u1', 'u1'], ARRAY['B', 'B'], ARRAY[4, 3]::bigint[],
                                  ARRAY[:'epoch', :'epoch']) AS updated;
SELECT gw.record('B');
-- an old log epoch, another partition: nothing recorded
SELECT syncular.realtime_ack_many('p1', ARRAY['u2'], ARRAY['C'], ARRAY[3]::bigint[], ARRAY['not-the-epoch'])
       AS stale_epoch;
SELECT syncular.realtime_ack_many('p2', ARRAY['u2'], ARRAY['C'], ARRAY[3]::bigint[], ARRAY[:'epoch'])
       AS other_partition;
SELECT gw.record('C');
-- empty batch: nothing to do
SELECT syncular.realtime_ack_many('p1', '{}', '{}', '{}', '{}') AS empty;

-- bad input: the whole call is refused and nothing is written, not even its good elements
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', ARRAY['u2', 'u2'], ARRAY['C'], ARRAY[3]::bigint[],
                                                         ARRAY['e'])$$);
SELECT pg_temp.try(format($$SELECT syncular.realtime_ack_many('p1', ARRAY['u2', 'u2'], ARRAY['C', 'C'],
                                                                ARRAY[3, -1]::bigint[], ARRAY[%L, %L])$$,
                          :'epoch', :'epoch'));
SELECT gw.record('C');
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', ARRAY['u2'], ARRAY['C'],
                                                         ARRAY[9007199254740992]::bigint[], ARRAY['e'])$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', ARRAY['u2'], ARRAY['C'], ARRAY[NULL]::bigint[],
                                                         ARRAY['e'])$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', ARRAY['u2'], ARRAY[''], ARRAY[3]::bigint[],
                                                         ARRAY['e'])$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', NULL, ARRAY['C'], ARRAY[3]::bigint[], ARRAY['e'])$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('', ARRAY['u2'], ARRAY['C'], ARRAY[3]::bigint[],
                                                         ARRAY['e'])$$);
SELECT pg_temp.try($$SELECT syncular.realtime_ack_many('p1', ARRAY[['u2']], ARRAY['C'], ARRAY[3]::bigint[],
                                                         ARRAY['e'])$$);

-- only the gateway's role may call it (EXECUTE revoked from PUBLIC)
SELECT has_function_privilege('public', 'syncular.realtime_ack_many(text, text[], text[], bigint[], text[])',
                              'EXECUTE') AS public_may_execute;

\i sql/scenario_done.psql
