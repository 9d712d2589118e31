-- pull_incremental: commit windows (push-and-pull.md §3.6): scope filtering through the first
-- effective variable then exact matching, limitCommits (commits never split, the first always
-- delivered), nextCursor rules; revoked; reset at the horizon, cursor = horizon incremental.
\set VERBOSITY terse

-- pg_regress runs every test of a run in one database: this test runs in one transaction that
-- starts from an empty syncular state (synced tables of an earlier registration dropped, catalog
-- emptied) and is rolled back at the end, so no other test sees its effects.
BEGIN;
SET LOCAL client_min_messages = warning;
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT s.app_schema, e->>'name' AS name
             FROM syncular.sync_settings s, jsonb_array_elements(s.compiled->'tables') e
            WHERE s.compiled IS NOT NULL LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I.%I CASCADE', t.app_schema, t.name);
  END LOOP;
  FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'syncular' LOOP
    EXECUTE format('TRUNCATE syncular.%I', t.tablename);
  END LOOP;
END $$;
RESET client_min_messages;
-- schema: todos (one scope variable) and notes (two: list_id, owner_id)
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}", "owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]}]}') ->> 'action' AS action;

-- actor "admin" may see everything; "limited" only list L1
CREATE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT CASE actor WHEN 'limited' THEN '{"list_id": ["L1"], "owner_id": "*"}'::jsonb
                    ELSE '{"list_id": "*", "owner_id": "*"}'::jsonb END
$$;
-- (direct registration: syncular.set_scope_resolver currently refuses every function because it
-- compares an oidvector cast to oid[] (lower bound 0) with an ARRAY[...] (lower bound 1))
UPDATE syncular.sync_settings SET scope_resolver = 'public.resolver(text,text,text)'::regprocedure;

-- push(client, commits): one line per commit, "<clientCommitId> <status> <commitSeq>"
CREATE FUNCTION pg_temp.push(commits jsonb) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT (r->>'clientCommitId') || ' ' || (r->>'status') || ' ' || coalesce(r->>'commitSeq', '-')
    FROM jsonb_array_elements(syncular.push('p1', 'admin', 'writer', commits)) r
$$;

-- round(actor, subscriptions, limits, accept): one SSP2 wire-3 round through syncular.handle,
-- the response summarized one line per frame (RESP_HEADER omitted).
CREATE FUNCTION pg_temp.round(actor text, subs jsonb, lim jsonb DEFAULT '{}', accept int DEFAULT 1)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  frames jsonb;
  resp jsonb;
  f jsonb;
  seg jsonb;
BEGIN
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'reader-' || actor, 'schemaVersion', 1,
                       'logEpoch', syncular._producer_epoch('p1', actor, 'reader-' || actor)),
    jsonb_build_object('type', 'PULL_HEADER',
                       'limitCommits', coalesce((lim->>'commits')::int, 0),
                       'limitSnapshotRows', coalesce((lim->>'rows')::int, 0),
                       'maxSnapshotPages', coalesce((lim->>'pages')::int, 0), 'accept', accept))
    || (SELECT jsonb_agg(s || '{"type": "SUBSCRIPTION"}') FROM jsonb_array_elements(subs) s);
  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
            'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)), 'p1', actor));
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'RESP_HEADER' THEN NULL;
    WHEN 'SUB_START' THEN
      RETURN NEXT format('SUB_START %s %s %s bootstrap=%s scopes=%s', f->>'id', f->>'status',
                         nullif(f->>'reasonCode', ''), f->>'bootstrap', f->>'effectiveScopes');
    WHEN 'COMMIT' THEN
      RETURN NEXT format('  COMMIT %s by %s tables=%s: %s', f->>'commitSeq', f->>'actorId', f->>'tables',
        (SELECT string_agg(format('%s %s%s%s', c->>'op', c->>'rowId',
                   coalesce(' v' || (c->>'rowVersion'), ''),
                   coalesce(' ' || (syncular.decode_row(f->'tables'->>0, decode(c->>'row', 'base64'))
                                    - 'id')::text, '')), ', ' ORDER BY o)
           FROM jsonb_array_elements(f->'changes') WITH ORDINALITY x(c, o)));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      RETURN NEXT format('  SEGMENT %s v%s: [%s]', seg->>'table', seg->>'schemaVersion',
        (SELECT coalesce(string_agg(format('%s@%s', r->'values'->>'id', r->>'serverVersion'), ' ' ORDER BY b, o), '')
           FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY y(blk, b),
                jsonb_array_elements(blk) WITH ORDINALITY x(r, o)));
    WHEN 'SUB_END' THEN
      RETURN NEXT format('SUB_END next=%s%s', f->>'nextCursor', coalesce(' state=' || (f->'bootstrapState')::text, ''));
    ELSE
      RETURN NEXT f::text;
    END CASE;
  END LOOP;
END $$;

-- the log: commit 1..7
SELECT pg_temp.push('[
 {"clientCommitId": "k1", "operations": [{"table": "todos", "row": {"id": "t1", "list_id": "L1", "title": "one"}}]},
 {"clientCommitId": "k2", "operations": [{"table": "todos", "row": {"id": "t2", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t3", "list_id": "L1", "title": null}}]},
 {"clientCommitId": "k3", "operations": [{"table": "todos", "row": {"id": "x1", "list_id": "L2", "title": null}}]},
 {"clientCommitId": "k4", "operations": [{"table": "todos", "row": {"id": "t4", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t5", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t6", "list_id": "L1", "title": null}}]},
 {"clientCommitId": "k5", "operations": [{"table": "todos", "row": {"id": "t1", "title": "uno"}},
                                         {"table": "todos", "op": "delete", "rowId": "t3"}]},
 {"clientCommitId": "k6", "operations": [{"table": "todos", "row": {"id": "t7", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "x2", "list_id": "L2", "title": null}},
                                         {"table": "notes", "row": {"id": "n0", "list_id": "L1", "owner_id": "u1", "body": null}}]},
 {"clientCommitId": "k7", "operations": [{"table": "todos", "row": {"id": "x3", "list_id": "L2", "title": null}}]}
]');

-- everything of L1 after 0 (defaults: limitCommits 1000); only todos changes of L1; the cursor
-- advances to maxSeq = 7 even though commit 7 does not match
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]');
-- two values of the variable
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2", "L1"]}, "cursor": 4}]');

-- limitCommits counts changes and never splits a commit
-- limit 2: commit 1 (1 change) fits, commit 2 (2 changes) would pass 2 -> held back; next = 1
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]', '{"commits": 2}');
-- limit 3: commits 1 and 2 fill the budget exactly; the look-ahead sees commit 4 -> next = 2
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]', '{"commits": 3}');
-- limit 1: the first commit is delivered whole although it has 3 changes; next = 4
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 2}]', '{"commits": 1}');
-- limit 3 from 4: commits 5 (2 changes) and 6 (1 of L1) fill the budget exactly and nothing
-- matches after them: within budget -> next = maxSeq = 7
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 4}]', '{"commits": 3}');
-- caught up: no commits, cursor stays at maxSeq
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 7}]');

-- exact matching on every effective variable: the window is driven by list_id (first in sorted
-- order); notes of owner u2 in L1 are filtered out afterwards
SELECT pg_temp.push('[
 {"clientCommitId": "k8", "operations": [{"table": "notes", "row": {"id": "n1", "list_id": "L1", "owner_id": "u1", "body": "mine"}},
                                         {"table": "notes", "row": {"id": "n2", "list_id": "L1", "owner_id": "u2", "body": "theirs"}}]},
 {"clientCommitId": "k9", "operations": [{"table": "notes", "row": {"id": "n3", "list_id": "L1", "owner_id": "u2", "body": null}}]},
 {"clientCommitId": "k10", "operations": [{"table": "notes", "row": {"id": "n4", "list_id": "L2", "owner_id": "u1", "body": null}}]}
]');
SELECT pg_temp.round('admin', '[{"id": "mine", "table": "notes", "scopes": {"owner_id": ["u1"], "list_id": ["L1"]}, "cursor": 0}]');
-- a commit whose only candidate changes fail the exact match is not delivered; with limit 1 the
-- look-ahead still ends within budget (1 matching change) -> next = maxSeq
SELECT pg_temp.round('admin', '[{"id": "mine", "table": "notes", "scopes": {"owner_id": ["u1"], "list_id": ["L1"]}, "cursor": 6}]', '{"commits": 1}');

-- sections come in request order, each with its own decision
SELECT pg_temp.round('admin', '[{"id": "a", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 0},
                                {"id": "b", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 10},
                                {"id": "c", "table": "notes", "scopes": {"list_id": ["L2"], "owner_id": ["u1"]}, "cursor": 9}]');

-- revoked: no commits, empty scopes, nextCursor = the request cursor
SELECT pg_temp.round('limited', '[{"id": "r", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 3},
                                  {"id": "ok", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": 6}]');

-- the pruning horizon (set directly here): 0 <= cursor < horizon -> reset sync.cursor_expired with
-- nextCursor = the request cursor; cursor = horizon is still incremental (B.8); -1 bootstraps
UPDATE syncular.sync_partitions SET horizon_seq = 4 WHERE partition = 'p1';
SELECT pg_temp.round('admin', '[{"id": "behind", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 3},
                                {"id": "zero", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0},
                                {"id": "at", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 4},
                                {"id": "fresh", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]');
-- revocation comes before the horizon check
SELECT pg_temp.round('limited', '[{"id": "r", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 1}]');
-- a cursor from the future (> maxSeq) bootstraps
SELECT pg_temp.round('admin', '[{"id": "future", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 99}]');

ROLLBACK;
