-- producer_pull: syncular.pull's sections are built in C (syncular._pull_sections) in one pass over
-- the response.  Every answer here equals the one built from the response's canonical rendering
-- (syncular.debug_render, SPEC §11), as the PL/pgSQL producer before it built them: bootstrap
-- rows from inline segments (paged, resumed), commits of two tables with upserts, deletes and
-- every column type, several subscriptions, a revoked one.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_producer_pull;
\c syncular_t_producer_pull
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "n", "type": "integer", "nullable": true},
    {"name": "f", "type": "float", "nullable": true},
    {"name": "done", "type": "boolean", "nullable": true},
    {"name": "meta", "type": "json", "nullable": true},
    {"name": "raw", "type": "bytes", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "integer", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]}]}'::jsonb, '[]'::jsonb, 'public') ->> 'action' AS action;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1", "l2"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');

-- the oracle: the sections built from the rendering of the same response
CREATE FUNCTION pg_temp.sections(resp jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  f jsonb; sections jsonb := '[]'::jsonb; cur jsonb; seg jsonb; changes jsonb;
BEGIN
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'SUB_START' THEN
      cur := (f - 'type') || '{"commits": [], "rows": []}'::jsonb;
    WHEN 'COMMIT' THEN
      SELECT coalesce(jsonb_agg(jsonb_build_object('table', f->'tables'->((x.ch->>'tableIndex')::int)) ||
               (x.ch - 'tableIndex' - 'row') ||
               CASE WHEN x.ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                      f->'tables'->>((x.ch->>'tableIndex')::int), decode(x.ch->>'row', 'base64')))
                    ELSE '{}'::jsonb END ORDER BY x.n), '[]'::jsonb)
        INTO changes FROM jsonb_array_elements(f->'changes') WITH ORDINALITY AS x(ch, n);
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      cur := jsonb_set(cur, '{rows}', cur->'rows' || coalesce((
        SELECT jsonb_agg(jsonb_build_object('serverVersion', y.rw->'serverVersion', 'row', y.rw->'values')
                         ORDER BY x.n, y.m)
          FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY AS x(blk, n),
               jsonb_array_elements(x.blk) WITH ORDINALITY AS y(rw, m)), '[]'::jsonb));
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;
-- one pull request (as syncular.pull builds it), served once; both builds of its answer
CREATE FUNCTION pg_temp.same(subs jsonb, limits jsonb DEFAULT '{}') RETURNS TABLE (same boolean, sections int, commits int, changes int, rows int)
LANGUAGE sql AS $$
  WITH q AS (SELECT syncular.handle(syncular.debug_encode(jsonb_build_object(
      'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
        jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c9', 'schemaVersion', 1,
          'logEpoch', syncular._producer_epoch('p1', 'u1', 'c9')),
        jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', coalesce((limits->>'limitCommits')::int, 0),
          'limitSnapshotRows', coalesce((limits->>'limitSnapshotRows')::int, 0),
          'maxSnapshotPages', coalesce((limits->>'maxSnapshotPages')::int, 0), 'accept', 1))
        || (SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION',
              'id', s->>'id', 'table', s->>'table', 'scopes', s->'scopes',
              'cursor', coalesce((s->>'cursor')::bigint, -1), 'bootstrapState', s->'bootstrapState'))), '[]')
              FROM jsonb_array_elements(subs) s))), 'p1', 'u1') AS resp),
  a AS (SELECT syncular._pull_sections(resp) AS c, pg_temp.sections(syncular.debug_render(resp)) AS o FROM q)
  SELECT a.c = a.o, jsonb_array_length(a.c),
         (SELECT count(*)::int FROM jsonb_array_elements(a.c) s, jsonb_array_elements(s->'commits')),
         (SELECT count(*)::int FROM jsonb_array_elements(a.c) s, jsonb_array_elements(s->'commits') k,
                 jsonb_array_elements(k->'changes')),
         (SELECT count(*)::int FROM jsonb_array_elements(a.c) s, jsonb_array_elements(s->'rows'))
    FROM a
$$;
SELECT syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "a", "operations": [
    {"table": "todos", "row": {"id": "t1", "list_id": "l1", "title": "one", "n": 9007199254740991, "f": 2.5, "done": true, "meta": {"k": [1, null, "x"]}, "raw": "AAE="}},
    {"table": "todos", "row": {"id": "t2", "list_id": "l2", "title": null, "n": -3, "f": null, "done": false, "meta": null, "raw": null}},
    {"table": "notes", "row": {"id": 1, "list_id": "l1", "body": "first note"}}]},
  {"clientCommitId": "b", "operations": [
    {"table": "todos", "row": {"id": "t3", "list_id": "l1", "title": "a\u00e9\u4e2d\ud83d\ude00", "n": 0, "f": -0.125, "done": null, "meta": [], "raw": ""}}]},
  {"clientCommitId": "c", "operations": [{"table": "todos", "op": "delete", "rowId": "t2"}]},
  {"clientCommitId": "d", "operations": [{"table": "notes", "row": {"id": 2, "list_id": "l2", "body": "second"}},
                                         {"table": "todos", "baseVersion": 1, "row": {"id": "t1", "list_id": "l1", "title": "edited", "n": 1, "f": 1e300, "done": false, "meta": "x", "raw": "/w=="}}]}]'::jsonb)
  AS results \gset
SELECT r ->> 'clientCommitId' AS commit, r ->> 'status' AS status, r -> 'results' AS results
  FROM jsonb_array_elements(:'results'::jsonb) r;
-- a commit of plain SQL writes: an insert, and a row moved from l1 to l2
BEGIN;
INSERT INTO public.todos (_sync_partition, id, list_id, title, meta) VALUES ('p1', 't4', 'l1', 'by SQL', '"s"');
UPDATE public.todos SET list_id = 'l2' WHERE id = 't1';
COMMIT;
-- incremental: both tables, two scopes, from cursor 0 and from the middle
SELECT * FROM pg_temp.same('[{"id": "a", "table": "todos", "scopes": {"list_id": ["l1", "l2"]}, "cursor": 0},
                              {"id": "b", "table": "notes", "scopes": {"list_id": ["l1"]}, "cursor": 0}]');
SELECT * FROM pg_temp.same('[{"id": "a", "table": "todos", "scopes": {"list_id": ["l2"]}, "cursor": 2}]');
-- bootstrap: rows from inline segments, paged (a resume token in SUB_END), then resumed
SELECT * FROM pg_temp.same('[{"id": "a", "table": "todos", "scopes": {"list_id": ["l1", "l2"]}},
                              {"id": "b", "table": "notes", "scopes": {"list_id": ["l1", "l2"]}}]');
SELECT * FROM pg_temp.same('[{"id": "a", "table": "todos", "scopes": {"list_id": ["l1", "l2"]}}]',
                           '{"limitSnapshotRows": 1, "maxSnapshotPages": 1}');
SELECT s -> 'bootstrapState' AS token FROM jsonb_array_elements(syncular.pull('p1', 'u1', 'c8',
  '[{"id": "a", "table": "todos", "scopes": {"list_id": ["l1", "l2"]}}]',
  '{"limitSnapshotRows": 1, "maxSnapshotPages": 1}')) s \gset
SELECT * FROM pg_temp.same(format('[{"id": "a", "table": "todos", "scopes": {"list_id": ["l1", "l2"]}, "cursor": 4, "bootstrapState": %s}]', :'token')::jsonb,
                           '{"limitSnapshotRows": 1, "maxSnapshotPages": 1}');
-- a scope the actor may not read: a revoked section, no commits, no rows
SELECT * FROM pg_temp.same('[{"id": "x", "table": "todos", "scopes": {"list_id": ["l9"]}, "cursor": 0}]');
SELECT s ->> 'status' AS status, s -> 'commits' AS commits, s -> 'rows' AS rows
  FROM jsonb_array_elements(syncular.pull('p1', 'u1', 'c7', '[{"id": "x", "table": "todos", "scopes": {"list_id": ["l9"]}, "cursor": 0}]')) s;
-- the answer as a client of syncular.pull reads it
SELECT jsonb_pretty(syncular.pull('p1', 'u1', 'c6', '[{"id": "b", "table": "notes", "scopes": {"list_id": ["l1", "l2"]}, "cursor": 0}]')
                    #- '{0,commits,0,createdAtMs}' #- '{0,commits,1,createdAtMs}');
-- strings the rendering does not keep as they are (a NUL byte in a rowId and in a scope value,
-- in a response built around placeholders of the same length: jsonb cannot hold U+0000): the
-- commit's fields are taken from the rendering, as the oracle takes them
CREATE FUNCTION pg_temp.patch(b bytea, placeholder text, repl bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  p bytea := convert_to(placeholder, 'UTF8');
  i int;
BEGIN
  LOOP
    i := position(p IN b);
    EXIT WHEN i = 0;
    b := overlay(b PLACING repl FROM i FOR length(p));
  END LOOP;
  RETURN b;
END $$;
SELECT pg_temp.patch(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
  'msgKind', 'response', 'frames', jsonb_build_array(
    jsonb_build_object('type', 'RESP_HEADER', 'latestSchemaVersion', 1, 'logEpoch', 'e', 'resetRequired', false),
    jsonb_build_object('type', 'SUB_START', 'id', 's', 'status', 'active', 'reasonCode', '',
                       'effectiveScopes', '{"list_id": ["l1"]}'::jsonb, 'bootstrap', false),
    jsonb_build_object('type', 'COMMIT', 'commitSeq', 7, 'createdAtMs', 1, 'actorId', 'u1',
      'tables', '["todos"]'::jsonb, 'changes', jsonb_build_array(
        jsonb_build_object('tableIndex', 0, 'rowId', 't~~1', 'op', 'upsert', 'rowVersion', 2,
          'scopes', '{"list_id": "l1"}'::jsonb,
          'row', encode(syncular.encode_row('todos', '{"id": "t1", "list_id": "l1", "title": "x", "n": 1,
                   "f": 0.5, "done": true, "meta": null, "raw": null}'), 'base64')),
        jsonb_build_object('tableIndex', 0, 'rowId', 't2', 'op', 'delete',
          'scopes', '{"list_id": "l~~9"}'::jsonb))),
    jsonb_build_object('type', 'SUB_END', 'nextCursor', 7)))), '~~', '\x0000') AS nul_resp \gset
SELECT syncular._pull_sections(:'nul_resp') = pg_temp.sections(syncular.debug_render(:'nul_resp')) AS same,
       syncular._pull_sections(:'nul_resp') -> 0 -> 'commits' -> 0 -> 'changes' AS changes;
-- bytes that are not a message: the decode error's catalogue code
SELECT syncular._pull_sections('\x00'::bytea);
\c :orig_db
DROP DATABASE syncular_t_producer_pull;
