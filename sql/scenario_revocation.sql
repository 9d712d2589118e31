-- scenario_revocation: conformance catalogue B.4, scope revocation purge (push-and-pull.md §7):
-- scopes/revocation-purges-exactly-the-grant, with scopes/effective-is-requested-intersect-allowed,
-- scopes/write-outside-grant-denied-and-scope-columns-immutable and
-- scopes/resolver-failure-fails-loud-and-closed.  When the resolver stops allowing a value, the
-- subscription on it is answered revoked / sync.scope_revoked (nothing delivered, nextCursor =
-- the request cursor, no effective scopes), writes on its rows are sync.forbidden, and the
-- client purges exactly that grant's rows; other subscriptions are unaffected.
-- (scopes/fail-closed-without-local-mapping is client-side: the server part is the same answer.)
\set testdb syncular_t_scenario_revocation
\i sql/scenario_helpers.psql

-- Z (admin, every list) writes two lists; A (u1: l1 and l2) follows both; B (u2: l1 only)
SELECT sim.client('Z', 'admin'), sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT * FROM sim.sync('Z');
SELECT sim.queue('Z', 'z-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l1", "title": "eggs"}},
                               {"ins": {"id": "t3", "list_id": "l2", "title": "nails"}},
                               {"ins": {"id": "t4", "list_id": "l2", "title": "glue"}}]');
SELECT * FROM sim.sync('Z');
SELECT sim.subscribe('A', 's-l1', '{"list_id": ["l1"]}'), sim.subscribe('A', 's-l2', '{"list_id": ["l2"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('A');
SELECT sim.converged('A');

-- scopes/effective-is-requested-intersect-allowed: B asks for l1 and l2, gets l1 only
SELECT sim.subscribe('B', 's-both', '{"list_id": ["l2", "l1"]}');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');

-- scopes/write-outside-grant-denied-and-scope-columns-immutable: B may not insert into l2 nor
-- move t1 to l2; a present scope column equal to the stored one is fine
SELECT sim.queue('B', 'b-1', '[{"ins": {"id": "t5", "list_id": "l2", "title": "tape"}}]');
SELECT sim.queue('B', 'b-2', '[{"row": {"id": "t1", "list_id": "l2"}}]');
SELECT sim.queue('B', 'b-3', '[{"row": {"id": "t1", "list_id": "l1", "n": 1}}]');
SELECT * FROM sim.sync('B');

-- ---------------------------------------------------------------------------------------------
-- scopes/revocation-purges-exactly-the-grant: u1 loses l2.  A's pending edit on t3 (l2) is
-- refused with sync.forbidden and dropped; its edit on t1 (l1) applies; s-l2 is revoked with
-- nextCursor = the request cursor (1) and A purges t3 and t4, keeping t1 and t2
DELETE FROM public.grants WHERE actor = 'u1' AND val = 'l2';
SELECT sim.queue('A', 'a-1', '[{"row": {"id": "t3", "title": "screws"}}]');
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "done": true}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.replica('A');
SELECT pg_temp.row_state('todos', 'p1', 't3') AS t3_untouched;
SELECT sim.converged('A');
-- the round registered both subscriptions (the revoked one at its request cursor); the next
-- round, without s-l2, unregisters it
SELECT cursor, subscriptions FROM syncular.sync_clients WHERE client_id = 'A';
SELECT * FROM sim.sync('A');
SELECT cursor, subscriptions FROM syncular.sync_clients WHERE client_id = 'A';
-- B's l1 subscription never noticed
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');

-- the grant comes back: a new subscription bootstraps l2 again
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l2');
SELECT sim.subscribe('A', 's-l2', '{"list_id": ["l2"]}');
SELECT * FROM sim.sync('A');
SELECT sim.converged('A');

-- ---------------------------------------------------------------------------------------------
-- scopes/resolver-failure-fails-loud-and-closed: the resolver raises for actor "boom": every
-- subscription is revoked and every write forbidden, the round itself succeeds
SELECT sim.client('K', 'boom');
SELECT sim.subscribe('K', 's-l1', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('K');
SELECT sim.queue('K', 'k-1', '[{"row": {"id": "t1", "n": 9}}]');
SELECT * FROM sim.sync('K');
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1_untouched;

\i sql/scenario_done.psql
