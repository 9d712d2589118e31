-- Demo part 2: the notes schema the golden vectors use, and the request vectors replayed.
-- The vectors are wire 1 (older clients); this server serves wire 2 and 3, so each vector is
-- first served as-is (refused, as the catalogue says), then lifted to wire 3 and served.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i :demodir/client.sql

-- NOTES (the 8-column vector table) plus the scope column it needs here, and a tasks table.
SELECT syncular.ensure_schema('{
  "version": 1,
  "tables": [
    {"name": "notes", "primaryKey": "id", "scopes": ["project:{project}"], "columns": [
      {"name": "id", "type": "string", "nullable": false},
      {"name": "title", "type": "string", "nullable": true},
      {"name": "body", "type": "string", "nullable": false},
      {"name": "count", "type": "integer", "nullable": true},
      {"name": "score", "type": "float", "nullable": false},
      {"name": "done", "type": "boolean", "nullable": false},
      {"name": "meta", "type": "json", "nullable": true},
      {"name": "blob", "type": "bytes", "nullable": true},
      {"name": "project", "type": "string", "nullable": false}]},
    {"name": "tasks", "primaryKey": "id", "scopes": ["project:{project}"], "columns": [
      {"name": "id", "type": "string", "nullable": false},
      {"name": "project", "type": "string", "nullable": false},
      {"name": "title", "type": "string", "nullable": false}]}
  ]}'::jsonb) AS "ensure_schema(notes)";

CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"project": ["p1", "p2"]}'::jsonb $$;
SELECT 'scope resolver registered' AS hooks FROM (SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)')) r;

-- A vector's 8-column full row, as a 9-column sparse row with project = 'p1' appended:
-- presence ff 01, null bitmap (the vector's byte, then 00), the vector's values, str "p1".
CREATE FUNCTION demo.lift_payload(full_row bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT '\xff01'::bytea || substr(full_row, 1, 1) || '\x00'::bytea || substr(full_row, 2)
         || '\x02000000'::bytea || convert_to('p1', 'UTF8')
$$;

-- The request messages to replay: the golden vectors when present, else requests built here.
CREATE TABLE demo.requests (name text, covers text, body bytea);
\if :{?vecdir}
\else
\set vecdir ''
\endif
SELECT :'vecdir' <> '' AND (pg_stat_file(:'vecdir' || '/request/manifest.json', true)).size IS NOT NULL AS have_vectors \gset
\if :have_vectors
INSERT INTO demo.requests
  SELECT c->>'name', c->>'covers', pg_read_binary_file(:'vecdir' || '/request/' || (c->>'bin'))
    FROM jsonb_array_elements(pg_read_file(:'vecdir' || '/request/manifest.json')::jsonb->'cases') c;
INSERT INTO demo.requests
  SELECT 'invalid/' || (c->>'name'), c->>'covers', pg_read_binary_file(:'vecdir' || '/request/' || (c->>'bin'))
    FROM jsonb_array_elements(pg_read_file(:'vecdir' || '/request/manifest.json')::jsonb->'invalid') c;
-- The vectors' pushes name rows of a longer-lived server (n-1 at version 3, n-2 at version 1,
-- n-3): another client writes them first, so the lifted pushes apply instead of answering
-- sync.row_missing on an empty table.
SELECT string_agg(r ->> 'status', ', ') AS seeded FROM jsonb_array_elements(syncular.push('vectors', 'seeder', 'seed-client', '[
  {"clientCommitId": "seed-1", "operations": [
    {"table": "notes", "op": "upsert", "row": {"id": "n-1", "title": "first", "body": "", "count": 0, "score": 0, "done": false, "meta": null, "blob": null, "project": "p1"}},
    {"table": "notes", "op": "upsert", "row": {"id": "n-2", "title": "second", "body": "", "count": 0, "score": 0, "done": false, "meta": null, "blob": null, "project": "p1"}},
    {"table": "notes", "op": "upsert", "row": {"id": "n-3", "title": "third", "body": "", "count": 0, "score": 0, "done": false, "meta": null, "blob": null, "project": "p1"}}]},
  {"clientCommitId": "seed-2", "operations": [{"table": "notes", "op": "upsert", "row": {"id": "n-1", "count": 1}}]},
  {"clientCommitId": "seed-3", "operations": [{"table": "notes", "op": "upsert", "row": {"id": "n-1", "count": 2}}]}]')) r;
\else
\echo (../shared/vectors absent: replaying requests built by the demo itself)
SELECT syncular.pull('vectors', 'actor-1', 'client-a', '[]') IS NOT NULL AS epoch_acquired \gset
SELECT log_epoch AS epoch FROM syncular.sync_partition_registry WHERE partition = 'vectors' \gset
INSERT INTO demo.requests VALUES
  ('built/1-push', 'one commit of two upserts (wire 2: full rows)', syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 2, 'msgKind', 'request', 'frames', jsonb_build_array(
     jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'client-a', 'schemaVersion', 1, 'logEpoch', :'epoch'),
     jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', 'c-0001', 'operations', jsonb_build_array(
       jsonb_build_object('table', 'tasks', 'rowId', 'task-1', 'op', 'upsert', 'payload',
         encode(syncular.encode_row('tasks', '{"id": "task-1", "project": "p1", "title": "write the demo"}'), 'base64')),
       jsonb_build_object('table', 'tasks', 'rowId', 'task-2', 'op', 'upsert', 'payload',
         encode(syncular.encode_row('tasks', '{"id": "task-2", "project": "p1", "title": "ship it"}'), 'base64')))))))),
  ('built/2-pull', 'header + pull + one subscription (wire 3)', syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
     jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'client-a', 'schemaVersion', 1, 'logEpoch', :'epoch'),
     '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 3}'::jsonb,
     '{"type": "SUBSCRIPTION", "id": "sub-tasks", "table": "tasks", "scopes": {"project": ["p1"]}, "cursor": -1}'::jsonb))));
\endif

CREATE FUNCTION demo.replay() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  q demo.requests;
  doc jsonb;
  lifted jsonb;
  http record;
  epoch text;
  f jsonb;
  frames jsonb;
BEGIN
  FOR q IN SELECT * FROM demo.requests ORDER BY name LOOP
    PERFORM demo.say('');
    PERFORM demo.say(format('── vector %s: %s ', q.name, q.covers));
    -- as-is
    SELECT * INTO http FROM syncular.handle_http(q.body, 'vectors', 'actor-1');
    BEGIN
      doc := syncular.debug_render(q.body);
      PERFORM demo.describe(doc, '  →');
    EXCEPTION WHEN OTHERS THEN
      PERFORM demo.say('  → (does not decode: ' || SQLERRM || ')');
      doc := NULL;
    END;
    PERFORM demo.say(format('  ← as sent (wire %s): HTTP %s %s', coalesce(doc->>'wireVersion', '?'), http.status,
      CASE WHEN http.status = 200 THEN '' ELSE convert_from(http.body, 'UTF8') END));
    IF http.status = 200 THEN
      PERFORM demo.describe(syncular.debug_render(http.body), '  ←');
    END IF;
    CONTINUE WHEN doc IS NULL OR (doc->>'wireVersion')::int >= 2;
    -- lifted to wire 3: the partition's epoch, sparse rows with the scope column
    SELECT log_epoch INTO epoch FROM syncular.sync_partition_registry WHERE partition = 'vectors';
    IF epoch IS NULL THEN
      PERFORM syncular.pull('vectors', 'actor-1', 'client-a', '[]');
      SELECT log_epoch INTO epoch FROM syncular.sync_partition_registry WHERE partition = 'vectors';
    END IF;
    frames := '[]';
    FOR f IN SELECT * FROM jsonb_array_elements(doc->'frames') LOOP
      IF f->>'type' = 'REQ_HEADER' THEN
        f := f || jsonb_build_object('logEpoch', epoch);
      ELSIF f->>'type' = 'PUSH_COMMIT' THEN
        f := jsonb_set(f, '{operations}', (SELECT jsonb_agg(CASE WHEN o ? 'payload'
               THEN o || jsonb_build_object('payload', encode(demo.lift_payload(decode(o->>'payload', 'base64')), 'base64'))
               ELSE o END) FROM jsonb_array_elements(f->'operations') o));
      END IF;
      frames := frames || f;
    END LOOP;
    lifted := jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames);
    PERFORM demo.say('  lifted to wire 3:');
    SELECT * INTO http FROM syncular.handle_http(syncular.debug_encode(lifted), 'vectors', 'actor-1');
    IF http.status = 200 THEN
      PERFORM demo.describe(syncular.debug_render(http.body), '  ←');
    ELSE
      PERFORM demo.say(format('  ← HTTP %s %s', http.status, convert_from(http.body, 'UTF8')));
    END IF;
  END LOOP;
END $$;
DO $$ BEGIN PERFORM demo.replay(); END $$;

\pset format unaligned
\pset tuples_only on
SELECT line FROM demo.transcript ORDER BY n;
\pset format aligned
\pset tuples_only off
\echo
-- what the replayed requests wrote: notes for the golden vectors, tasks for the built requests
\if :have_vectors
SELECT _sync_row_id AS row_id, _sync_server_version AS version, title, body, count, score, done, meta, blob, project
  FROM notes ORDER BY 1;
SELECT demo.check(count(*) = 2 AND bool_and(_sync_server_version > 1) AND NOT bool_or(_sync_row_id = 'n-3'),
                  'the lifted vector pushes updated n-1 and n-2 and deleted n-3') AS result FROM notes;
\else
SELECT _sync_row_id AS row_id, _sync_server_version AS version, project, title FROM tasks ORDER BY 1;
SELECT demo.check(count(*) = 2, 'the built push wrote both tasks') AS result FROM tasks;
\endif
