-- limits_keys: a key or row over a documented maximum rejects only its commit, durably, before
-- anything is written (README "Security", limits): rowId over 1024 bytes, a scope value over
-- 1024 bytes, the values of a declared index over 1536 bytes together, a row over
-- syncular.max_row_bytes; and a row write that still fails with SQLSTATE 54000 (an index the
-- operator added) is the same durable rejection.  The good commits of the same request apply,
-- and a retry replays the stored rejection unchanged.
\set testdb syncular_t_limits_keys
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'admin', 'A');
-- incompressible text of n bytes (hex of md5 chains)
CREATE FUNCTION pg_temp.noise(n int, seed text DEFAULT 'x') RETURNS text LANGUAGE sql AS $$
  SELECT left(string_agg(md5(seed || i), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
CREATE FUNCTION pg_temp.todo(id text, list text DEFAULT 'l1', title text DEFAULT NULL,
                             meta jsonb DEFAULT NULL) RETURNS jsonb LANGUAGE sql AS $$
  SELECT pg_temp.up('todos', jsonb_build_object('id', id, 'list_id', list, 'title', title, 'done', false,
                                                 'n', 1, 'meta', meta, 'doc', null, 'att', null))
$$;

-- 1. rowId of 2,800 bytes between two good commits (before: a retryable 500 for the whole round)
SELECT pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('good-1', pg_temp.todo('t1')),
  pg_temp.pc('long-id', pg_temp.todo(pg_temp.noise(2800))),
  pg_temp.pc('good-2', pg_temp.todo('t2')))) AS r1 \gset
SELECT pg_temp.show('p1', syncular.handle(:'r1'::bytea, 'p1', 'admin'));
SELECT _sync_row_id FROM public.todos ORDER BY 1;
-- the retry: the good commits are cached, the rejection replays unchanged
SELECT pg_temp.show('p1', syncular.handle(:'r1'::bytea, 'p1', 'admin'));
SELECT client_commit_id, count(*) FROM syncular.push_results GROUP BY 1 ORDER BY 1;
-- exactly at the maximum is accepted
SELECT pg_temp.show('p1', syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('id-1024', pg_temp.todo(pg_temp.noise(1024))))), 'p1', 'admin'));

-- 2. a scope value of 2,800 bytes (the resolver allows '*'): nothing of it is written
SELECT pg_temp.show('p1', syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('long-scope', pg_temp.todo('t3', pg_temp.noise(2800))),
  pg_temp.pc('good-3', pg_temp.todo('t3')))), 'p1', 'admin'));
SELECT count(*) AS scope_entries_over_1024 FROM syncular.sync_row_scopes WHERE octet_length(value) > 1024;

-- 3. a title (declared unique index uniq_title) of 2,800 bytes, on insert and on update
SELECT pg_temp.show('p1', syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('long-title', pg_temp.todo('t4', 'l1', pg_temp.noise(2800))),
  pg_temp.pc('long-title-update', pg_temp.up('todos', jsonb_build_object('id', 't1', 'title', pg_temp.noise(1600)))),
  pg_temp.pc('short-title-update', pg_temp.up('todos', jsonb_build_object('id', 't1', 'title', 'short'))))), 'p1', 'admin'));
SELECT pg_temp.row_state('todos', 'p1', 't1');

-- 4. syncular.max_row_bytes: a row over it (sent or produced by an update) is refused
SET syncular.max_row_bytes = '2kB';
SHOW syncular.max_row_bytes;
SELECT pg_temp.show('p1', syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('big-row', pg_temp.todo('t5', 'l1', NULL, jsonb_build_object('k', pg_temp.noise(3000)))),
  pg_temp.pc('small-row', pg_temp.todo('t5', 'l1', NULL, jsonb_build_object('k', 'v'))))), 'p1', 'admin'));
RESET syncular.max_row_bytes;

-- 5. an index the operator added (not declared): the row write raises 54000, which is a
--    durable rejection of that commit (before: a retryable 500 on every retry)
CREATE INDEX todos_meta_k ON public.todos ((meta ->> 'k'));
SELECT pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('meta-ok', pg_temp.todo('t6', 'l1', NULL, '{"k": "fine"}')),
  pg_temp.pc('meta-huge', pg_temp.todo('t7', 'l1', NULL, jsonb_build_object('k', pg_temp.noise(3000)))),
  pg_temp.pc('meta-after', pg_temp.todo('t8')))) AS r5 \gset
SELECT pg_temp.show('p1', syncular.handle(:'r5'::bytea, 'p1', 'admin'));
SELECT pg_temp.show('p1', syncular.handle(:'r5'::bytea, 'p1', 'admin'));
SELECT status, body IS NOT NULL AS has_body FROM syncular.handle_http(:'r5'::bytea, 'p1', 'admin',
  'application/vnd.syncular.sync.v2');
SELECT _sync_row_id, _sync_server_version FROM public.todos WHERE octet_length(_sync_row_id) < 100 ORDER BY 1;

\i sql/push_done.psql
