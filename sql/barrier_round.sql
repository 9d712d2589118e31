-- The RFC 0007 serve gate as rounds meet it (src/gate.c, src/round.c, src/sql/60_barrier.sql;
-- shared/reference/barrier-rfc0007.md §4, §5): through syncular.handle, syncular.handle_http,
-- CALL syncular.sync and syncular.push.
--   A. a declared, not activated checkpoint refuses every round (503, details {partition,
--      projection}); a session declaring it is served; after activation everyone is served
--   B. the pull gate runs in the pull's own snapshot: a checkpoint, a bump or an epoch rotation
--      that becomes visible between the round's entry and its pull refuses the pull (kinds
--      checkpoint > schema... in §4.2 order, then epoch {"logEpochChanged":true})
--   C. a refusal after pushes: the function form keeps nothing; the procedure form keeps the
--      commits it already committed, and they replay as cached
--   D. the writer fence: sync.storage.writer_fence_rejected for SQL callers, 500
--      sync.internal_error (fixed message) for HTTP clients
--   E. the schema kind: stored marker newer than the compiled schema
-- pg_regress runs every test of a run in one database: this test uses a database of its own
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_barrier_round;
CREATE DATABASE syncular_t_barrier_round;
\c syncular_t_barrier_round
SET client_min_messages = warning;
CREATE EXTENSION syncular;
RESET client_min_messages;
\set SHOW_CONTEXT never

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"]}]}'::jsonb) ->> 'action' AS schema_action;

-- The scope resolver grants everything.  Test hook: a client id "M:<action>,..." makes the
-- resolver do those actions inside the round, after the entry gate and before the pushes and
-- the pull (what another session committing meanwhile looks like to the pull's snapshot).
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE a text;
BEGIN
  IF client LIKE 'M:%' THEN
    FOREACH a IN ARRAY string_to_array(substr(client, 3), ',') LOOP
      CASE a
      WHEN 'rotate' THEN PERFORM syncular.rotate_log_epoch(part);
      WHEN 'declare' THEN PERFORM syncular.declare_checkpoint(part, 'mid_round', 1);
      WHEN 'bump' THEN UPDATE syncular.sync_schema_meta SET schema_version = 2;
      END CASE;
    END LOOP;
  END IF;
  RETURN '{"list_id": ["*"]}';
END $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
-- Test hook on the synced table: a row titled 'rotate' / 'declare' / 'bump' does that inside
-- the push commit that writes it (so it commits with the commit, before the pull).
CREATE FUNCTION public.in_push() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  CASE NEW.title
  WHEN 'rotate' THEN PERFORM syncular.rotate_log_epoch(NEW._sync_partition);
  WHEN 'declare' THEN PERFORM syncular.declare_checkpoint(NEW._sync_partition, 'in_push', 1);
  WHEN 'bump' THEN UPDATE syncular.sync_schema_meta SET schema_version = 2;
  ELSE NULL;
  END CASE;
  RETURN NEW;
END $$;
CREATE TRIGGER in_push BEFORE INSERT OR UPDATE ON public.todos
  FOR EACH ROW EXECUTE FUNCTION public.in_push();

-- req(partition, client, frames, epoch): wire-3 request bytes; epoch '=' is the partition's
-- current one; a PULL_HEADER goes before the first SUBSCRIPTION
CREATE FUNCTION pg_temp.req(part text, client text, frames jsonb, epoch text DEFAULT '=')
RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  hdr jsonb := jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1);
  out jsonb;
  f jsonb;
  pulled boolean := false;
BEGIN
  IF epoch = '=' THEN
    SELECT r.log_epoch INTO epoch FROM syncular.sync_partition_registry r WHERE r.partition = part;
  END IF;
  IF epoch IS NOT NULL THEN
    hdr := hdr || jsonb_build_object('logEpoch', epoch);
  END IF;
  out := jsonb_build_array(hdr);
  FOR f IN SELECT * FROM jsonb_array_elements(frames) LOOP
    IF f ->> 'type' = 'SUBSCRIPTION' AND NOT pulled THEN
      out := out || '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]'::jsonb;
      pulled := true;
    END IF;
    out := out || jsonb_build_array(f);
  END LOOP;
  RETURN syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
                                                  'msgKind', 'request', 'frames', out));
END $$;
CREATE FUNCTION pg_temp.pc(id text, row_id text, title text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', id, 'operations', jsonb_build_array(
    jsonb_build_object('table', 'todos', 'rowId', row_id, 'op', 'upsert',
      'payload', encode(syncular.encode_sparse_row('todos',
                   jsonb_build_object('id', row_id, 'list_id', 'l1', 'title', title)), 'base64'))))
$$;
-- one bootstrap subscription of list l1
CREATE FUNCTION pg_temp.sub() RETURNS jsonb LANGUAGE sql AS $$
  SELECT '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}'::jsonb
$$;
-- show(response): the frames on one line; the epoch and the cursors are left out, the rows of
-- an inline segment are listed as id:title
CREATE FUNCTION pg_temp.show(resp bytea) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(CASE f ->> 'type'
    WHEN 'RESP_HEADER' THEN 'RESP_HEADER reset=' || (f ->> 'resetRequired')
    WHEN 'PUSH_RESULT' THEN format('PUSH_RESULT %s %s', f ->> 'clientCommitId', f ->> 'status')
    WHEN 'SUB_START' THEN format('SUB_START %s', f ->> 'status')
    WHEN 'SEGMENT_INLINE' THEN 'rows ' || (SELECT string_agg((x -> 'values' ->> 'id') || ':' || (x -> 'values' ->> 'title'), ','
                                                             ORDER BY x -> 'values' ->> 'id')
        FROM jsonb_array_elements(syncular.debug_render(decode(f ->> 'payload', 'base64')) -> 'blocks') b,
             jsonb_array_elements(b) x)
    ELSE f ->> 'type' END, ' | ' ORDER BY ord)
    FROM jsonb_array_elements(syncular.debug_render(resp) -> 'frames') WITH ORDINALITY AS y(f, ord)
$$;
-- h(partition, client, frames): handle() -> shown response, or the raised error
-- '<SQLSTATE> <message> | <code> <details>'
CREATE FUNCTION pg_temp.h(part text, client text, frames jsonb, epoch text DEFAULT '=') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; r bytea;
BEGIN
  r := syncular.handle(pg_temp.req(part, client, frames, epoch), part, 'u1');
  RETURN pg_temp.show(r);
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || CASE WHEN det LIKE '{"code"%'
    THEN (det::jsonb ->> 'code') || coalesce(' ' || (det::jsonb -> 'details')::text, '')
    ELSE coalesce(det, '') END;
END $$;
-- http(partition, client, frames): handle_http's status and body (JSON bodies verbatim)
CREATE FUNCTION pg_temp.http(part text, client text, frames jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s %s %s', x.status, x.content_type,
                CASE WHEN x.content_type = 'application/json' THEN convert_from(x.body, 'UTF8')
                     ELSE pg_temp.show(x.body) END)
    FROM syncular.handle_http(pg_temp.req(part, client, frames), part, 'u1') x
$$;
-- try(sql): the raised error as h() prints it, or 'ok: <first column>'
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || CASE WHEN det LIKE '{"code"%'
    THEN (det::jsonb ->> 'code') || coalesce(' ' || (det::jsonb -> 'details')::text, '')
    ELSE coalesce(det, '') END;
END $$;
-- a producer push of one row on p1 by client 'worker', summarised
CREATE FUNCTION pg_temp.produce(id text, row_id text) RETURNS text LANGUAGE sql AS $$
  SELECT pg_temp.try(format($q$SELECT string_agg(r ->> 'clientCommitId' || ' ' || (r ->> 'status'), ', ')
    FROM jsonb_array_elements(syncular.push('p1', 'u1', 'worker', '[{"clientCommitId": %s, "operations":
      [{"table": "todos", "row": {"id": %s, "list_id": "l1", "title": "by worker"}}]}]')) r$q$,
    to_jsonb(id), to_jsonb(row_id)))
$$;

-- ---------------------------------------------------------------------------------------------
-- set-up: epochs of p1 and p2 (a bare pull without logEpoch), two rows on p1
\set pull_header '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]'
SELECT pg_temp.h('p1', 'A', :'pull_header', NULL) AS acquire_p1;
SELECT pg_temp.h('p2', 'B', :'pull_header', NULL) AS acquire_p2;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-1', 't1', 'milk'), pg_temp.pc('a-2', 't2', 'eggs'),
                                              pg_temp.sub())) AS seeded;

-- ---------------------------------------------------------------------------------------------
-- A. a declared checkpoint at the running version, not activated
SELECT syncular.declare_checkpoint('p1', 'todos_cp', 1) ->> 'state' AS declared;
-- every form of round is refused, in every partition (the check spans all partitions)
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS pull_p1;
SELECT pg_temp.h('p2', 'B', jsonb_build_array(pg_temp.sub())) AS pull_p2;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-3', 't3', 'tea'))) AS push_p1;
SELECT pg_temp.http('p1', 'A', jsonb_build_array(pg_temp.sub())) AS http_p1;
SELECT pg_temp.produce('w-1', 't4') AS producer;
-- nothing was written by the refused rounds
SELECT count(*) AS a3_or_w1 FROM syncular.push_results WHERE client_commit_id IN ('a-3', 'w-1');
-- the backfill worker's session declares it: served (reads and writes)
SET syncular.checkpoints = '[{"partition": "p1", "name": "todos_cp", "schemaVersion": 1}]';
SELECT pg_temp.produce('w-1', 't4') AS producer_declared;
SELECT pg_temp.http('p1', 'A', jsonb_build_array(pg_temp.sub())) AS http_declared;
-- declaring another (partition, name) does not cover it
SET syncular.checkpoints = '[{"partition": "p2", "name": "todos_cp", "schemaVersion": 1}]';
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS other_partition_declared;
RESET syncular.checkpoints;
-- claim, advance, activate: then everyone is served
SELECT syncular.claim_checkpoint('p1', 'todos_cp', 1) ->> 'ownerEpoch' AS owner_epoch;
SELECT syncular.advance_checkpoint('p1', 'todos_cp', 1, syncular.source_coverage_seq('p1', ARRAY['todos']), 3) AS advanced;
SELECT syncular.activate_checkpoint('p1', 'todos_cp', 1,
  syncular.source_coverage_seq('p1', ARRAY['todos']), ARRAY['todos']) AS activation;
SELECT pg_temp.h('p2', 'B', jsonb_build_array(pg_temp.sub())) AS pull_p2_activated;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-3', 't3', 'tea'), pg_temp.sub())) AS round_p1_activated;
SELECT pg_temp.http('p1', 'A', jsonb_build_array(pg_temp.sub())) AS http_activated;

-- ---------------------------------------------------------------------------------------------
-- B. the pull gate reads the pull's snapshot (the "M:" client's actions run after the entry gate)
-- a checkpoint declared after the entry gate: the pull is refused, not served
SELECT pg_temp.h('p1', 'M:declare', jsonb_build_array(pg_temp.sub())) AS declared_mid_round;
-- a bump (stored marker 2) after the entry gate
SELECT pg_temp.h('p1', 'M:bump', jsonb_build_array(pg_temp.sub())) AS bumped_mid_round;
-- an epoch rotation after the entry gate: kind epoch
SELECT pg_temp.h('p1', 'M:rotate', jsonb_build_array(pg_temp.sub())) AS rotated_mid_round;
SELECT pg_temp.http('p1', 'M:rotate', jsonb_build_array(pg_temp.sub())) AS rotated_mid_round_http;
-- precedence (§4.2): schema, then checkpoint, then epoch
SELECT pg_temp.h('p1', 'M:rotate,declare', jsonb_build_array(pg_temp.sub())) AS checkpoint_over_epoch;
SELECT pg_temp.h('p1', 'M:rotate,declare,bump', jsonb_build_array(pg_temp.sub())) AS schema_over_both;
-- the refused rounds rolled their actions back: no new checkpoint, marker 1, served
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS served_again;
SELECT count(*) AS mid_round_checkpoints FROM syncular.sync_backfill_checkpoints WHERE name = 'mid_round';
SELECT schema_version AS marker FROM syncular.sync_schema_meta;
-- with pushes, the push gate (under the partition lock) already sees the rotation: nothing is
-- written
SELECT pg_temp.h('p1', 'M:rotate', jsonb_build_array(pg_temp.pc('a-4', 't5', 'jam'), pg_temp.sub())) AS push_after_rotation;
SELECT count(*) AS a4_results FROM syncular.push_results WHERE client_commit_id = 'a-4';

-- ---------------------------------------------------------------------------------------------
-- C. a refusal after pushes (the push's own row write rotates the epoch / declares / bumps)
-- function form: the round raises and the caller's transaction keeps nothing
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-5', 't5', 'rotate'), pg_temp.sub())) AS fn_rotate;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-5', 't5', 'declare'), pg_temp.sub())) AS fn_declare;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-5', 't5', 'bump'), pg_temp.sub())) AS fn_bump;
SELECT count(*) AS a5_results FROM syncular.push_results WHERE client_commit_id = 'a-5';
-- handle_http: 503 with the refusal (the push is rolled back with the subtransaction)
SELECT pg_temp.http('p1', 'A', jsonb_build_array(pg_temp.pc('a-5', 't5', 'rotate'), pg_temp.sub())) AS http_rotate;
SELECT count(*) AS a5_results FROM syncular.push_results WHERE client_commit_id = 'a-5';
-- procedure form outside a transaction block: a-6 commits, then the pull is refused
SELECT log_epoch AS epoch_before FROM syncular.sync_partition_registry WHERE partition = 'p1' \gset
CALL syncular.sync(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-6', 't6', 'rotate'), pg_temp.sub())), 'p1', 'u1');
-- a-6 is durable and the epoch did rotate
SELECT r.result ->> 'status' AS a6_status, c.commit_seq IS NOT NULL AS a6_committed,
       (SELECT log_epoch <> :'epoch_before' FROM syncular.sync_partition_registry WHERE partition = 'p1') AS rotated
  FROM syncular.push_results r
  LEFT JOIN syncular.sync_commits c ON c.partition = r.partition AND c.client_commit_id = r.client_commit_id
 WHERE r.client_commit_id = 'a-6';
-- the client retries under the new epoch: a-6 replays as cached, applied once
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-6', 't6', 'rotate'), pg_temp.sub())) AS a6_retry;
SELECT count(*) AS a6_commits FROM syncular.sync_commits WHERE client_commit_id = 'a-6';
-- a checkpoint declared by the committed push: the same, kind checkpoint
CALL syncular.sync(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-7', 't7', 'declare'), pg_temp.sub())), 'p1', 'u1');
SELECT r.result ->> 'status' AS a7_status FROM syncular.push_results r WHERE r.client_commit_id = 'a-7';
SET syncular.checkpoints = '[{"partition": "p1", "name": "in_push", "schemaVersion": 1}]';
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.pc('a-7', 't7', 'declare'), pg_temp.sub())) AS a7_retry_declared;
RESET syncular.checkpoints;
SELECT syncular.activate_checkpoint('p1', 'in_push', 0,
  syncular.source_coverage_seq('p1', ARRAY['todos']), ARRAY['todos']) AS in_push_activation;

-- ---------------------------------------------------------------------------------------------
-- D. the writer fence above the served version (a checkpoint declared ahead for version 2 is
-- not pending at version 1, so the gate lets the round through and the fence refuses the write)
SELECT pg_temp.h('p3', 'C', :'pull_header', NULL) AS acquire_p3;
SELECT syncular.declare_checkpoint('p3', 'next_version', 2) ->> 'state' AS declared_ahead;
SELECT required_writer_version FROM syncular.sync_writer_fence WHERE partition = 'p3';
SELECT pg_temp.h('p3', 'C', jsonb_build_array(pg_temp.pc('c-1', 'x1', 'fenced'), pg_temp.sub())) AS fenced_handle;
SELECT pg_temp.http('p3', 'C', jsonb_build_array(pg_temp.pc('c-1', 'x1', 'fenced'), pg_temp.sub())) AS fenced_http;
SELECT pg_temp.try($$SELECT syncular.push('p3', 'u1', 'C', '[{"clientCommitId": "c-2", "operations":
  [{"table": "todos", "row": {"id": "x2", "list_id": "l1", "title": "fenced"}}]}]')::text$$) AS fenced_producer;
-- the procedure form raises the same error
\set VERBOSITY terse
CALL syncular.sync(pg_temp.req('p3', 'C', jsonb_build_array(pg_temp.pc('c-3', 'x3', 'fenced'))), 'p3', 'u1');
\set VERBOSITY default
-- nothing of the fenced commits exists; reads are not fenced
SELECT count(*) AS fenced_commits FROM syncular.sync_commits WHERE partition = 'p3';
SELECT count(*) AS fenced_results FROM syncular.push_results WHERE partition = 'p3';
SELECT pg_temp.h('p3', 'C', jsonb_build_array(pg_temp.sub())) AS fenced_pull;
-- the same with the fence row raised directly, and a session declaring a pending checkpoint
INSERT INTO syncular.sync_writer_fence VALUES ('p2', 7);
SELECT syncular.declare_checkpoint('p2', 'pending_here', 1) ->> 'state' AS declared;
SET syncular.checkpoints = '[{"partition": "p2", "name": "pending_here", "schemaVersion": 1}]';
SELECT pg_temp.h('p2', 'B', jsonb_build_array(pg_temp.pc('b-1', 'y1', 'fenced'))) AS fenced_declared;
RESET syncular.checkpoints;
SELECT syncular.activate_checkpoint('p2', 'pending_here', 0, 0, ARRAY['todos']) AS pending_here_activation;

-- ---------------------------------------------------------------------------------------------
-- E. the schema kind: the stored marker is newer than the compiled schema this server runs
UPDATE syncular.sync_schema_meta SET schema_version = 2;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS schema_newer;
SELECT pg_temp.http('p1', 'A', jsonb_build_array(pg_temp.sub())) AS schema_newer_http;
-- the schema kind wins over a pending checkpoint
SELECT syncular.declare_checkpoint('p2', 'late', 1) ->> 'state' AS declared;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS schema_first;
UPDATE syncular.sync_schema_meta SET schema_version = 1;
SELECT pg_temp.h('p1', 'A', jsonb_build_array(pg_temp.sub())) AS checkpoint_then;

-- the fence on a direct append (the trigger alone): a NULL writer_version and one below the
-- fence are refused with the catalogue DETAIL (the partition JSON-escaped), the fence's own
-- version passes
BEGIN;
INSERT INTO syncular.sync_writer_fence VALUES ('f"\x', 3);
SAVEPOINT s;
INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, actor_id,
  created_at_ms, writer_version) VALUES ('f"\x', 1, 'c', 'cc', 'a', 1, NULL);
ROLLBACK TO s;
INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, actor_id,
  created_at_ms, writer_version) VALUES ('f"\x', 1, 'c', 'cc', 'a', 1, 2);
ROLLBACK TO s;
INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, actor_id,
  created_at_ms, writer_version) VALUES ('f"\x', 1, 'c', 'cc', 'a', 1, 3) RETURNING commit_seq;
ROLLBACK;

\c :regress_db
DROP DATABASE syncular_t_barrier_round;
