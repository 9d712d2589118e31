-- scopes_resolver_failure: a scope resolver that fails makes the round fail closed (every
-- subscription revoked with sync.scope_revoked, every write sync.forbidden, §3.2 step 5, §3.4
-- step 4) and says why in the server log: one WARNING per round naming the actor, the partition
-- and the reason (the SQLSTATE and message it raised, NULL, a bad shape, none registered), with
-- a HINT naming the resolver.  The sync client's response never carries the reason.  The
-- WARNING also reaches this session (client_min_messages = warning), which is how it shows here.
-- Works in a private database.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS scopes_resolver_failure;
CREATE DATABASE scopes_resolver_failure;
\c scopes_resolver_failure
SET client_min_messages = warning;
CREATE EXTENSION syncular;

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]}]}') ->> 'action' AS action;
CREATE TABLE public.grants (actor text, val text);
INSERT INTO public.grants VALUES ('u1', 'l1');

-- two rounds through the JSON producers: a write (fresh commit id each time), then a pull; their
-- outcomes on one line
CREATE SEQUENCE public.commit_no;
CREATE FUNCTION pg_temp.try_round(actor text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  p jsonb := syncular.push('p1', actor, 'c-' || actor, jsonb_build_array(jsonb_build_object(
               'clientCommitId', 'w' || nextval('public.commit_no'),
               'operations', '[{"table": "todos", "row": {"id": "t1", "list_id": "l1", "title": "x"}}]'::jsonb)));
  q jsonb := syncular.pull('p1', actor, 'c-' || actor, '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}}]');
BEGIN
  RETURN format('push: %s %s | pull: %s %s', p -> 0 ->> 'status', p -> 0 -> 'results' -> 0 ->> 'code',
                q -> 0 ->> 'status', q -> 0 ->> 'reasonCode');
END $$;

-- no resolver registered yet
SELECT pg_temp.try_round('u1');

-- a resolver that raises for one actor
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF actor = 'boom' THEN
    RAISE EXCEPTION 'resolver exploded for %', actor USING DETAIL = 'grants service unreachable';
  END IF;
  RETURN jsonb_build_object('list_id', (SELECT jsonb_agg(g.val) FROM public.grants g WHERE g.actor = resolve.actor));
END $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)') IS NOT NULL AS resolver_set;
-- a working actor: no WARNING
SELECT pg_temp.try_round('u1');
-- the failing actor: each round logs once (a push round, a pull round: two lines); with the
-- default verbosity the DETAIL and HINT show too (one line for a round of two subscriptions)
SELECT pg_temp.try_round('boom');
\set VERBOSITY default
SELECT (syncular.pull('p1', 'boom', 'c-boom', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}},
                                                 {"id": "s2", "table": "todos", "scopes": {"list_id": ["l2"]}}]')
        -> 1 ->> 'status') AS second_status;
\set VERBOSITY terse
-- the response bytes never carry the reason
SELECT status, position(convert_to('exploded', 'UTF8') IN body) = 0 AS no_reason_in_body
  FROM syncular.handle_http(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
         'msgKind', 'request', 'frames', jsonb_build_array(
           jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c-boom', 'schemaVersion', 1,
                              'logEpoch', (SELECT log_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1')),
           '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}'::jsonb,
           '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}'::jsonb))),
         'p1', 'boom');

-- reading an unqualified table: hooks run with search_path = pg_catalog, pg_temp
CREATE OR REPLACE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT jsonb_build_object('list_id', (SELECT jsonb_agg(val) FROM grants)) $$;
SELECT pg_temp.try_round('u1');

-- NULL, and a shape that is not a map of variable -> values
CREATE OR REPLACE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT CASE actor WHEN 'u1' THEN NULL ELSE '["l1"]'::jsonb END $$;
SELECT pg_temp.try_round('u1');
SELECT pg_temp.try_round('u2');
CREATE OR REPLACE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": [{"nested": true}]}'::jsonb $$;
SELECT pg_temp.try_round('u1');

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE IF EXISTS scopes_resolver_failure;
