-- bench/realtime_fanout.sql: milliseconds per syncular.realtime_fanout call with 1,000
-- registered connections (docs/realtime.md §2).  Run with psql against a database where the
-- extension is installed and no schema is registered yet:
--   psql -X -q -f bench/realtime_fanout.sql
-- Cases: every connection receives the delta (1,000 live-grant checks and bodies), one connection
-- of 1,000 does (the others are ruled out by the in-memory match), and nobody does.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]}]}') IS NOT NULL AS registered;
-- the README's resolver shape: a plain SQL function
CREATE FUNCTION public.bench_resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT jsonb_build_object('list_id', jsonb_build_array('*')) $$;
SELECT syncular.set_scope_resolver('public.bench_resolver(text,text,text)');

-- 1,000 clients: 'shared' subscribe to list "shared", 'own' each to their own list
CREATE TEMP TABLE conns AS
  SELECT i AS conn, 'client-' || i AS client, 'actor-' || i AS actor FROM generate_series(1, 1000) i;
CREATE FUNCTION pg_temp.register(lst_of_conn text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE c record; out jsonb := '[]';
BEGIN
  DELETE FROM syncular.sync_clients WHERE partition = 'p1' AND client_id LIKE 'client-%';
  INSERT INTO syncular.sync_clients (partition, client_id, actor_id, wire_version, cursor, subscriptions, updated_at_ms)
  SELECT 'p1', client, actor, 3, 1,
         jsonb_build_array(jsonb_build_object('id', 's1', 'table', 'todos', 'scopes',
           jsonb_build_object('list_id', jsonb_build_array(
             CASE lst_of_conn WHEN 'shared' THEN 'shared' ELSE 'list-' || conn END)))), 0
    FROM conns;
  FOR c IN SELECT * FROM conns ORDER BY conn LOOP
    out := out || jsonb_build_array(jsonb_build_object('conn', c.conn, 'cursor', 1, 'registration',
             syncular.realtime_connect('p1', c.actor, c.client) -> 'registration'));
  END LOOP;
  RETURN out;
END $$;
CREATE FUNCTION pg_temp.bench(label text, connections jsonb, seq bigint, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; ms numeric; summary text;
BEGIN
  SELECT string_agg(format('%s %s', cnt, action), ', ') INTO summary
    FROM (SELECT action, count(*) cnt FROM syncular.realtime_fanout('p1', seq, connections) GROUP BY 1 ORDER BY 1) x;
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    PERFORM count(*) FROM syncular.realtime_fanout('p1', seq, connections);
  END LOOP;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / n;
  RETURN format('%-44s %8s ms/call  (%s)', label, round(ms, 2), summary);
END $$;

SELECT syncular.push('p1', 'admin', 'seed', '[{"clientCommitId": "c1", "operations": [
  {"table": "todos", "rowId": "t1", "op": "upsert", "row": {"id": "t1", "list_id": "shared", "title": "x"}}]}]') IS NOT NULL;
SELECT max_commit_seq AS seq FROM syncular.partitions WHERE partition = 'p1' \gset
SELECT pg_temp.register('shared') AS shared \gset
SELECT pg_temp.bench('1,000 connections, all receive the delta',
  (SELECT jsonb_agg(e || jsonb_build_object('cursor', :seq - 1)) FROM jsonb_array_elements(:'shared'::jsonb) e), :seq, 20);
SELECT pg_temp.register('own') AS own \gset
SELECT syncular.push('p1', 'admin', 'seed', '[{"clientCommitId": "c2", "operations": [
  {"table": "todos", "rowId": "t2", "op": "upsert", "row": {"id": "t2", "list_id": "list-7", "title": "y"}}]}]') IS NOT NULL;
SELECT max_commit_seq AS seq FROM syncular.partitions WHERE partition = 'p1' \gset
SELECT pg_temp.bench('1,000 connections, one receives the delta',
  (SELECT jsonb_agg(e || jsonb_build_object('cursor', :seq - 1)) FROM jsonb_array_elements(:'own'::jsonb) e), :seq, 50);
SELECT pg_temp.bench('1,000 connections, none matches',
  (SELECT jsonb_agg(e || jsonb_build_object('cursor', :seq - 2)) FROM jsonb_array_elements(:'own'::jsonb) e), :seq - 1, 50);
