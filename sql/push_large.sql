-- push_large: rounds whose response outgrows the first memory blocks — a 500-operation commit
-- (exactly the default cap; 501 is refused), 300 commits in one request, and incremental and
-- bootstrap pulls returning all of them.  Regression for the response buffer once allocated in
-- SPI's procedure context (freed by SPI_finish before the response was copied out).
\set testdb syncular_t_push_large
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
-- counts(response): frames by type, push results by status, changes and segment rows
CREATE FUNCTION pg_temp.counts(resp bytea) RETURNS text LANGUAGE sql AS $$
  SELECT format('bytes=%s frames=%s results=%s changes=%s segment_rows=%s next=%s',
    octet_length(resp),
    (SELECT string_agg(t || ':' || n, ',' ORDER BY t) FROM (SELECT f ->> 'type' t, count(*) n
       FROM jsonb_array_elements(d -> 'frames') f GROUP BY 1) x),
    (SELECT string_agg(s || ':' || n, ',' ORDER BY s) FROM (SELECT f ->> 'status' s, count(*) n
       FROM jsonb_array_elements(d -> 'frames') f WHERE f ->> 'type' = 'PUSH_RESULT' GROUP BY 1) y),
    (SELECT coalesce(sum(jsonb_array_length(f -> 'changes')), 0)
       FROM jsonb_array_elements(d -> 'frames') f WHERE f ->> 'type' = 'COMMIT'),
    (SELECT coalesce(sum(jsonb_array_length(b)), 0)
       FROM jsonb_array_elements(d -> 'frames') f,
            jsonb_array_elements(syncular.debug_render(decode(f ->> 'payload', 'base64')) -> 'blocks') b
      WHERE f ->> 'type' = 'SEGMENT_INLINE'),
    (SELECT string_agg(f ->> 'nextCursor', ',') FROM jsonb_array_elements(d -> 'frames') f WHERE f ->> 'type' = 'SUB_END'))
  FROM (SELECT syncular.debug_render(resp) d) z
$$;

-- one commit of 500 inserts
SELECT pg_temp.counts(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('big', VARIADIC
  (SELECT array_agg(pg_temp.up('todos', jsonb_build_object('id', 'b' || lpad(i::text, 3, '0'), 'list_id', 'l1',
     'title', 'big ' || i, 'done', null, 'n', i, 'meta', jsonb_build_object('i', i), 'doc', null, 'att', null)))
     FROM generate_series(1, 500) i)))), 'p1', 'u1'));
-- 500 versioned updates of the same rows, then the same request again (cached)
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('big-2', VARIADIC
  (SELECT array_agg(pg_temp.up('todos', jsonb_build_object('id', 'b' || lpad(i::text, 3, '0'), 'n', i + 1), 1))
     FROM generate_series(1, 500) i)))) AS big2 \gset
SELECT pg_temp.counts(syncular.handle(:'big2'::bytea, 'p1', 'u1'));
SELECT pg_temp.counts(syncular.handle(:'big2'::bytea, 'p1', 'u1'));
SELECT count(*) AS rows, sum(n) AS sum_n, min(_sync_server_version) AS min_v, max(_sync_server_version) AS max_v FROM public.todos;
-- 501 operations: over the cap
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')', pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('over', VARIADIC (SELECT array_agg(pg_temp.del('todos', 'x' || i)) FROM generate_series(1, 501) i))))));

-- 300 one-op commits in one request
SELECT pg_temp.counts(syncular.handle(pg_temp.req('p1', 'A', (SELECT jsonb_agg(pg_temp.pc('c' || i,
  pg_temp.up('todos', jsonb_build_object('id', 'b' || lpad(i::text, 3, '0'), 'title', 'commit ' || i))) ORDER BY i)
  FROM generate_series(1, 300) i)), 'p1', 'u1'));
SELECT max_commit_seq FROM syncular.partitions;
-- an incremental pull of every commit (limitCommits counts changes: 1000 here), then the rest
SELECT pg_temp.counts(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  '{"type": "PULL_HEADER", "limitCommits": 1000, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}'::jsonb,
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 0))), 'p1', 'u1'));
SELECT pg_temp.counts(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  '{"type": "PULL_HEADER", "limitCommits": 1000, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}'::jsonb,
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 2))), 'p1', 'u1'));
-- a bootstrap of the 500 rows in pages of 100 (4 pages per round by default)
SELECT pg_temp.counts(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 100, "maxSnapshotPages": 0, "accept": 1}'::jsonb,
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}'))), 'p1', 'u1'));
-- the same through the procedure form and handle_http
SELECT pg_temp.req('p1', 'A', jsonb_build_array(
  '{"type": "PULL_HEADER", "limitCommits": 1000, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}'::jsonb,
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 2))) AS pull_req \gset
CALL syncular.sync(:'pull_req'::bytea, 'p1', 'u1', NULL) \gset
SELECT pg_temp.counts(:'response'::bytea);
SELECT status, content_type, pg_temp.counts(body) FROM syncular.handle_http(:'pull_req'::bytea, 'p1', 'u1');

\i sql/push_done.psql
