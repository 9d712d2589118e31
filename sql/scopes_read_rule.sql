-- scopes_read_rule: reads never exceed the grant (README "Security").  A row or change reaches a
-- subscription only when the value stored for every declared scope variable of its table is
-- allowed by the actor's grant (a variable missing from the grant allows nothing, "*" allows
-- all) and it matches the requested scopes; a declared variable the grant allows nothing of
-- revokes the subscription.  Writes obey the same rule (§3.4), so every row an actor receives is
-- one it may write, and every row it may not write it never receives.  Checked for bootstrap
-- (with paging over filtered rows and a resume token), incremental windows, the JSON producer
-- syncular.pull, and the write path.  Works in a private database.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS scopes_read_rule;
CREATE DATABASE scopes_read_rule;
\c scopes_read_rule
SET client_min_messages = warning;
CREATE EXTENSION syncular;
RESET client_min_messages;

-- tasks: two scope variables (org, project)
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "tasks", "primaryKey": "id", "scopes": ["org:{org}", "project:{project}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "org", "type": "string", "nullable": false},
    {"name": "project", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]}]}') ->> 'action' AS action;

-- grants: admin everything; pa: org o1 and project pa; orgonly: org o1 and no project at all;
-- anyproj: org o1, every project; twoproj: org o1, projects pa and pc; pastar: every org,
-- project pa
CREATE TABLE public.grants (actor text, var text, val text);
INSERT INTO public.grants VALUES ('admin', 'org', '*'), ('admin', 'project', '*'),
  ('pa', 'org', 'o1'), ('pa', 'project', 'pa'), ('orgonly', 'org', 'o1'),
  ('anyproj', 'org', 'o1'), ('anyproj', 'project', '*'),
  ('twoproj', 'org', 'o1'), ('twoproj', 'project', 'pa'), ('twoproj', 'project', 'pc'),
  ('pastar', 'org', '*'), ('pastar', 'project', 'pa');
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT jsonb_object_agg(var, vals)
                     FROM (SELECT g.var, jsonb_agg(g.val ORDER BY g.val) AS vals
                             FROM public.grants g WHERE g.actor = resolve.actor GROUP BY g.var) x),
                  '{}'::jsonb)
$$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)') IS NOT NULL AS resolver_set;

-- push(actor, commits): one line per commit, "<clientCommitId> <status> <commitSeq> [<code>]"
CREATE FUNCTION pg_temp.push(actor text, commits jsonb) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT concat_ws(' ', r ->> 'clientCommitId', r ->> 'status', coalesce(r ->> 'commitSeq', '-'),
                   (SELECT string_agg(x ->> 'code', ',') FROM jsonb_array_elements(r -> 'results') x))
    FROM jsonb_array_elements(syncular.push('p1', actor, 'writer-' || actor, commits)) r
$$;

-- round(actor, subscriptions, limits): one SSP2 wire-3 pull through syncular.handle, one line
-- per frame (RESP_HEADER omitted); segments list their row ids, commits their changes
CREATE FUNCTION pg_temp.round(actor text, subs jsonb, lim jsonb DEFAULT '{}') RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  frames jsonb;
  f jsonb;
BEGIN
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'reader-' || actor, 'schemaVersion', 1,
                       'logEpoch', syncular._producer_epoch('p1', actor, 'reader-' || actor)),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', coalesce((lim ->> 'commits')::int, 0),
                       'limitSnapshotRows', coalesce((lim ->> 'rows')::int, 0),
                       'maxSnapshotPages', coalesce((lim ->> 'pages')::int, 0), 'accept', 1))
    || (SELECT jsonb_agg(s || '{"type": "SUBSCRIPTION"}') FROM jsonb_array_elements(subs) s);
  FOR f IN SELECT * FROM jsonb_array_elements(syncular.debug_render(syncular.handle(
             syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
               'msgKind', 'request', 'frames', frames)), 'p1', actor)) -> 'frames') LOOP
    CASE f ->> 'type'
    WHEN 'RESP_HEADER' THEN NULL;
    WHEN 'SUB_START' THEN
      RETURN NEXT format('SUB_START %s %s %s bootstrap=%s scopes=%s', f ->> 'id', f ->> 'status',
                         nullif(f ->> 'reasonCode', ''), f ->> 'bootstrap', f ->> 'effectiveScopes');
    WHEN 'COMMIT' THEN
      RETURN NEXT format('  COMMIT %s: %s', f ->> 'commitSeq',
        (SELECT string_agg(format('%s %s %s', c ->> 'op', c ->> 'rowId', c -> 'scopes'), ', ' ORDER BY o)
           FROM jsonb_array_elements(f -> 'changes') WITH ORDINALITY x(c, o)));
    WHEN 'SEGMENT_INLINE' THEN
      RETURN NEXT format('  SEGMENT [%s]',
        (SELECT coalesce(string_agg(format('%s %s/%s', r -> 'values' ->> 'id', r -> 'values' ->> 'org',
                                           r -> 'values' ->> 'project'), ', ' ORDER BY b, o), '')
           FROM jsonb_array_elements(syncular.debug_render(decode(f ->> 'payload', 'base64')) -> 'blocks')
                  WITH ORDINALITY y(blk, b),
                jsonb_array_elements(blk) WITH ORDINALITY x(r, o)));
    WHEN 'SUB_END' THEN
      RETURN NEXT format('SUB_END next=%s%s', f ->> 'nextCursor',
                         coalesce(' state=' || (f -> 'bootstrapState')::text, ''));
    ELSE
      RETURN NEXT f::text;
    END CASE;
  END LOOP;
END $$;

-- sections(actor, subscriptions): the JSON producer syncular.pull, one line per section
CREATE FUNCTION pg_temp.sections(actor text, subs jsonb) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT format('%s %s %s scopes=%s rows=[%s] commits=[%s] next=%s', s ->> 'id', s ->> 'status',
                nullif(s ->> 'reasonCode', ''), s -> 'effectiveScopes',
                (SELECT coalesce(string_agg(format('%s %s/%s', r -> 'row' ->> 'id', r -> 'row' ->> 'org',
                                                   r -> 'row' ->> 'project'), ', ' ORDER BY o), '')
                   FROM jsonb_array_elements(s -> 'rows') WITH ORDINALITY x(r, o)),
                (SELECT coalesce(string_agg(format('%s:%s', c ->> 'commitSeq',
                          (SELECT string_agg(format('%s %s', ch ->> 'op', ch ->> 'rowId'), ' ' ORDER BY p)
                             FROM jsonb_array_elements(c -> 'changes') WITH ORDINALITY z(ch, p))), ', ' ORDER BY o), '')
                   FROM jsonb_array_elements(s -> 'commits') WITH ORDINALITY y(c, o)),
                s ->> 'nextCursor')
    FROM jsonb_array_elements(syncular.pull('p1', actor, 'json-' || actor, subs)) s
$$;

-- the log: o1/pa rows a1 c1, o1/pb rows b1 b2 (b2 deleted in 5), o2/pa row d1; commit 4 touches
-- one row of pb and one of pa
SELECT pg_temp.push('admin', '[
 {"clientCommitId": "k1", "operations": [{"table": "tasks", "row": {"id": "a1", "org": "o1", "project": "pa", "title": null}}]},
 {"clientCommitId": "k2", "operations": [{"table": "tasks", "row": {"id": "b1", "org": "o1", "project": "pb", "title": null}},
                                         {"table": "tasks", "row": {"id": "b2", "org": "o1", "project": "pb", "title": null}}]},
 {"clientCommitId": "k3", "operations": [{"table": "tasks", "row": {"id": "c1", "org": "o1", "project": "pa", "title": null}},
                                         {"table": "tasks", "row": {"id": "d1", "org": "o2", "project": "pa", "title": null}}]},
 {"clientCommitId": "k4", "operations": [{"table": "tasks", "row": {"id": "b1", "title": "pb edit"}},
                                         {"table": "tasks", "row": {"id": "a1", "title": "pa edit"}}]},
 {"clientCommitId": "k5", "operations": [{"table": "tasks", "op": "delete", "rowId": "b2"}]}
]');

-- ---- bootstrap
-- granted {org: [o1], project: [pa]}, subscribed to {org: [o1]}: the pa rows of o1 only; the
-- echo is the requested map (requested ∩ allowed), never a key the subscription did not ask for
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": -1}]');
-- granted only {org: [o1]}: project allows nothing, so the subscription is revoked
SELECT pg_temp.round('orgonly', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": -1}]');
-- project "*" allows every project: every row of o1 (and "*" never appears in the echo)
SELECT pg_temp.round('anyproj', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": -1}]');
-- a requested project outside the grant is dropped from the intersection (pb), as before
SELECT pg_temp.round('twoproj', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"], "project": ["pa", "pb"]}, "cursor": -1}]');
-- every org granted, only project pa: the pa rows of both requested orgs
SELECT pg_temp.round('pastar', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o2", "o1"]}, "cursor": -1}]');
-- paging over filtered rows: one row per page, two pages.  The candidates of org o1 are a1, b1,
-- c1; the second page's only candidate (b1) is filtered out, the page is still sent (empty) and
-- the keyset cursor moves past it
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": -1}]',
                     '{"rows": 1, "pages": 2}');
-- resuming from that token delivers c1 and completes
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": -1,
  "bootstrapState": {"asOfCommitSeq": 5, "tables": ["tasks"], "tableIndex": 0, "rowCursor": "b1"}}]',
                     '{"rows": 1, "pages": 2}');

-- ---- incremental windows
-- commits 2 and 5 hold only pb changes: skipped; commit 4 delivers only its pa change; the
-- cursor still advances to maxSeq = 5
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]');
-- filtered changes do not count against limitCommits: 1 change per round, commits 1 then 3
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]', '{"commits": 1}');
SELECT pg_temp.round('pa', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 1}]', '{"commits": 1}');
SELECT pg_temp.round('orgonly', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]');
SELECT pg_temp.round('anyproj', '[{"id": "s", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]');

-- ---- the JSON producer (same engine)
SELECT pg_temp.sections('pa', '[{"id": "boot", "table": "tasks", "scopes": {"org": ["o1"]}},
                                {"id": "inc", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]');
SELECT pg_temp.sections('orgonly', '[{"id": "boot", "table": "tasks", "scopes": {"org": ["o1"]}},
                                     {"id": "inc", "table": "tasks", "scopes": {"org": ["o1"]}, "cursor": 0}]');

-- ---- writes obey the same rule: what pa does not receive, it may not write
SELECT pg_temp.push('pa', '[{"clientCommitId": "w1", "operations": [{"table": "tasks", "row": {"id": "b1", "title": "x"}}]},
                            {"clientCommitId": "w2", "operations": [{"table": "tasks", "row": {"id": "e1", "org": "o1", "project": "pb", "title": null}}]},
                            {"clientCommitId": "w3", "operations": [{"table": "tasks", "row": {"id": "a1", "title": "mine"}}]}]');
SELECT pg_temp.push('orgonly', '[{"clientCommitId": "w1", "operations": [{"table": "tasks", "row": {"id": "a1", "title": "x"}}]},
                                 {"clientCommitId": "w2", "operations": [{"table": "tasks", "row": {"id": "b1", "title": "x"}}]}]');

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE IF EXISTS scopes_read_rule;
