-- realtime_connect (SPEC §8.1, §8.7; docs/realtime.md §1) and presence_authorize (§8.6.3)
\set testdb syncular_t_realtime_connect
\i sql/realtime_helpers.psql

SELECT sim.client('W', 'admin'), sim.client('A', 'u1'), sim.client('B', 'u2'), sim.client('X', 'boom');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1"}}, {"ins": {"id": "t2", "list_id": "l2"}}]');
SELECT * FROM sim.sync('W');

-- a client that never pulled: no record, nothing registered, requiresSync
SELECT gw.connect(1, 'A');
SELECT jsonb_pretty((syncular.realtime_connect('p1', 'u1', 'A') -> 'registration') - 'logEpoch') AS registration;

-- after a pull the persisted subscriptions register with their effective scopes (requested ∩
-- allowed: B may see l1 only); scopeKeys are prefix:value per pattern, distinct and sorted
SELECT sim.subscribe('A', 'a-todos', '{"list_id": ["l2", "l1"]}'),
       sim.subscribe('A', 'a-cnt', '{"list_id": ["l1"]}', 'counters'),
       sim.subscribe('B', 'b-todos', '{"list_id": ["l1", "l2"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('B');
SELECT gw.connect(1, 'A');
SELECT jsonb_pretty((syncular.realtime_connect('p1', 'u1', 'A') -> 'registration') - 'logEpoch') AS registration;
SELECT gw.connect(2, 'B');
SELECT syncular.realtime_connect('p1', 'u2', 'B') -> 'registration' -> 'subscriptions' AS b_registered;

-- behind the log: requiresSync (the hello cursor is the record's: last pull or ack)
SELECT sim.queue('W', 'w-2', '[{"row": {"id": "t1", "title": "x"}}]');
SELECT * FROM sim.sync('W');
SELECT gw.connect(1, 'A');

-- the grant narrows (u1 loses l2): the effective scopes narrow with it; a subscription with
-- nothing left is revoked and left out, and requiresSync tells the client to pull
DELETE FROM public.grants WHERE actor = 'u1' AND val = 'l2';
SELECT syncular.realtime_connect('p1', 'u1', 'A') -> 'registration' -> 'subscriptions' AS a_narrowed;
DELETE FROM public.grants WHERE actor = 'u2';
SELECT gw.connect(2, 'B');
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l2'), ('u2', 'list_id', 'l1');

-- a resolver that raises fails closed: nothing registered, no error
SELECT sim.subscribe('X', 'x-todos', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('X');
SELECT * FROM sim.sync('X');
SELECT gw.connect(3, 'X');

-- presence: the subset of keys the client is registered on now, input order, NULLs and
-- duplicates dropped; never a key of another scope
SELECT syncular.presence_authorize('p1', 'u1', 'A', ARRAY['list:l2', 'list:l9', NULL, 'list:l1', 'list:l2', 'l1']);
SELECT syncular.presence_authorize('p1', 'u2', 'B', ARRAY['list:l2', 'list:l1']);
SELECT syncular.presence_authorize('p1', 'u2', 'B', '{}');
SELECT syncular.presence_authorize('p1', 'u1', 'nobody', ARRAY['list:l1']);
-- the live grant: u2 loses l1, so does B's presence on it
DELETE FROM public.grants WHERE actor = 'u2';
SELECT syncular.presence_authorize('p1', 'u2', 'B', ARRAY['list:l1']);
INSERT INTO public.grants VALUES ('u2', 'list_id', 'l1');

-- errors
SELECT pg_temp.try($$SELECT syncular.realtime_connect('p1', 'u2', 'A')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_connect('p1', 'u1', '["remote-command", "x"]')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_connect('p1', '', 'A')$$);
SELECT pg_temp.try($$SELECT syncular.realtime_connect(NULL, 'u1', 'A')$$);
SELECT pg_temp.try($$SELECT syncular.presence_authorize('p1', 'u2', 'A', ARRAY['list:l1'])$$);
SELECT pg_temp.try($$SELECT syncular.presence_authorize('p1', 'u1', 'A', NULL)$$);
SELECT pg_temp.try($$SELECT syncular.presence_authorize('p1', 'u1', 'A', ARRAY[ARRAY['list:l1']])$$);
-- an unseen partition is registered (as a round would) and has nothing
SELECT gw.epochs((syncular.realtime_connect('p2', 'u1', 'A') - 'registration')::text, 'p2') AS unseen;

\i sql/scenario_done.psql
