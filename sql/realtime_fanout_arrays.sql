-- realtime_fanout_arrays: the connections as three arrays, each registration as JSON text, with
-- the parse of each text kept by the backend (src/fanout_regs.c; docs/realtime.md §2).  Every
-- gw.fanout call of the realtime tests also compares it with realtime_fanout byte for byte.
\set testdb syncular_t_realtime_fanout_arrays
\i sql/realtime_helpers.psql

-- W (admin) writes; A (u1) follows l1 in todos and counters; C (u3) follows l2
SELECT sim.client('W', 'admin'), sim.client('A', 'u1'), sim.client('C', 'u3');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}},
                               {"ins": {"id": "t2", "list_id": "l2", "title": "nails"}}]');
SELECT * FROM sim.sync('W');
SELECT sim.subscribe('A', 'a-l1', '{"list_id": ["l1"]}'), sim.subscribe('A', 'a-cnt', '{"list_id": ["l1"]}', 'counters'),
       sim.subscribe('C', 'c-l2', '{"list_id": ["l2"]}');
SELECT count(*) FROM (SELECT sim.sync(n) FROM unnest(ARRAY['A', 'C', 'A', 'C']) n) s;
SELECT gw.connect(1, 'A') UNION ALL SELECT gw.connect(3, 'C');

-- the rows of realtime_fanout_arrays for the sockets (registrations as the text given, default
-- jsonb's own), each with whether realtime_fanout answers the same row, body byte for byte
CREATE FUNCTION pg_temp.both(p_seq bigint, p_part text DEFAULT 'p1', p_text text DEFAULT 'plain')
RETURNS TABLE (conn bigint, action text, reason text, next_cursor bigint, body_bytes int, as_jsonb boolean)
LANGUAGE sql AS $$
  WITH j AS (SELECT f.*
               FROM syncular.realtime_fanout(p_part, p_seq,
                      (SELECT jsonb_agg(jsonb_build_object('conn', s.conn, 'cursor', s.cursor,
                                                           'registration', s.registration) ORDER BY s.conn)
                         FROM gw.sockets s)) WITH ORDINALITY f(conn, action, reason, body, next_cursor, ord)),
       a AS (SELECT f.*
               FROM syncular.realtime_fanout_arrays(p_part, p_seq,
                      (SELECT array_agg(s.conn ORDER BY s.conn) FROM gw.sockets s),
                      (SELECT array_agg(s.cursor ORDER BY s.conn) FROM gw.sockets s),
                      (SELECT array_agg(CASE p_text WHEN 'pretty' THEN jsonb_pretty(s.registration)
                                                    ELSE s.registration::text END ORDER BY s.conn)
                         FROM gw.sockets s)) WITH ORDINALITY f(conn, action, reason, body, next_cursor, ord))
  SELECT a.conn, a.action, a.reason, a.next_cursor, length(a.body),
         (j.conn, j.action, j.reason, j.body, j.next_cursor) IS NOT DISTINCT FROM
         (a.conn, a.action, a.reason, a.body, a.next_cursor)
    FROM a FULL JOIN j USING (ord) ORDER BY ord
$$;

-- commit 2 writes a todo and a counter in l1: A gets both sections, C nothing.  The same delta
-- from both signatures, from the cache on the second call and from texts spelled otherwise
SELECT sim.queue('W', 'w-2', '[{"row": {"id": "t1", "title": "oat milk"}},
                               {"ins": {"id": 7, "list_id": "l1", "score": 1.5}, "table": "counters"}]');
SELECT * FROM sim.sync('W');
SELECT * FROM pg_temp.both(2);
SELECT * FROM pg_temp.both(2);
SELECT * FROM pg_temp.both(2, p_text => 'pretty');
SELECT * FROM gw.fanout(2);

-- the cache's limit: off (every text parsed in every call), or so small that the cache rotates
-- on every call (entries still in use are copied into the new generation): the same answers
SELECT sim.queue('W', 'w-3', '[{"row": {"id": "t1", "title": "soy milk"}}]');
SELECT * FROM sim.sync('W');
SET syncular.realtime_registration_cache_kb = 0;
SELECT * FROM pg_temp.both(3);
SET syncular.realtime_registration_cache_kb = 1;
SELECT * FROM pg_temp.both(3);
SELECT * FROM pg_temp.both(3);
SELECT * FROM gw.fanout(3);
RESET syncular.realtime_registration_cache_kb;

-- realtime_connect parses the registration it answers into this backend's cache, in the text a
-- gateway reads back ((answer -> 'registration')::text, gateway/ws.c), so that the first fanout
-- call passing it finds it parsed: the cache emptied (off for one call), then one entry for the
-- connect, none more for a fanout call passing that text, one more for a text spelled otherwise
SET syncular.realtime_registration_cache_kb = 0;
SELECT count(*) FROM syncular.realtime_fanout_arrays('p1', 1, '{}', '{}', '{}');
RESET syncular.realtime_registration_cache_kb;
SELECT entries, bytes FROM syncular.realtime_registration_cache();
SELECT (syncular.realtime_connect('p1', 'u1', 'A') -> 'registration')::text AS reg_seeded \gset
SELECT entries, bytes > 0 AS has_bytes FROM syncular.realtime_registration_cache();
SELECT conn, action, reason, next_cursor
  FROM syncular.realtime_fanout_arrays('p1', 3, '{5}', '{2}', ARRAY[:'reg_seeded']);
SELECT entries FROM syncular.realtime_registration_cache();
SELECT count(*) FROM syncular.realtime_fanout_arrays('p1', 3, '{5}', '{2}', ARRAY[jsonb_pretty(:'reg_seeded'::jsonb)]);
SELECT entries FROM syncular.realtime_registration_cache();

-- bad input: the catalogue's error naming the element and field, as the jsonb signature's
CREATE FUNCTION pg_temp.arr(p_part text, p_ids bigint[], p_cursors bigint[], p_regs text[]) RETURNS text
LANGUAGE sql AS $$
  SELECT pg_temp.try(format('SELECT count(*) FROM syncular.realtime_fanout_arrays(%L, 1, %L, %L, %L)',
                            p_part, p_ids, p_cursors, p_regs))
$$;
SELECT registration::text AS reg FROM gw.sockets WHERE conn = 3 \gset
-- not JSON, not an object, NULL elements, numbers outside ±(2^53 - 1)
SELECT pg_temp.arr('p1', '{5, 6}', '{1, 1}', ARRAY[:'reg', '{"v": 1']);
SELECT pg_temp.arr('p1', '{5}', '{1}', '{"[]"}');
SELECT pg_temp.arr('p1', '{5}', '{1}', '{"\"x\""}');
SELECT pg_temp.arr('p1', '{5}', '{1}', '{NULL}');
SELECT pg_temp.arr('p1', '{NULL}', '{1}', ARRAY[:'reg']);
SELECT pg_temp.arr('p1', '{5}', '{NULL}', ARRAY[:'reg']);
SELECT pg_temp.arr('p1', '{5}', '{9007199254740992}', ARRAY[:'reg']);
SELECT pg_temp.arr('p1', '{-9007199254740992}', '{1}', ARRAY[:'reg']);
-- a malformed field of the registration: the same error from both signatures
SELECT pg_temp.arr('p1', '{5}', '{1}', ARRAY[(:'reg'::jsonb || '{"wireVersion": 1}')::text]);
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 5, 'cursor', 1,
                                       'registration', :'reg'::jsonb || '{"wireVersion": 1}'))));
SELECT pg_temp.arr('p1', '{5}', '{1}', ARRAY[jsonb_set(:'reg'::jsonb, '{subscriptions,0,effective}', '{}')::text]);
-- a registration of another partition, also when its text is in the cache (parsed for p1 above)
SELECT pg_temp.arr('p2', '{5}', '{1}', ARRAY[:'reg']);
-- the arrays themselves
SELECT pg_temp.arr('p1', '{5, 6}', '{1}', ARRAY[:'reg', :'reg']);
SELECT pg_temp.arr('p1', '{{5}}', '{{1}}', ARRAY[ARRAY[:'reg']]);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout_arrays('p1', 1, NULL, '{}', '{}')$$);
SELECT pg_temp.try($$SELECT count(*) FROM syncular.realtime_fanout_arrays('', 1, '{}', '{}', '{}')$$);
SELECT * FROM syncular.realtime_fanout_arrays('p1', 1, '{}', '{}', '{}');
SELECT conn, action, reason, next_cursor FROM syncular.realtime_fanout_arrays('p1', 3, '{5, 6}', '{3, 3}',
                                                                               ARRAY[:'reg', :'reg']);

-- a call inside a call: a scope resolver that runs realtime_fanout_arrays itself with the cache
-- turned off (which drops every kept parse when no other call runs) leaves the outer call's
-- registrations alone: A still gets its delta, the same bytes as from the jsonb signature
CREATE FUNCTION public.resolve_nested(actor text, part text, client text) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('syncular.realtime_registration_cache_kb', '0', true);
  PERFORM count(*) FROM syncular.realtime_fanout_arrays(part, 1, '{9}', '{1}',
                                                       ARRAY[(SELECT registration::text FROM gw.sockets WHERE conn = 3)]);
  RETURN public.resolve(actor, part, client);
END $$;
SELECT syncular.set_scope_resolver('public.resolve_nested(text,text,text)');
SELECT sim.queue('W', 'w-4', '[{"row": {"id": "t1", "title": "rice milk"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM pg_temp.both(4);
SELECT * FROM pg_temp.both(4);
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
SELECT * FROM gw.fanout(4);

-- a new compiled schema drops what was parsed under the old one: schema version 2 no longer
-- has table counters, so A's registration (counters under version 1, parsed and kept above) is
-- refused as the jsonb signature refuses it; a parse kept from version 1 would be answered
-- (reset-required: registered under version 1) instead
SELECT registration::text AS reg_a FROM gw.sockets WHERE conn = 1 \gset
SELECT pg_temp.arr('p1', '{1}', '{4}', ARRAY[:'reg_a']);
SELECT syncular.ensure_schema('{"version": 2, "tables": [
  {"name": "todos", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true},
     {"name": "done", "type": "boolean", "nullable": true},
     {"name": "n", "type": "integer", "nullable": true},
     {"name": "meta", "type": "json", "nullable": true},
     {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
     {"name": "att", "type": "blob_ref", "nullable": true}],
   "scopes": ["list:{list_id}"],
   "indexes": [{"name": "uniq_title", "columns": ["title"], "unique": true}]}]}'::jsonb) ->> 'action' AS bump;
SELECT pg_temp.arr('p1', '{1}', '{4}', ARRAY[:'reg_a']);
SELECT pg_temp.try(format($$SELECT count(*) FROM syncular.realtime_fanout('p1', 1, %L)$$,
  jsonb_build_array(jsonb_build_object('conn', 1, 'cursor', 4, 'registration', :'reg_a'::jsonb))));
-- C's registration (todos only) is parsed again under version 2: reset-required (registered
-- under version 1) until it registers again
DELETE FROM gw.sockets WHERE conn = 1;
SELECT * FROM pg_temp.both(4);
SELECT gw.connect(3, 'C');
SELECT * FROM gw.fanout(4, ARRAY[3]::bigint[]);

\i sql/scenario_done.psql
