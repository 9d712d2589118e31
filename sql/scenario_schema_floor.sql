-- scenario_schema_floor: the schema floor (push-and-pull.md §4.2 and §7):
-- schema/floor-response-processes-nothing.  The server serves exactly one schema version; a
-- request at any other version, older or newer, gets RESP_HEADER with requiredSchemaVersion =
-- latestSchemaVersion = the server's version (resetRequired computed as usual) and END: no push,
-- no pull, no client-record update.  The floor wins over an epoch reset.  A client that ships
-- the new schema wipes, re-bootstraps and replays its outbox, re-encoded under the new codec.
\set testdb syncular_t_scenario_schema_floor
\i sql/scenario_helpers.psql

SELECT sim.client('A', 'u1'), sim.client('B', 'u2');
SELECT sim.subscribe('A', 's', '{"list_id": ["l1"]}'), sim.subscribe('B', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');
SELECT sim.queue('A', 'a-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}}]');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('B');

-- a client built against a newer schema (2) than the server's (1): the floor, nothing processed
SELECT sim.client('N', 'u1', 'p1', 2), sim.subscribe('N', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('N');
SELECT count(*) AS n_records FROM syncular.sync_clients WHERE client_id = 'N';

-- the server moves to schema version 2: the registered schema plus a nullable column todos.prio
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

-- A (still at schema 1) comes back with a queued commit: the floor, required = latest = 2; the
-- commit is not applied (no result, no seq), nothing is pulled, A's client record is untouched
SELECT updated_at_ms AS a_updated FROM syncular.sync_clients WHERE client_id = 'A' \gset
SELECT sim.queue('A', 'a-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('A');
SELECT (SELECT count(*) FROM syncular.push_results WHERE client_commit_id = 'a-2') AS a2_results,
       (SELECT max_commit_seq FROM syncular.partitions) AS max_seq,
       (SELECT updated_at_ms = :a_updated FROM syncular.sync_clients WHERE client_id = 'A') AS a_record_untouched;
-- B, pulling only, gets the floor too
SELECT * FROM sim.sync('B');
-- the floor wins over an epoch reset: a client with a stale epoch at schema 1
SELECT sim.client('S', 'u2'), sim.subscribe('S', 's', '{"list_id": ["l1"]}');
UPDATE sim.clients SET epoch = 'epoch-from-elsewhere' WHERE name = 'S';
SELECT * FROM sim.sync('S');
-- and a client newer than the server (3) still gets required = latest = 2
SELECT sim.client('T', 'u2', 'p1', 3), sim.subscribe('T', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('T');

-- A ships schema 2: its replica is wiped, it re-bootstraps, and its outbox (a-2) is re-encoded
-- under the new codec and applied
SELECT sim.upgrade('A', 2);
SELECT * FROM sim.sync('A');
SELECT * FROM sim.replica('A');
SELECT sim.converged('A');
-- N, built for schema 2 from the start, is served now: acquisition, then bootstrap
SELECT * FROM sim.sync('N');
SELECT * FROM sim.sync('N');
-- B upgrades too and converges; a write of the new column travels to A
SELECT sim.upgrade('B', 2);
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "t1", "prio": 3}, "base": 2}]');
SELECT * FROM sim.sync('B');
SELECT * FROM sim.sync('A');
SELECT * FROM sim.sync('N');
SELECT sim.converged('A'), sim.converged('B'), sim.converged('N');
SELECT client_id, cursor FROM syncular.sync_clients ORDER BY client_id;

\i sql/scenario_done.psql
