-- round_keyed_reads: a round reads its keyed rows (serve gate, registry, client record, stored
-- row, tombstone) by direct primary-key probes of relations whose OIDs the backend caches, and
-- calls a SQL-language scope resolver through a statement it keeps for the session.  Both must
-- stay current in a long-lived session: a resolver replaced or re-registered is called as it now
-- is, a VOLATILE one sees the transaction's own writes, and an extension dropped and created
-- again is read through its new relations.  Works in a private database.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_round_keyed;
CREATE DATABASE syncular_t_round_keyed;
\c syncular_t_round_keyed
SET client_min_messages = warning;
CREATE EXTENSION syncular;

CREATE FUNCTION pg_temp.register() RETURNS text LANGUAGE sql AS $$
  SELECT syncular.ensure_schema('{"version": 1, "tables": [
    {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
      {"name": "id", "type": "string", "nullable": false},
      {"name": "list_id", "type": "string", "nullable": false},
      {"name": "title", "type": "string", "nullable": true}]}]}') ->> 'action'
$$;
SELECT pg_temp.register() AS action;

-- a write of row t1 in list l1 (a fresh commit id each time), then a pull of list l1; their
-- outcomes on one line
CREATE SEQUENCE public.commit_no;
CREATE FUNCTION pg_temp.try_round(actor text, title text DEFAULT 'x') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  p jsonb := syncular.push('p1', actor, 'c-' || actor, jsonb_build_array(jsonb_build_object(
               'clientCommitId', 'w' || nextval('public.commit_no'),
               'operations', jsonb_build_array(jsonb_build_object('table', 'todos',
                 'row', jsonb_build_object('id', 't1', 'list_id', 'l1', 'title', title))))));
  q jsonb := syncular.pull('p1', actor, 'c-' || actor, '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}}]');
BEGIN
  RETURN format('push: %s %s | pull: %s %s', p -> 0 ->> 'status', p -> 0 -> 'results' -> 0 ->> 'code',
                q -> 0 ->> 'status', q -> 0 ->> 'reasonCode');
END $$;

-- an inlinable SQL resolver (a single SELECT)
CREATE FUNCTION public.resolve_sql(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve_sql(text,text,text)');
SELECT pg_temp.try_round('u1');
-- replaced in this session: the next round calls the new body (the kept statement is re-planned)
CREATE OR REPLACE FUNCTION public.resolve_sql(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l2"]}'::jsonb $$;
SELECT pg_temp.try_round('u1');
-- another SQL resolver registered: its own statement
CREATE FUNCTION public.resolve_sql2(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT jsonb_build_object('list_id', jsonb_build_array('l1', actor)) $$;
SELECT syncular.set_scope_resolver('public.resolve_sql2(text,text,text)');
SELECT pg_temp.try_round('u1');
-- a VOLATILE SQL resolver reading a table sees what the round's transaction wrote before it
CREATE TABLE public.grants (actor text, val text);
CREATE FUNCTION public.resolve_table(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql VOLATILE AS $$
  SELECT jsonb_build_object('list_id', coalesce((SELECT jsonb_agg(g.val) FROM public.grants g
                                                  WHERE g.actor = resolve_table.actor), '[]'))
$$;
SELECT syncular.set_scope_resolver('public.resolve_table(text,text,text)');
BEGIN;
SELECT pg_temp.try_round('u1');
INSERT INTO public.grants VALUES ('u1', 'l1');
SELECT pg_temp.try_round('u1');
COMMIT;
-- the stored row and its tombstone read by key: after a delete, an upsert of the row without a
-- version is answered from the tombstone (sync.row_deleted, wire 3) and writes nothing
SELECT syncular.push('p1', 'u1', 'c-u1', '[{"clientCommitId": "d1", "operations": [
  {"table": "todos", "op": "delete", "rowId": "t1"}]}]') -> 0 ->> 'status' AS deleted;
SELECT pg_temp.try_round('u1', 'again');
SELECT title FROM public.todos;

-- the extension dropped and created again in this session: the relations cached by OID are
-- looked up again (a stale OID would fail to open)
DROP EXTENSION syncular CASCADE;
DROP TABLE IF EXISTS public.todos;
CREATE EXTENSION syncular;
SELECT pg_temp.register() AS action;
SELECT syncular.set_scope_resolver('public.resolve_sql2(text,text,text)');
SELECT pg_temp.try_round('u1', 'new');
SELECT log_epoch IS NOT NULL AS registered FROM syncular.sync_partition_registry WHERE partition = 'p1';

\c :orig_db
DROP DATABASE syncular_t_round_keyed;
