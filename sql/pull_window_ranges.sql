-- pull_window_ranges: an incremental window longer than the first range of commit_seq the
-- window scans read (push-and-pull.md §3.6; pull_window.c next_range: 16, then 32, 64, ...):
-- sparse matches (S, S2) among 200 commits, windows starting anywhere, limits that stop inside a
-- range or at its edge; each answer is compared with the window computed here in plain SQL.
\i sql/pull_fixture.psql

-- the log: commit g (1..200) writes row r<g> in list S at the seqs below, in L2 otherwise;
-- commits 40 and 41 also write a second row in S2 (two scan values merged), 17 a note
SELECT count(*) AS commits FROM pg_temp.push((
  SELECT jsonb_agg(jsonb_build_object('clientCommitId', 'k' || g, 'operations',
           jsonb_build_array(jsonb_build_object('table', 'todos', 'row', jsonb_build_object(
             'id', 'r' || g, 'list_id',
             CASE WHEN g IN (3, 16, 17, 18, 33, 40, 41, 48, 49, 90, 112, 113, 150, 199) THEN 'S' ELSE 'L2' END,
             'title', null)))
           || CASE WHEN g IN (40, 41, 112) THEN jsonb_build_array(jsonb_build_object('table', 'todos',
                'row', jsonb_build_object('id', 'q' || g, 'list_id', 'S2', 'title', null))) ELSE '[]' END
           || CASE WHEN g = 17 THEN jsonb_build_array(jsonb_build_object('table', 'notes',
                'row', jsonb_build_object('id', 'n17', 'list_id', 'S', 'owner_id', 'u1', 'body', null))) ELSE '[]' END)
         ORDER BY g)
    FROM generate_series(1, 200) g));

-- the window in plain SQL: the commits after `c` with changes of todos in one of `lists`, the
-- first always, then while the delivered changes stay within `lim`; nextCursor = 200 when the
-- look-ahead (lim + 1 changes) was not reached and every read commit was delivered
CREATE FUNCTION pg_temp.expected(c bigint, lists text[], lim int) RETURNS text LANGUAGE sql AS $$
  WITH m AS (SELECT commit_seq, count(*) AS n FROM syncular.changes
              WHERE partition = 'p1' AND tbl = 'todos' AND commit_seq > c
                AND scopes->>'list_id' = ANY (lists) GROUP BY commit_seq),
       r AS (SELECT commit_seq, n, sum(n) OVER (ORDER BY commit_seq) AS upto,
                    row_number() OVER (ORDER BY commit_seq) AS k FROM m),
       d AS (SELECT * FROM r WHERE k = 1 OR upto <= lim)
  SELECT coalesce(string_agg(commit_seq::text, ' ' ORDER BY commit_seq), '') || ' next=' ||
         CASE WHEN (SELECT coalesce(sum(n), 0) FROM m) <= lim THEN 200
              ELSE (SELECT max(commit_seq) FROM d) END
    FROM d
$$;
-- the same from one round: delivered commit seqs and nextCursor
CREATE FUNCTION pg_temp.got(c bigint, lists text[], lim int) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(substring(l FROM '^  COMMIT (\d+)'), ' ') FILTER (WHERE l LIKE '  COMMIT%'), '')
         || ' ' || max(substring(l FROM '^SUB_END (next=\d+)'))
    FROM pg_temp.round('admin', jsonb_build_array(jsonb_build_object('id', 's', 'table', 'todos',
           'scopes', jsonb_build_object('list_id', to_jsonb(lists)), 'cursor', c)),
           jsonb_build_object('commits', lim)) l
$$;

-- a few answers in full
SELECT pg_temp.got(0, '{S}', 1000) AS all_of_s, pg_temp.got(0, '{S}', 5) AS five,
       pg_temp.got(18, '{S,S2}', 3) AS two_values, pg_temp.got(150, '{S}', 1) AS last_two;
SELECT * FROM pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["S2", "S"]}, "cursor": 39}]', '{"commits": 4}');
-- every cursor 0..200 (step 3) x lists x limits against plain SQL: no line differs
SELECT c, lists, lim, pg_temp.got(c, lists, lim) AS got, pg_temp.expected(c, lists, lim) AS expected
  FROM generate_series(0, 200, 3) c, (VALUES ('{S}'::text[]), ('{S2}'), ('{S,S2}'), ('{L2}')) v(lists),
       unnest(ARRAY[1, 2, 4, 15, 40, 1000]) lim
 WHERE pg_temp.got(c, lists, lim) IS DISTINCT FROM pg_temp.expected(c, lists, lim);
SELECT count(*) AS compared FROM generate_series(0, 200, 3) c, generate_series(1, 4) v,
       unnest(ARRAY[1, 2, 4, 15, 40, 1000]) lim;

ROLLBACK;
