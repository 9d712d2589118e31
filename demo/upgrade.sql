-- Demo part: a schema upgrade with a backfill (RFC 0007 barrier: backfill checkpoint, writer
-- fence, serve gate).  todos v1 serves a client; v2 appends the nullable column "notes" and
-- declares the checkpoint todos_notes_v2 for the partition; rounds are refused (503
-- sync.schema_not_ready) until a backfill worker has filled "notes" and activated the
-- checkpoint; then the same client's round is served with v2.  The operator statements between
-- the "README" markers are, verbatim, the SQL of README.md "Upgrading with backfills".
-- Run by demo/run.sh in its own database, with psql variables demodir and ir (the todos IR).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i :demodir/client.sql

SELECT syncular.ensure_schema(:'ir'::jsonb) ->> 'action' AS "ensure_schema(todos v1)";

-- alice sees and writes the groceries list; the backfill worker's actor writes every list
CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE actor WHEN 'alice' THEN '{"list_id": ["groceries"]}'::jsonb
                    WHEN 'backfill' THEN '{"list_id": "*"}'::jsonb
                    ELSE '{}'::jsonb END
$$;
SELECT 'scope resolver registered' AS hooks
  FROM (SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)')) r;
INSERT INTO demo.clients VALUES ('phone-A', 'alice', NULL);
INSERT INTO demo.subscriptions (client_id, id, tbl, scopes) VALUES
  ('phone-A', 'todos-groceries', 'todos', '{"list_id": ["groceries"]}');

\pset format unaligned
\pset tuples_only on

-- 1. v1 in service: A acquires the epoch, pushes three todos and bootstraps them (2 rows a page).
SELECT demo.sync('phone-A', p_title => 'A: first contact (schema v1)') IS NOT NULL AS ok \gset
SELECT demo.sync('phone-A', '[
  {"id": "A-1", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "row": {"id": "t1", "list_id": "groceries", "title": "milk", "done": false, "position": 1, "updated_at_ms": 1000}},
     {"table": "todos", "rowId": "t2", "op": "upsert", "row": {"id": "t2", "list_id": "groceries", "title": "bread", "done": false, "position": 2, "updated_at_ms": 1000}}]},
  {"id": "A-2", "operations": [
     {"table": "todos", "rowId": "t3", "op": "upsert", "row": {"id": "t3", "list_id": "groceries", "title": "eggs", "done": true, "position": 3, "updated_at_ms": 1001}}]}
]', 'A: pushes three todos, bootstraps (page 1, schema v1)') IS NOT NULL AS ok \gset
SELECT demo.sync('phone-A', p_title => 'A: bootstrap page 2: caught up (schema v1)') IS NOT NULL AS ok \gset
SELECT line FROM demo.transcript ORDER BY n;
TRUNCATE demo.transcript;

-- 2. v2 of the IR: todos gains the nullable column "notes" (append-only), in psql variable ir_v2
SELECT jsonb_set(i, '{schemaVersion}', '2') || jsonb_build_object('tables',
         (SELECT jsonb_agg(CASE WHEN t ->> 'name' = 'todos'
                                THEN jsonb_set(t, '{columns}', (t -> 'columns')
                                     || '[{"name": "notes", "type": "string", "nullable": true}]')
                                ELSE t END ORDER BY o)
            FROM jsonb_array_elements(i -> 'tables') WITH ORDINALITY x(t, o))) AS ir_v2
  FROM (SELECT :'ir'::jsonb AS i) s \gset

\echo
\echo '── operator: ship v2 with its checkpoint ───────────────────────────────────────'
\pset tuples_only off
\pset format aligned
-- README block 1: begin
-- 1. ship v2 with its checkpoint: installed in the bump transaction, which also raises the
--    partition's writer fence to 2 (a v1 writer can no longer append to "acme")
SELECT syncular.ensure_schema(:'ir_v2'::jsonb,
  '[{"partition": "acme", "name": "todos_notes_v2", "schemaVersion": 2}]') ->> 'action' AS bump;
SELECT syncular.serve_gate('acme') -> 'refusal' AS refusal;   -- pending checkpoint todos_notes_v2
SELECT syncular.readiness() ->> 'phase' AS phase;             -- backfill_checkpoint
-- README block 1: end

-- 3. the client's next round (it now speaks v2) is refused until the backfill is activated
\pset format unaligned
\pset tuples_only on
SELECT demo.sync('phone-A', p_title => 'A: round during the backfill: refused (503)') IS NOT NULL AS ok \gset
SELECT line FROM demo.transcript ORDER BY n;
TRUNCATE demo.transcript;

\echo
\echo '── operator: backfill "notes" under a claimed owner epoch, then activate ───────'
\pset tuples_only off
\pset format aligned
-- README block 2: begin
-- 2. the backfill worker claims the checkpoint and gets its owner epoch
SELECT syncular.claim_checkpoint('acme', 'todos_notes_v2', 2) ->> 'ownerEpoch' AS owner_epoch \gset
\echo owner epoch :owner_epoch
-- 3. each batch is one transaction: advance the checkpoint (compare-and-set on the owner epoch),
--    then push the batch through the engine; the worker's session declares the checkpoint so
--    the serve gate lets its own rounds through.  A stale owner (false) rolls the batch back.
BEGIN;
SET LOCAL syncular.checkpoints = '[{"partition": "acme", "name": "todos_notes_v2", "schemaVersion": 2}]';
SELECT syncular.advance_checkpoint('acme', 'todos_notes_v2', :owner_epoch,
         syncular.source_coverage_seq('acme', ARRAY['todos']),
         (SELECT count(*) FROM todos WHERE notes IS NULL)) AS advanced \gset
\if :advanced
SELECT r ->> 'clientCommitId' AS batch, r ->> 'status' AS status, r ->> 'commitSeq' AS commit_seq
  FROM jsonb_array_elements(syncular.push('acme', 'backfill', 'todos_notes_v2-worker',
         (SELECT jsonb_build_array(jsonb_build_object(
                   'clientCommitId', 'todos_notes_v2-batch-1',
                   'operations', jsonb_agg(jsonb_build_object('table', 'todos',
                                   'row', jsonb_build_object('id', id, 'notes', 'from list ' || list_id))
                                 ORDER BY id)))
            FROM todos WHERE notes IS NULL))) r;
COMMIT;
\else
ROLLBACK;
\endif
-- 4. caught up: activate with the source tables' coverage as the watermark
--    ('activated'; 'stale': writes landed above the watermark, catch up and retry;
--    'unverifiable': the log was pruned past it, start again from a newer watermark)
SELECT syncular.activate_checkpoint('acme', 'todos_notes_v2', :owner_epoch,
  syncular.source_coverage_seq('acme', ARRAY['todos']), ARRAY['todos']) AS activation;
SELECT syncular.serve_gate('acme') ->> 'ready' AS ready;
-- README block 2: end

-- 5. the same round, now served with v2: the backfill commit carries "notes" for every row
\pset format unaligned
\pset tuples_only on
SELECT demo.sync('phone-A', p_title => 'A: the same round after activation: served (v2)') IS NOT NULL AS ok \gset
SELECT line FROM demo.transcript ORDER BY n;
\pset format aligned
\pset tuples_only off

\echo
\echo '── after the upgrade ──────────────────────────────────────────────────────────'
SELECT id, title, notes, _sync_server_version AS version FROM todos ORDER BY id;
SELECT r.row_id, r.version, r.row_data ->> 'notes' AS notes_on_phone_A
  FROM demo.replica r WHERE r.client_id = 'phone-A' ORDER BY r.row_id;
SELECT partition, name, schema_version, state, owner_epoch, observed_rows
  FROM syncular.sync_backfill_checkpoints;
SELECT partition, required_writer_version FROM syncular.sync_writer_fence;
