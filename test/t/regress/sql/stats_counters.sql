-- stats_counters: every counter of syncular.stats / syncular.stats_tables moves by exactly the
-- expected amount for scripted rounds.  Needs shared_preload_libraries = 'syncular': run by
-- the TAP test test/t/010_counters.pl in a cluster of its own (the main suite's cluster does not preload; its
-- stats_not_preloaded test covers that answer).
\set testdb syncular_t_stats
\i sql/push_helpers.psql

-- flat(): this database's figures as (counter, value); codes and tables as prefixed counters,
-- the histograms as their observation counts
CREATE FUNCTION pg_temp.flat() RETURNS TABLE(k text, v numeric) LANGUAGE sql AS $$
  WITH s AS (SELECT * FROM syncular.stats WHERE datname = current_database())
  SELECT e.key, e.value::numeric
    FROM s, jsonb_each_text(to_jsonb(s) - '{preloaded,dbid,datname,rounds_refused_by_code,push_rejected_by_code,time_buckets_ms,push_time_buckets,pull_time_buckets,push_time_sum_ms,pull_time_sum_ms,stats_reset}'::text[]) e
  UNION ALL SELECT 'refused ' || c.key, c.value::text::numeric FROM s, jsonb_each(s.rounds_refused_by_code) c
  UNION ALL SELECT 'rejected ' || c.key, c.value::text::numeric FROM s, jsonb_each(s.push_rejected_by_code) c
  UNION ALL SELECT 'push_time_count', (SELECT sum(x) FROM unnest(s.push_time_buckets) x) FROM s
  UNION ALL SELECT 'pull_time_count', (SELECT sum(x) FROM unnest(s.pull_time_buckets) x) FROM s
  UNION ALL SELECT t.table_name || '.' || e.key, e.value::numeric
    FROM syncular.stats_tables t, jsonb_each_text(to_jsonb(t) - '{dbid,datname,table_name}'::text[]) e
   WHERE t.datname = current_database()
$$;
CREATE TEMP TABLE prev (k text PRIMARY KEY, v numeric);
-- the bytes of every response handed out by r() / http() since the last moved()
CREATE TEMP TABLE sent (n bigint);
-- moved(): the counters that changed since the last call, with their change; response_bytes is
-- compared with the bytes the rounds returned
CREATE FUNCTION pg_temp.moved() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  sent_bytes numeric := (SELECT coalesce(sum(n), 0) FROM sent);
BEGIN
  FOR r IN SELECT f.k, f.v - coalesce(p.v, 0) AS d FROM pg_temp.flat() f LEFT JOIN prev p USING (k)
            WHERE f.v IS DISTINCT FROM coalesce(p.v, 0) ORDER BY f.k LOOP
    IF r.k = 'response_bytes' THEN
      RETURN NEXT 'response_bytes ' || CASE WHEN r.d = sent_bytes THEN '= the bytes returned'
                                            ELSE format('+%s, but %s returned', r.d, sent_bytes) END;
    ELSE
      RETURN NEXT r.k || ' +' || r.d;
    END IF;
  END LOOP;
  DELETE FROM prev;
  INSERT INTO prev SELECT * FROM pg_temp.flat();
  DELETE FROM sent;
END
$$;
-- r(partition, actor, client, frames): one round through handle(), its response shown
CREATE FUNCTION pg_temp.r(part text, actor text, client text, frames jsonb, epoch text DEFAULT '=')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE resp bytea := syncular.handle(pg_temp.req(part, client, frames, 3, epoch), part, actor);
BEGIN
  INSERT INTO sent VALUES (octet_length(resp));
  RETURN QUERY SELECT pg_temp.show(part, resp);
END
$$;

SELECT syncular.stats_reset();
SELECT preloaded, rounds, stats_reset > now() - interval '1 hour' AS reset_recorded,
       time_buckets_ms, push_time_buckets, pull_time_buckets
  FROM syncular.stats WHERE datname = current_database();
SELECT count(*) AS table_rows FROM syncular.stats_tables WHERE datname = current_database();
SELECT * FROM pg_temp.moved();

-- epoch acquisitions: three rounds, no push or pull phase
SELECT * FROM pg_temp.r('p1', 'u1', 'A', '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]', NULL);
SELECT * FROM pg_temp.r('p1', 'u2', 'B', '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]', NULL);
SELECT * FROM pg_temp.r('p1', 'u1', 'C', '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]', NULL);
SELECT * FROM pg_temp.moved();

-- A pushes one commit of two upserts and bootstraps list l1 (both rows in one page)
SELECT * FROM pg_temp.r('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1, "meta": null, "doc": null, "att": null}'),
                    pg_temp.up('todos', '{"id": "t2", "list_id": "l1", "title": "eggs", "done": false, "n": 2, "meta": null, "doc": null, "att": null}')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}')));
SELECT * FROM pg_temp.moved();

-- B pushes an update and a delete of todos (one commit, two operations) and a counters row (a
-- second commit), and pulls both tables incrementally from cursor 1: its own commits come back
SELECT * FROM pg_temp.r('p1', 'u2', 'B', jsonb_build_array(
  pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t1", "done": true}', 1), pg_temp.del('todos', 't2')),
  pg_temp.pc('b-2', pg_temp.up('counters', '{"id": 1, "list_id": "l1", "score": 1.5, "raw": null}')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 1),
  pg_temp.sub('s-c1', 'counters', '{"list_id": ["l1"]}', 1)));
SELECT * FROM pg_temp.moved();

-- the same commits again (ack loss): cached, nothing applied
SELECT * FROM pg_temp.r('p1', 'u2', 'B', jsonb_build_array(
  pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t1", "done": true}', 1), pg_temp.del('todos', 't2')),
  pg_temp.pc('b-2', pg_temp.up('counters', '{"id": 1, "list_id": "l1", "score": 1.5, "raw": null}'))));
SELECT * FROM pg_temp.moved();

-- rejections: a stale baseVersion on a column changed since (conflict), an insert without its
-- scope column (forbidden), an insert that lacks columns (row_missing), next to an applied commit;
-- the conflict replayed is rejected again (counted again: the client is answered "rejected")
SELECT * FROM pg_temp.r('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t1", "done": false}', 1)),
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t9", "title": "no list"}')),
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t9", "list_id": "l1", "title": "no done"}')),
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t1", "title": "oat milk"}', 1))));
SELECT * FROM pg_temp.moved();
SELECT * FROM pg_temp.r('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t1", "done": false}', 1))));
SELECT * FROM pg_temp.moved();

-- sections: revoked (u3 may not see l1), reset (a cursor behind the horizon), bootstrap of an
-- empty list (no rows), incremental with nothing new
UPDATE syncular.sync_partitions SET horizon_seq = 2 WHERE partition = 'p1';
SELECT * FROM pg_temp.r('p1', 'u3', 'D', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1)));
SELECT * FROM pg_temp.r('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 1),
  pg_temp.sub('s-l2', 'todos', '{"list_id": ["l2"]}', -1),
  pg_temp.sub('s-c1', 'counters', '{"list_id": ["l1"]}', 3)));
SELECT * FROM pg_temp.moved();

-- refused rounds count once, under their catalogue code, and nothing else moves (the error is
-- caught here: the counters stay, they are never rolled back)
SELECT pg_temp.try($$SELECT syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('x-1', pg_temp.up('todos', '{"id": "t1", "n": 5}'))), 3, NULL), 'p1', 'u1')$$);
SELECT pg_temp.try($$SELECT syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'nope', '{"list_id": ["l1"]}'))), 'p1', 'u1')$$);
SET syncular.max_operations_per_request = 1;
SELECT pg_temp.try($$SELECT syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.pc('x-2', pg_temp.up('todos', '{"id": "t1", "n": 5}'), pg_temp.up('todos', '{"id": "t1", "n": 6}')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 3))), 'p1', 'u1')$$);
RESET syncular.max_operations_per_request;
SELECT * FROM pg_temp.moved();

-- handle_http: a refusal answered as JSON (400) and a served round, each counted once
SELECT status, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code
  FROM syncular.handle_http(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'nope', '{"list_id": ["l1"]}'))),
                            'p1', 'u1', 'application/vnd.syncular.sync.v2');
WITH h AS (SELECT * FROM syncular.handle_http(pg_temp.req('p1', 'A', jsonb_build_array(
             pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 3))), 'p1', 'u1', 'application/vnd.syncular.sync.v2'))
INSERT INTO sent SELECT octet_length(body) FROM h RETURNING (SELECT status FROM h);
SELECT * FROM pg_temp.moved();

-- the procedure form outside a transaction block (it commits after the push)
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-6', pg_temp.up('todos', '{"id": "t1", "n": 4}', 2)))) AS proc_req \gset
CALL syncular.sync(:'proc_req'::bytea, 'p1', 'u1', NULL) \gset
INSERT INTO sent VALUES (octet_length(:'response'::bytea));
SELECT * FROM pg_temp.show('p1', :'response'::bytea);
SELECT * FROM pg_temp.moved();

-- histograms: every observation in one bucket, the sums are times; buckets of the push phase
-- observed = rounds that carried commits
SELECT array_length(push_time_buckets, 1) = array_length(time_buckets_ms, 1) AS same_length,
       push_time_sum_ms >= 0 AND pull_time_sum_ms >= 0 AS sums_ok,
       (SELECT sum(x) FROM unnest(push_time_buckets) x) AS push_rounds,
       (SELECT sum(x) FROM unnest(pull_time_buckets) x) AS pull_rounds
  FROM syncular.stats WHERE datname = current_database();

-- privileges: pg_read_all_stats reads; a role without it is refused (EXECUTE, or the C check
-- when EXECUTE was granted anyway); only the owner resets
SET client_min_messages = warning;
DROP ROLE IF EXISTS stats_reader;
DROP ROLE IF EXISTS stats_nobody;
RESET client_min_messages;
CREATE ROLE stats_reader IN ROLE pg_read_all_stats;
CREATE ROLE stats_nobody;
GRANT SELECT ON syncular.stats TO stats_nobody;
GRANT EXECUTE ON FUNCTION syncular._stats() TO stats_nobody;
SET ROLE stats_reader;
SELECT rounds > 0 AS reader_sees FROM syncular.stats WHERE datname = current_database();
SELECT pg_temp.try('SELECT syncular.stats_reset()::text');
SET ROLE stats_nobody;
SELECT pg_temp.try('SELECT count(*)::text FROM syncular.stats');
SELECT pg_temp.try('SELECT count(*)::text FROM syncular.stats_tables');
RESET ROLE;
REVOKE ALL ON syncular.stats FROM stats_nobody;
REVOKE ALL ON FUNCTION syncular._stats() FROM stats_nobody;
DROP ROLE stats_reader;
DROP ROLE stats_nobody;

-- reset: every figure back to zero, the tables forgotten
SELECT syncular.stats_reset();
SELECT rounds, rounds_refused_by_code, push_rejected_by_code, push_time_buckets
  FROM syncular.stats WHERE datname = current_database();
SELECT count(*) AS table_rows FROM syncular.stats_tables WHERE datname = current_database();

\i sql/push_done.psql
