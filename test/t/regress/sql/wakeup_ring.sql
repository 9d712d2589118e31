-- wakeup_ring: the commit wake-up ring (src/wakeup.c; docs/realtime.md "Commit wake-ups").  Needs
-- shared_preload_libraries = 'syncular': run by test/t/020_wakeup_ring.pl in a cluster of its own.
-- Single-session checks with timeout 0 (the blocking, timing and cancel checks are in the .pl):
-- a commit is seen only once its transaction commits, never after a rollback (of the
-- transaction, a savepoint, or a commit rejected inside its push subtransaction), other
-- databases' wake-ups are not returned, and an overwritten ring answers "lost".
\set testdb syncular_t_wakeup
\i sql/push_helpers.psql
RESET client_min_messages;

-- poll(): the wake-ups after the position kept in public.wpos (one line each, the final row as
-- its kind), then wpos moves to the final row's position
CREATE TABLE public.wpos (p bigint);
INSERT INTO public.wpos SELECT position FROM syncular.wait_commits(NULL, 0);
CREATE FUNCTION public.poll() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM syncular.wait_commits((SELECT p FROM public.wpos), 0) LOOP
    IF r.kind = 'commit' THEN
      RETURN NEXT format('commit %s %s', r.partition, r.commit_seq);
    ELSE
      RETURN NEXT r.kind;
      UPDATE public.wpos SET p = r.position;
    END IF;
  END LOOP;
END $$;
CREATE FUNCTION pg_temp.item(id text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT pg_temp.up('todos', jsonb_build_object('id', id, 'list_id', 'l1', 'title', id, 'done', false,
                                                'n', 1, 'meta', null, 'doc', null, 'att', null))
$$;
CREATE FUNCTION pg_temp.push(part text, id text) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(l, ' ') FROM pg_temp.round(part, 'u1', 'A', jsonb_build_array(pg_temp.pc(id, pg_temp.item(id)))) l
   WHERE l LIKE 'PUSH_RESULT%'
$$;

SHOW syncular.commit_wakeup;
SELECT syncular.commit_wakeup_mode();
SELECT count(*) AS frames FROM pg_temp.acquire('p1', 'u1', 'A');
SELECT count(*) AS frames FROM pg_temp.acquire('p2', 'u1', 'A');
SELECT * FROM public.poll();

-- a committed push
SELECT pg_temp.push('p1', 'a1');
SELECT * FROM public.poll();
-- two commits of one request collapse into the last; another partition keeps its own row
SELECT count(*) AS frames FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a2', pg_temp.item('a2')), pg_temp.pc('a3', pg_temp.item('a3'))));
SELECT pg_temp.push('p2', 'b1');
SELECT * FROM public.poll();

-- inside an open transaction: nothing until COMMIT
BEGIN;
SELECT pg_temp.push('p1', 'a4');
SELECT * FROM public.poll();
COMMIT;
SELECT * FROM public.poll();

-- rolled back: never
BEGIN;
SELECT pg_temp.push('p1', 'a5');
ROLLBACK;
SELECT * FROM public.poll();

-- a commit rejected inside its push subtransaction (unique title) wakes nobody
SELECT l FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a6',
  pg_temp.up('todos', '{"id": "a6", "list_id": "l1", "title": "a1", "done": false, "n": 1, "meta": null, "doc": null, "att": null}')))) l
 WHERE l LIKE 'PUSH_RESULT%';
SELECT * FROM public.poll();

-- savepoints: a rolled-back one drops its wake-ups (nested ones too), a released one keeps them
BEGIN;
SAVEPOINT s1;
SELECT pg_temp.push('p1', 'a7');
SAVEPOINT s2;
SELECT pg_temp.push('p2', 'b2');
RELEASE s2;
ROLLBACK TO s1;
SAVEPOINT s3;
SELECT pg_temp.push('p2', 'b3');
RELEASE s3;
COMMIT;
SELECT * FROM public.poll();

-- the mode: notify records nothing in the ring, both and ring do
SET syncular.commit_wakeup = notify;
SELECT syncular.commit_wakeup_mode();
SELECT pg_temp.push('p1', 'a8');
SELECT * FROM public.poll();
SET syncular.commit_wakeup = 'both';
SELECT syncular.commit_wakeup_mode();
SELECT pg_temp.push('p1', 'a9');
SELECT * FROM public.poll();
RESET syncular.commit_wakeup;

-- PREPARE TRANSACTION after a ring wake-up is refused (as PostgreSQL refuses it after NOTIFY)
BEGIN;
SELECT pg_temp.push('p1', 'a10');
PREPARE TRANSACTION 'wk';
SELECT * FROM public.poll();

-- arguments
SELECT kind, position IS NOT NULL AS has_position, partition FROM syncular.wait_commits(NULL, 0);
SELECT kind FROM syncular.wait_commits(0, 0);
SELECT kind FROM syncular.wait_commits(-5, 0);
SELECT kind FROM syncular.wait_commits(9223372036854775807, 0);
SELECT * FROM syncular.wait_commits(NULL, -1);
SELECT * FROM syncular.wait_commits(NULL, NULL);
-- statement_timeout ends the sleep
SET statement_timeout = '300ms';
SELECT * FROM syncular.wait_commits((SELECT position FROM syncular.wait_commits(NULL, 0)), 60000);
RESET statement_timeout;

-- partitions (at most 256 bytes) are kept whole; 2100 wake-ups of 256-byte names overflow the
-- 512 kB of names: a reader behind the tail is told "lost", one at the head is not
SELECT count(*) AS frames FROM pg_temp.acquire(repeat('L', 255) || 'a', 'u1', 'A');
SELECT count(*) AS frames FROM pg_temp.acquire(repeat('L', 255) || 'b', 'u1', 'A');
SELECT pg_temp.push(repeat('L', 255) || 'a', 'l1');
SELECT kind, length(partition) AS len, right(partition, 2) AS tail, commit_seq
  FROM syncular.wait_commits((SELECT p FROM public.wpos), 0);
SELECT position AS before_overflow FROM syncular.wait_commits(NULL, 0) \gset
DO $$
BEGIN
  FOR i IN 1..1050 LOOP
    PERFORM pg_temp.push(repeat('L', 255) || 'b', 'b' || i);
    PERFORM pg_temp.push(repeat('L', 255) || 'a', 'a' || i);
  END LOOP;
END $$;
SELECT kind, position - :before_overflow AS advanced FROM syncular.wait_commits(:before_overflow, 0);
SELECT kind, count(*) FROM syncular.wait_commits(:before_overflow + 2000, 0) GROUP BY 1 ORDER BY 1;
-- at most 1000 wake-up rows per call, then 'more' at the last one returned
SELECT kind, count(*), max(position) - :before_overflow AS last
  FROM syncular.wait_commits(:before_overflow + 500, 0) GROUP BY 1 ORDER BY 1;
SELECT kind, position - :before_overflow AS advanced, right(partition, 1) AS tail, commit_seq
  FROM syncular.wait_commits(:before_overflow + 2098, 0);

-- another database: its wake-ups are not returned here
SELECT position AS before_other FROM syncular.wait_commits(NULL, 0) \gset
\set first_db :orig_db
\set testdb syncular_t_wakeup_other
\i sql/push_helpers.psql
RESET client_min_messages;
SELECT count(*) AS frames FROM pg_temp.acquire('o1', 'u1', 'A');
SELECT l FROM pg_temp.round('o1', 'u1', 'A', jsonb_build_array(pg_temp.pc('o1',
  pg_temp.up('todos', '{"id": "o1", "list_id": "l1", "title": "o1", "done": false, "n": 1, "meta": null, "doc": null, "att": null}')))) l
 WHERE l LIKE 'PUSH_RESULT%';
SELECT kind, partition, commit_seq, position - :before_other AS advanced FROM syncular.wait_commits(:before_other, 0);
\c syncular_t_wakeup
SELECT kind, partition, commit_seq, position - :before_other AS advanced FROM syncular.wait_commits(:before_other, 0);
\c :first_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_wakeup_other;
DROP DATABASE syncular_t_wakeup;
