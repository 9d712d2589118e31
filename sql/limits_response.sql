-- limits_response: the response budget syncular.max_response_bytes (README "Security", limits;
-- the rule is in src/pull.c, "Budget").  Row data stops at the budget: a bootstrap at a page
-- boundary with its resume token, an incremental section at its last delivered commit; later
-- sections carry no data (an empty first page and the token, or nextCursor = cursor); the
-- round's first item always goes, so a single row larger than the budget is still delivered.
-- The client continues round after round and converges.  Also the reproduction of a small
-- request with 7 maximal subscriptions, whose response is now bounded.
\set testdb syncular_t_limits_response
\i sql/scenario_helpers.psql

-- incompressible text of n bytes
CREATE FUNCTION pg_temp.noise(n int, seed text DEFAULT 'x') RETURNS text LANGUAGE sql AS $$
  SELECT left(string_agg(md5(seed || i), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
-- one sim.sync round, summarised: pages as page(<rows>), commits counted per section
CREATE FUNCTION pg_temp.summary(p_name text, p_limits jsonb DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; out text := ''; commits int := 0;
BEGIN
  FOR l IN SELECT * FROM sim.sync(p_name, p_limits) LOOP
    l := regexp_replace(l, '^\S+: ', '');
    IF l LIKE '  commit %' THEN
      commits := commits + 1;
      CONTINUE;
    END IF;
    IF commits > 0 THEN
      out := out || format(' commits(%s)', commits);
      commits := 0;
    END IF;
    IF l LIKE '  page:%' THEN
      out := out || format(' page(%s)', length(l) - length(replace(l, '@', '')));
    ELSIF l LIKE 'sub %' THEN
      out := out || ' ' || split_part(l, ' ', 2) || ':' || split_part(l, ' ', 4);
    ELSIF l LIKE 'end %' THEN
      out := out || ' ' || regexp_replace(l, '^end \S+ ', '') || ';';
    ELSE
      out := out || ' ' || l || ';';
    END IF;
  END LOOP;
  RETURN ltrim(out);
END
$$;
-- rounds until no subscription holds a token and a round delivers nothing new
CREATE FUNCTION pg_temp.until_done(p_name text, p_limits jsonb DEFAULT '{}', p_max int DEFAULT 20)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE s text; i int := 0;
BEGIN
  LOOP
    i := i + 1;
    s := pg_temp.summary(p_name, p_limits);
    RETURN NEXT format('round %s: %s', i, s);
    EXIT WHEN i >= p_max OR (s NOT LIKE '%token=%' AND s NOT LIKE '%commits(%' AND s NOT LIKE '%page(%');
  END LOOP;
END
$$;

-- Z (admin) writes 240 rows of ~1 kB in l1 (120 commits of two) and 40 in l2 (one commit)
SELECT sim.client('Z', 'admin');
SELECT count(*) FROM sim.sync('Z');
SELECT count(*) FROM (SELECT sim.queue('Z', 'z-' || c, jsonb_build_array(
    jsonb_build_object('ins', jsonb_build_object('id', 'r' || lpad((2 * c - 1)::text, 3, '0'), 'list_id', 'l1',
                                                 'meta', jsonb_build_object('k', pg_temp.noise(900, c || 'a')))),
    jsonb_build_object('ins', jsonb_build_object('id', 'r' || lpad((2 * c)::text, 3, '0'), 'list_id', 'l1',
                                                 'meta', jsonb_build_object('k', pg_temp.noise(900, c || 'b'))))))
  FROM generate_series(1, 120) c) x;
SELECT sim.queue('Z', 'z-l2', (SELECT jsonb_agg(jsonb_build_object('ins', jsonb_build_object('id', 'q' || lpad(i::text, 2, '0'),
    'list_id', 'l2', 'meta', jsonb_build_object('k', pg_temp.noise(900, i || 'q')))) ORDER BY i) FROM generate_series(1, 40) i));
SELECT count(*) FILTER (WHERE l LIKE '%applied%') AS applied FROM sim.sync('Z') l;

SET syncular.max_response_bytes = '64kB';

-- 1. bootstrap of l1 and l2 with maximal limits: s1 stops at the budget with its token; s2
--    gets one empty page and a token at the table start until s1 is done; then s2 bootstraps
SELECT sim.client('B', 'u1'), sim.subscribe('B', 's1', '{"list_id": ["l1"]}'),
       sim.subscribe('B', 's2', '{"list_id": ["l2"]}');
SELECT count(*) FROM sim.sync('B');
SELECT * FROM pg_temp.until_done('B', '{"rows": 50000, "pages": 50}');
SELECT sim.converged('B');

-- 2. incremental: 100 one-row commits of ~1 kB in l1; s1 stops at its last delivered commit
--    (s2, after the budget, keeps its cursor), then catches up next round
SELECT count(*) FROM (SELECT sim.queue('Z', 'z-inc-' || c, jsonb_build_array(jsonb_build_object('row',
    jsonb_build_object('id', 'r' || lpad(c::text, 3, '0'), 'meta', jsonb_build_object('k', pg_temp.noise(900, c || 'i'))))))
  FROM generate_series(1, 100) c) x;
SELECT count(*) FILTER (WHERE l LIKE '%applied%') AS applied FROM sim.sync('Z') l;
SELECT * FROM pg_temp.until_done('B', '{"commits": 1000}');
SELECT sim.converged('B');

-- 3. one row larger than the whole budget (~100 kB) still goes: the round's first item
SELECT sim.queue('Z', 'z-huge', jsonb_build_array(jsonb_build_object('ins', jsonb_build_object('id', 'q99',
    'list_id', 'l2', 'meta', jsonb_build_object('k', pg_temp.noise(100000, 'huge'))))));
SELECT count(*) FILTER (WHERE l LIKE '%applied%') AS applied FROM sim.sync('Z') l;
SELECT * FROM pg_temp.until_done('B');
SELECT sim.converged('B');
-- and in a fresh bootstrap of l2 alone
SELECT sim.client('C', 'u1'), sim.subscribe('C', 's2', '{"list_id": ["l2"]}');
SELECT count(*) FROM sim.sync('C');
SELECT * FROM pg_temp.until_done('C', '{"rows": 50000, "pages": 50}');
SELECT sim.converged('C');

-- 4. the reproduction: a small request with 7 maximal subscriptions (limitSnapshotRows 50000,
--    maxSnapshotPages 50) of 240 rows each.  The response holds one budget of rows, not 7 x 240.
SELECT pg_temp.req('p1', 'D', jsonb_build_array(
  '{"type": "PULL_HEADER", "limitCommits": 1000, "limitSnapshotRows": 50000, "maxSnapshotPages": 50, "accept": 1}'::jsonb)
  || (SELECT jsonb_agg(pg_temp.sub('s' || i, 'todos', '{"list_id": ["l1"]}') ORDER BY i) FROM generate_series(1, 7) i)) AS seven \gset
SELECT octet_length(:'seven'::bytea) < 600 AS small_request;
SELECT octet_length(resp) <= 65536 + 7 * 512 AS within_budget,
       (SELECT string_agg(format('%s:%s', s ->> 'id', coalesce(rows, 0)), ' ' ORDER BY ord)
          FROM (SELECT f, ord FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames') WITH ORDINALITY x(f, ord)) y
          CROSS JOIN LATERAL (SELECT f AS s) z
          LEFT JOIN LATERAL (SELECT sum(jsonb_array_length(b)) AS rows
                               FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames') WITH ORDINALITY g(h, o),
                                    jsonb_array_elements(syncular.debug_render(decode(h ->> 'payload', 'base64')) -> 'blocks') b
                              WHERE h ->> 'type' = 'SEGMENT_INLINE' AND o > ord
                                AND o < (SELECT min(o2) FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames')
                                                             WITH ORDINALITY k(e, o2)
                                          WHERE e ->> 'type' = 'SUB_END' AND o2 > ord)) r ON true
         WHERE f ->> 'type' = 'SUB_START') AS rows_per_section,
       (SELECT count(*) FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames') f
         WHERE f ->> 'type' = 'SUB_END' AND f ? 'bootstrapState') AS tokens
  FROM (SELECT syncular.handle(:'seven'::bytea, 'p1', 'u1') AS resp) q;
-- with the default budget (16 MB) the same request is answered whole: 7 x 240 rows
RESET syncular.max_response_bytes;
SELECT (SELECT count(*) FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames') f
         WHERE f ->> 'type' = 'SUB_END' AND f ? 'bootstrapState') AS tokens
  FROM (SELECT syncular.handle(:'seven'::bytea, 'p1', 'u1') AS resp) q;

\i sql/scenario_done.psql
