-- realtime_fanout: one call answers every socket of a partition for a commit notification
-- (SPEC §8.2, §8.3; docs/realtime.md §2).
\set testdb syncular_t_realtime_fanout
\i sql/realtime_helpers.psql

-- W (admin) writes; A (u1: l1 l2) follows l1; B (u2: l1) follows l1; C (u3: l2) follows l2
SELECT sim.client('W', 'admin'), sim.client('A', 'u1'), sim.client('B', 'u2'), sim.client('C', 'u3');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l2", "title": "nails"}}]');
SELECT * FROM sim.sync('W');
SELECT sim.subscribe('A', 'a-l1', '{"list_id": ["l1"]}'), sim.subscribe('B', 'b-l1', '{"list_id": ["l1"]}'),
       sim.subscribe('C', 'c-l2', '{"list_id": ["l2"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('C');
SELECT * FROM sim.sync('C');
SELECT gw.connect(1, 'A') UNION ALL SELECT gw.connect(2, 'B') UNION ALL SELECT gw.connect(3, 'C');

-- commit 2 touches l1 only: A and B get the same delta, C nothing (its cursor still advances)
SELECT sim.queue('W', 'w-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(2);
-- a duplicate or late notification: nothing new
SELECT * FROM gw.fanout(2);
SELECT * FROM gw.fanout(1);

-- cursor-contiguous: C missed the notification of commit 3; the one for commit 4 bridges the
-- gap from C's cursor (2) in one section, commits in order, a delete without a row
SELECT sim.queue('W', 'w-3', '[{"row": {"id": "t2", "title": "screws"}}]');
SELECT sim.queue('W', 'w-4', '[{"ins": {"id": "t3", "list_id": "l2", "title": "glue"}}, {"del": "t2"}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(4);

-- several subscriptions and tables: A adds l2 and the counters of l1 (a socket round: the
-- gateway re-registers at its end); commit 5 writes a todo and a counter in l1.  A gets one
-- section per affected subscription, in registration order; B only its todos section
SELECT sim.subscribe('A', 'a-l2', '{"list_id": ["l2"]}'), sim.subscribe('A', 'a-cnt', '{"list_id": ["l1"]}', 'counters');
SELECT * FROM sim.sync('A');
SELECT gw.connect(1, 'A');
SELECT sim.queue('W', 'w-5', '[{"ins": {"id": "t4", "list_id": "l1", "title": "tea"}},
                               {"ins": {"id": 7, "list_id": "l1", "score": 1.5}, "table": "counters"}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(5);

-- a revoked grant: u2 loses l1.  B's registration still names l1, but no delta carries a row
-- the live grant no longer allows: B is woken (catchup-required) and keeps its cursor, A gets
-- its delta.  B's registration is re-derived (its next connect / socket round) without l1
DELETE FROM public.grants WHERE actor = 'u2' AND val = 'l1';
SELECT sim.queue('W', 'w-6', '[{"row": {"id": "t1", "title": "soy milk"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(6);
SELECT gw.connect(2, 'B');
SELECT * FROM gw.fanout(6);
SELECT syncular.realtime_connect('p1', 'u2', 'B') -> 'registration' -> 'subscriptions' AS b_registered;

-- syncular.realtime_grant_cache_ms lets a backend reuse a resolved grant for that long: a grant
-- revoked meanwhile still passes until it expires; 0 (the default) resolves on every call
SET syncular.realtime_grant_cache_ms = 3600000;
UPDATE gw.sockets SET cursor = 5 WHERE conn = 1;
SELECT * FROM gw.fanout(6, ARRAY[1]::bigint[]) WHERE NOT starts_with(fanout, '  ');
DELETE FROM public.grants WHERE actor = 'u1' AND val = 'l1';
UPDATE gw.sockets SET cursor = 5 WHERE conn = 1;
SELECT * FROM gw.fanout(6, ARRAY[1]::bigint[]) WHERE NOT starts_with(fanout, '  ');
RESET syncular.realtime_grant_cache_ms;
UPDATE gw.sockets SET cursor = 5 WHERE conn = 1;
SELECT * FROM gw.fanout(6, ARRAY[1]::bigint[]);
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l1');
UPDATE gw.sockets SET cursor = 5 WHERE conn = 1;
SELECT * FROM gw.fanout(6, ARRAY[1]::bigint[]) WHERE NOT starts_with(fanout, '  ');

-- the registration's wire version is the one deltas are encoded in (a client whose last
-- round was wire 2); C follows l2
UPDATE gw.sockets SET registration = jsonb_set(registration, '{wireVersion}', '2') WHERE conn = 3;
SELECT sim.queue('W', 'w-7', '[{"row": {"id": "t3", "title": "tape"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(7, ARRAY[3]::bigint[]);
UPDATE gw.sockets SET registration = jsonb_set(registration, '{wireVersion}', '3') WHERE conn = 3;

-- contiguity with a bounded window: a socket further behind than
-- syncular.realtime_max_window_commits is woken (catchup-required) and keeps its cursor; so is
-- every later commit until its pull and ack raise the cursor, then deltas resume
SET syncular.realtime_max_window_commits = 2;
SELECT sim.queue('W', 'w-8', '[{"row": {"id": "t3", "title": "rope"}}]'),
       sim.queue('W', 'w-9', '[{"row": {"id": "t3", "title": "wire"}}]'),
       sim.queue('W', 'w-10', '[{"row": {"id": "t3", "title": "string"}}]');
SELECT * FROM sim.sync('W');
-- C saw 7; A (l2 too) is at 6 after its wake-free rounds: both are behind 10 by more than 2
SELECT * FROM gw.fanout(10, ARRAY[1, 3]::bigint[]);
SELECT sim.queue('W', 'w-11', '[{"row": {"id": "t3", "title": "twine"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(11, ARRAY[1, 3]::bigint[]);
SELECT * FROM sim.sync('C');
SELECT gw.ack(3, 11);
SELECT sim.queue('W', 'w-12', '[{"row": {"id": "t3", "title": "cord"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(12, ARRAY[1, 3]::bigint[]);
RESET syncular.realtime_max_window_commits;
SELECT * FROM sim.sync('A');
SELECT gw.ack(1, 12);

-- the window read is bounded in changes (whole commits, newest first): with a budget of one
-- change, commit 14 (two changes) is read alone, so C (at 12) is woken; once at 13, a commit
-- larger than the budget is still delivered whole
SET syncular.realtime_max_window_changes = 1;
SELECT sim.queue('W', 'w-13', '[{"row": {"id": "t3", "title": "a"}}]'),
       sim.queue('W', 'w-14', '[{"row": {"id": "t3", "title": "b"}}, {"ins": {"id": "t5", "list_id": "l2"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(14, ARRAY[3]::bigint[]);
UPDATE gw.sockets SET cursor = 13 WHERE conn = 3;
SELECT * FROM gw.fanout(14, ARRAY[3]::bigint[]);
RESET syncular.realtime_max_window_changes;

-- a delta over syncular.realtime_max_delta_bytes becomes a delta-too-large wake-up
SET syncular.realtime_max_delta_bytes = 64;
SELECT sim.queue('W', 'w-15', '[{"row": {"id": "t5", "title": "c"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(15, ARRAY[3]::bigint[]);
RESET syncular.realtime_max_delta_bytes;
SELECT * FROM gw.fanout(15, ARRAY[3]::bigint[]);

-- a pending backfill checkpoint of the running schema (RFC 0007): no delta is served while the
-- gate refuses, catchup-required instead (declared and dropped in a rolled-back transaction)
SELECT sim.queue('W', 'w-16', '[{"row": {"id": "t5", "title": "d"}}]');
SELECT * FROM sim.sync('W');
BEGIN;
SELECT syncular.declare_checkpoint('p1', 'backfill_titles', 1) ->> 'state' AS declared;
SELECT * FROM gw.fanout(16, ARRAY[3]::bigint[]);
ROLLBACK;
SELECT * FROM gw.fanout(16, ARRAY[3]::bigint[]);

-- the pruning horizon passes a cursor: reset-required (C, at the horizon, is still served)
SELECT * FROM sim.sync('A');
SELECT gw.ack(1, 16);
UPDATE gw.sockets SET cursor = 14 WHERE conn = 1;
SELECT syncular.prune('p1', '{"minRetainedCommits": 0, "forceAgeMs": 0}') ->> 'horizonSeq' AS horizon;
SELECT sim.queue('W', 'w-17', '[{"row": {"id": "t5", "title": "f"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM gw.fanout(17, ARRAY[1, 3]::bigint[]);

-- the log epoch rotates (a restore): every registration of the old epoch is answered
-- reset-required, whatever it matches
SELECT syncular.rotate_log_epoch('p1') IS NOT NULL AS rotated;
SELECT * FROM gw.fanout(17);

-- the schema moves to version 2: registrations made under version 1 are answered
-- reset-required; a registration made under version 2 is not
SELECT gw.connect(3, 'C');
SELECT syncular.ensure_schema(jsonb_build_object('version', 2, 'tables', (
  SELECT jsonb_agg(jsonb_build_object(
           'name', t ->> 'name', 'primaryKey', t ->> 'primaryKey',
           'scopes', (SELECT jsonb_agg(s -> 'pattern') FROM jsonb_array_elements(t -> 'scopes') s),
           'indexes', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', i -> 'name', 'columns', i -> 'columns',
                                                                   'unique', i -> 'unique')), '[]')
                         FROM jsonb_array_elements(t -> 'indexes') i),
           'columns', (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('name', c -> 'name', 'type', c -> 'type',
                                          'nullable', c -> 'nullable', 'crdtType', c -> 'crdtType')) ORDER BY o)
                         FROM jsonb_array_elements(t -> 'columns') WITH ORDINALITY x(c, o))
                      || CASE WHEN t ->> 'name' = 'todos'
                              THEN '[{"name": "prio", "type": "integer", "nullable": true}]'::jsonb ELSE '[]' END)
         ORDER BY n)
    FROM syncular.sync_settings st, jsonb_array_elements(st.compiled -> 'tables') WITH ORDINALITY y(t, n)))) ->> 'action' AS bump;
SELECT * FROM gw.fanout(17, ARRAY[3]::bigint[]);
SELECT gw.connect(3, 'C');
SELECT * FROM gw.fanout(17, ARRAY[3]::bigint[]);

-- a registration from a partition never seen answers none
SELECT * FROM syncular.realtime_fanout('p9', 1,
  jsonb_build_array(jsonb_build_object('conn', 5, 'cursor', 0,
    'registration', (SELECT registration FROM gw.sockets WHERE conn = 3) || '{"partition": "p9"}')));

-- bad input: a clear catalogue error naming the element and field, never a crash
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '{"conn": 1}')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[1]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[{"cursor": 1, "registration": {}}]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[{"conn": 1, "cursor": 1.5, "registration": {}}]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[{"conn": 1, "cursor": 1e300, "registration": {}}]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[{"conn": 1, "cursor": 1, "registration": []}]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[{"conn": 1, "cursor": 1, "registration": {"v": 1}}]')$$);
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p2', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 1, 'registration', registration)))) FROM gw.sockets WHERE conn = 3;
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 1, 'registration', registration || '{"wireVersion": 1}'))))
  FROM gw.sockets WHERE conn = 3;
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 1, 'registration',
    jsonb_set(registration, '{subscriptions,0,table}', '"nope"'))))) FROM gw.sockets WHERE conn = 3;
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 1, 'registration',
    jsonb_set(registration, '{subscriptions,0,effective}', '{"list_id": "l2"}'))))) FROM gw.sockets WHERE conn = 3;
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 1, 'registration',
    jsonb_set(registration, '{subscriptions,0,effective}', '{}'))))) FROM gw.sockets WHERE conn = 3;
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', NULL, '[]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('', 1, '[]')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, '[]')$$);

\i sql/scenario_done.psql
