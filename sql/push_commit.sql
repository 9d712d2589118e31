-- push_commit: the commit pipeline beyond single-op rules — a rejected commit does not stop the
-- batch, relational constraint violations become durable rejections, CRDT columns without a
-- merger, blob references, the materialized projection (json PostgreSQL cannot hold), integer
-- primary keys, wire version 2 (full rows, no conflictColumns), and the procedure form.
\set testdb syncular_t_push_commit
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
\set r1 '{"id": "t1", "list_id": "l1", "title": "dup", "done": null, "n": null, "meta": null, "doc": null, "att": null}'
\set r2 '{"id": "t2", "list_id": "l1", "title": "dup", "done": null, "n": null, "meta": null, "doc": null, "att": null}'
\set r3 '{"id": "t3", "list_id": "l1", "title": "three", "done": null, "n": null, "meta": null, "doc": null, "att": null}'

-- a rejected commit (forbidden) between two applied ones: the batch continues, seqs stay dense
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', :'r1')),
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "x1", "list_id": "l7", "title": "no", "done": null, "n": null, "meta": null, "doc": null, "att": null}')),
  pg_temp.pc('a-3', pg_temp.up('todos', :'r3'))));

-- a unique index violation (class 23) at op 1: durable sync.constraint_violation at that opIndex,
-- fixed message; op 0 of the same commit rolled back; the next commit still applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t4", "list_id": "l1", "title": "four", "done": null, "n": null, "meta": null, "doc": null, "att": null}'),
                    pg_temp.up('todos', :'r2')),
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t5", "list_id": "l1", "title": "five", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT id FROM public.todos ORDER BY id;
SELECT result - 'recordedAtMs' - 'cacheIdentity' AS stored FROM syncular.push_results WHERE client_commit_id = 'a-4';
-- replay: the same rejection, the writes are not retried (even though they would now succeed)
-- (the two UPDATEs below are ordinary SQL writes: each is a sync commit of its own, 0.4.0)
UPDATE public.todos SET title = 'renamed' WHERE id = 't1';
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t4", "list_id": "l1", "title": "four", "done": null, "n": null, "meta": null, "doc": null, "att": null}'),
                    pg_temp.up('todos', :'r2'))));
SELECT count(*) AS t4_rows FROM public.todos WHERE id = 't4';
UPDATE public.todos SET title = 'dup' WHERE id = 't1';

-- an unreadable stored result replays as the retryable sync.idempotency_cache_miss (not persisted)
UPDATE syncular.sync_commits SET result = '{"status": "applied"}' WHERE client_commit_id = 'a-5';
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-5', pg_temp.del('todos', 't5'))));
SELECT result FROM syncular.push_results WHERE client_commit_id = 'a-5';

-- crdt columns: bytes that are not a Yjs update (yjs-doc, the built-in merger) are refused with
-- sync.crdt_merge_failed; NULL is fine (merges: crdt_*.sql)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-1', pg_temp.up('todos', '{"id": "t3", "doc": "AQID"}')),
  pg_temp.pc('c-2', pg_temp.up('todos', '{"id": "t6", "list_id": "l1", "title": "six", "done": null, "n": null, "meta": null, "doc": "AQID", "att": null}')),
  pg_temp.pc('c-3', pg_temp.up('todos', '{"id": "t3", "doc": null}'))));

-- blob references: sync_blob_refs follows the row's blob_ref columns; the blobs are uploaded
-- first (the push-time existence check, §5.9.6, is the blobs test's)
\set blob_a '{"blobId": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "byteLength": 3}'
\set blob_b '{"blobId": "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "byteLength": 5, "mediaType": "text/plain"}'
SELECT syncular.put_blob('p1', 'u1', :'blob_a'::jsonb ->> 'blobId', 'abc') ->> 'stored' AS a_stored,
       syncular.put_blob('p1', 'u1', :'blob_b'::jsonb ->> 'blobId', 'hello') ->> 'stored' AS b_stored;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('b-1', pg_temp.up('todos', jsonb_build_object('id', 't3', 'att', :'blob_a'::jsonb)))));
SELECT tbl, row_id, blob_id FROM syncular.sync_blob_refs ORDER BY 1, 2, 3;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('b-2', pg_temp.up('todos', jsonb_build_object('id', 't3', 'att', :'blob_b'::jsonb)))));
SELECT tbl, row_id, blob_id FROM syncular.sync_blob_refs ORDER BY 1, 2, 3;
SELECT att FROM public.todos WHERE id = 't3';
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('b-3', pg_temp.up('todos', '{"id": "t3", "att": null}'))));
SELECT count(*) AS refs_after_null FROM syncular.sync_blob_refs;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('b-4', pg_temp.up('todos', jsonb_build_object('id', 't3', 'att', :'blob_a'::jsonb)))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('b-5', pg_temp.del('todos', 't3'))));
SELECT count(*) AS refs_after_delete FROM syncular.sync_blob_refs;

-- the projection: JSON texts PostgreSQL's jsonb refuses (\u0000, a lone surrogate) and a string
-- holding U+0000 project as NULL; the payload (the truth) keeps them.  Hand-made sparse rows:
-- all 8 columns present, title/done/n/doc/att NULL except where set.
CREATE FUNCTION pg_temp.s(t text) RETURNS bytea LANGUAGE sql AS $$
  SELECT decode(lpad(to_hex(octet_length(convert_to(t, 'UTF8'))), 2, '0') || '000000', 'hex') || convert_to(t, 'UTF8')
$$;
CREATE FUNCTION pg_temp.raw_up(id text, title bytea, meta text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('table', 'todos', 'rowId', id, 'op', 'upsert', 'payload', encode(
    '\xff'::bytea || CASE WHEN title IS NULL THEN '\xdc'::bytea ELSE '\xd8'::bytea END
    || pg_temp.s(id) || pg_temp.s('l1') || coalesce(title, '') || pg_temp.s(meta), 'base64'))
$$;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('j-1',
  pg_temp.raw_up('j1', NULL, '{"a":"\u0000"}'),
  pg_temp.raw_up('j2', NULL, '["\ud800"]'),
  pg_temp.raw_up('j3', NULL, '{"ok":[1,2.5,"\u00e9"]}'),
  pg_temp.raw_up('j4', '\x030000006100'::bytea || '\x62'::bytea, '{"e":1E2}'))));
SELECT id, title, meta, octet_length(_sync_payload) AS payload_bytes,
       position('\x5c7530303030'::bytea IN _sync_payload) > 0 AS payload_keeps_escape
  FROM public.todos WHERE id LIKE 'j%' ORDER BY id;

-- integer primary keys: rowId is the decimal rendering; float and bytes project natively
SELECT set_config('pushtest.table', 'counters', false) IS NOT NULL AS counters;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('n-1', pg_temp.up('counters', '{"id": -7, "list_id": "l1", "score": 0.125, "raw": "AAH+/w=="}')),
  pg_temp.pc('n-2', pg_temp.up('counters', '{"id": 8, "list_id": "l1", "score": null, "raw": null}') || '{"rowId": "08"}'),
  pg_temp.pc('n-3', pg_temp.up('counters', '{"id": -7, "score": 1.5}', 1))));
SELECT _sync_row_id, id, list_id, score, raw FROM public.counters;
SELECT set_config('pushtest.table', '', false) IS NOT NULL AS todos;

-- wire version 2: full-row payloads (every column present: absent keys become NULL), responses
-- in wire 2, conflicts without conflictColumns; scope columns are stripped from an update, so
-- list_id keeps no column version (SPEC v2 §3.4 rule 5, push_wire2)
SELECT * FROM pg_temp.acquire('p2', 'u1', 'W');
SELECT * FROM pg_temp.round('p2', 'u1', 'W', jsonb_build_array(
  pg_temp.pc('w-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "v2", "n": 1}', NULL, 2)),
  pg_temp.pc('w-2', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "done": true}', 1, 2)),
  pg_temp.pc('w-3', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "late"}', 1, 2)),
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), 2);
SELECT pg_temp.row_state('todos', 'p2', 't1');
SELECT wire_version FROM syncular.sync_clients WHERE partition = 'p2';

-- revocation (B.4): once the grant is gone the subscription is revoked (nextCursor = the request
-- cursor, nothing delivered) and writes on the list are forbidden; other lists are unaffected
SELECT * FROM pg_temp.acquire('p1', 'u3', 'R');
SELECT * FROM pg_temp.round('p1', 'u3', 'R', jsonb_build_array(
  pg_temp.pc('r-1', pg_temp.up('todos', '{"id": "r1", "list_id": "l2", "title": "mine", "done": null, "n": null, "meta": null, "doc": null, "att": null}')),
  pg_temp.sub('s2', 'todos', '{"list_id": ["l2"]}', 12)));
DELETE FROM public.grants WHERE actor = 'u3';
INSERT INTO public.grants VALUES ('u3', 'list_id', 'l5');
SELECT * FROM pg_temp.round('p1', 'u3', 'R', jsonb_build_array(
  pg_temp.pc('r-2', pg_temp.up('todos', '{"id": "r1", "title": "still mine?"}')),
  pg_temp.sub('s2', 'todos', '{"list_id": ["l2"]}', 13),
  pg_temp.sub('s5', 'todos', '{"list_id": ["l5"]}', 13)));
SELECT cursor, subscriptions FROM syncular.sync_clients WHERE client_id = 'R';

-- B.21(d) a crdt-only patch with a stale base applies: crdt columns never conflict
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('c-4', pg_temp.up('todos', '{"id": "j3", "doc": null}', 1))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('c-5', pg_temp.up('todos', '{"id": "j3", "doc": null}', 1))));
SELECT pg_temp.row_state('todos', 'p1', 'j3');

-- ---------------------------------------------------------------------------------------------
-- the procedure form.  Outside a transaction block every pushed commit is committed on its own:
-- a failure in a later commit leaves the earlier ones committed.
CREATE FUNCTION public.boom_title() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.title = 'boom' THEN RAISE EXCEPTION 'boom'; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER boom_title BEFORE INSERT OR UPDATE ON public.todos FOR EACH ROW EXECUTE FUNCTION public.boom_title();
\set ok1 '{"id": "k1", "list_id": "l1", "title": "first", "done": null, "n": null, "meta": null, "doc": null, "att": null}'
\set bad '{"id": "k2", "list_id": "l1", "title": "boom", "done": null, "n": null, "meta": null, "doc": null, "att": null}'
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('pr-1', pg_temp.up('todos', :'ok1')),
                                                pg_temp.pc('pr-2', pg_temp.up('todos', :'bad')))) AS two_commits \gset
-- the function form: one transaction, the failure takes the first commit with it
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')', :'two_commits'));
SELECT count(*) AS k1_rows, (SELECT count(*) FROM syncular.push_results WHERE client_commit_id = 'pr-1') AS pr1_results
  FROM public.todos WHERE id = 'k1';
-- the procedure inside a transaction block behaves like the function
BEGIN;
CALL syncular.sync(:'two_commits'::bytea, 'p1', 'u1', NULL);
ROLLBACK;
SELECT count(*) AS k1_rows FROM public.todos WHERE id = 'k1';
-- the procedure outside a transaction block: pr-1 was committed before pr-2 failed
CALL syncular.sync(:'two_commits'::bytea, 'p1', 'u1', NULL);
SELECT count(*) AS k1_rows, (SELECT result ->> 'commitSeq' FROM syncular.push_results WHERE client_commit_id = 'pr-1') AS pr1_seq,
       (SELECT count(*) FROM syncular.push_results WHERE client_commit_id = 'pr-2') AS pr2_results
  FROM public.todos WHERE id = 'k1';
-- a whole round through the procedure: the replayed pr-1, a new commit, then a pull
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('pr-1', pg_temp.up('todos', :'ok1')),
                                                pg_temp.pc('pr-3', pg_temp.up('todos', '{"id": "k1", "n": 3}')),
                                                pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 17))) AS round_req \gset
CALL syncular.sync(:'round_req'::bytea, 'p1', 'u1', NULL) \gset
SELECT * FROM pg_temp.show('p1', :'response'::bytea);
SELECT cursor FROM syncular.sync_clients WHERE partition = 'p1' AND client_id = 'A';

-- an applied commit's stored result is in its commit row (docs/storage.md "Commit log
-- layout"); prune moves the results of the commits it deletes to sync_push_results, so a retry
-- of a pruned commit still replays its result (SPEC §6.3) instead of applying it again
SELECT result ->> 'status' AS pr1_status, result ->> 'commitSeq' AS pr1_seq,
       (SELECT count(*) FROM syncular.sync_push_results WHERE client_commit_id = 'pr-1') AS pr1_outside_log
  FROM syncular.sync_commits WHERE client_commit_id = 'pr-1';
SELECT syncular.prune('p1', '{"minRetainedCommits": 0, "forceAgeMs": 0}') ->> 'horizonSeq' AS horizon;
SELECT (SELECT count(*) FROM syncular.sync_commits WHERE client_commit_id = 'pr-1') AS pr1_commit_rows,
       (SELECT result ->> 'commitSeq' FROM syncular.sync_push_results WHERE client_commit_id = 'pr-1') AS pr1_moved_seq;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('pr-1', pg_temp.up('todos', :'ok1'))));
SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1';

\i sql/push_done.psql
