-- realtime_fanout: sockets registered alike share one computed outcome (src/fanout.c "shared
-- outcomes"), but only when their live grant, subscriptions (requested and effective scopes),
-- cursor and wire version are all equal: a socket differing in any of them is judged alone.
\set testdb syncular_t_realtime_fanout_shared
\i sql/realtime_helpers.psql

-- A1, A2 (u1: l1 l2), B (u2: l1) and Z (u1, requesting l1 and l3) all follow subscription "s";
-- each registers the effective scopes {list_id: [l1]}
SELECT sim.client('W', 'admin'), sim.client('A1', 'u1'), sim.client('A2', 'u1'), sim.client('B', 'u2'),
       sim.client('Z', 'u1');
SELECT * FROM sim.sync('W');
SELECT sim.queue('W', 'w-1', '[{"ins": {"id": "t1", "list_id": "l1", "title": "milk"}}]');
SELECT * FROM sim.sync('W');
SELECT sim.subscribe('A1', 's', '{"list_id": ["l1"]}'), sim.subscribe('A2', 's', '{"list_id": ["l1"]}'),
       sim.subscribe('B', 's', '{"list_id": ["l1"]}'), sim.subscribe('Z', 's', '{"list_id": ["l1", "l3"]}');
SELECT count(*) FROM (SELECT sim.sync(n) FROM unnest(ARRAY['A1', 'A2', 'B', 'Z', 'A1', 'A2', 'B', 'Z']) n) s;
SELECT gw.connect(1, 'A1') UNION ALL SELECT gw.connect(2, 'A2') UNION ALL SELECT gw.connect(3, 'B')
UNION ALL SELECT gw.connect(4, 'Z');
SELECT conn, registration -> 'subscriptions' -> 0 -> 'effective' AS effective FROM gw.sockets ORDER BY conn;

CREATE FUNCTION pg_temp.fan(p_seq bigint) RETURNS TABLE (conn bigint, action text, reason text,
                                                         next_cursor bigint, same_body_as_1 boolean)
LANGUAGE sql AS $$
  SELECT f.conn, f.action, f.reason, f.next_cursor,
         md5(f.body) = first_value(md5(f.body)) OVER (ORDER BY f.conn)
    FROM syncular.realtime_fanout('p1', p_seq,
           (SELECT jsonb_agg(jsonb_build_object('conn', s.conn, 'cursor', s.cursor,
                                                'registration', s.registration) ORDER BY s.conn)
              FROM gw.sockets s)) f
$$;

-- commit 2: every socket gets the same delta
SELECT sim.queue('W', 'w-2', '[{"row": {"id": "t1", "title": "oat milk"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM pg_temp.fan(2);
SELECT * FROM gw.fanout(2, ARRAY[1]::bigint[]);
UPDATE gw.sockets SET cursor = 2;

-- u2 loses l1, u1 gains l3.  Socket 1 is answered first; then
--   2 (equal to 1 in everything): the same delta;
--   3 (B: the same registration, another live grant): woken, never handed socket 1's delta;
--   4 (Z: the same grant content and effective scopes as 1, other requested scopes, whose live
--      effective scopes are now l1 and l3): woken as well.
-- Socket 2 one commit behind instead: its own delta, bridging both commits.
DELETE FROM public.grants WHERE actor = 'u2' AND val = 'l1';
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l3');
SELECT sim.queue('W', 'w-3', '[{"row": {"id": "t1", "title": "soy milk"}}]');
SELECT * FROM sim.sync('W');
SELECT * FROM pg_temp.fan(3);
UPDATE gw.sockets SET cursor = 1 WHERE conn = 2;
SELECT * FROM pg_temp.fan(3) WHERE conn IN (1, 2);
SELECT * FROM gw.fanout(3, ARRAY[2]::bigint[]);
DELETE FROM public.grants WHERE actor = 'u1' AND val = 'l3';
INSERT INTO public.grants VALUES ('u2', 'list_id', 'l1');

\i sql/scenario_done.psql
