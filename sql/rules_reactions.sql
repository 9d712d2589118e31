-- rules_reactions: the §6.9 reaction planner in the push pipeline (push-and-pull.md §2.8;
-- docs/hooks.md "Engine calling convention" 4-5).  It runs for a new, validated commit after
-- commit_seq is allocated, sees the commit's evidence (and its rows), and its records are
-- enqueued by syncular._enqueue_reactions in the same transaction with the commit's seq and
-- created_at_ms.  Rejected commits and replays enqueue nothing; NULL / [] enqueue nothing; a
-- planner error or an invalid record is a server failure: sync.internal_error, nothing stored.
\set testdb syncular_t_rules_reactions
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": false},
     {"name": "done", "type": "boolean", "nullable": false}]}]}'::jsonb) ->> 'action' AS schema_action;
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l1');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');

-- the planner of docs/hooks.md (an email when a todo becomes done), plus test switches:
-- title 'explode' raises, title 'invalid' returns a record without a type, title 'none'
-- returns SQL NULL; it also counts the todos it can read (the commit's own rows included)
CREATE FUNCTION public.plan_reactions(operations jsonb, client_id text, client_commit_id text,
                                      actor_id text, partition text)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  titles text[] := ARRAY(SELECT o -> 'row' ->> 'title' FROM jsonb_array_elements(operations) o);
BEGIN
  IF 'explode' = ANY (titles) THEN
    RAISE EXCEPTION 'planner exploded';
  ELSIF 'invalid' = ANY (titles) THEN
    RETURN '[{"key": "k", "version": 1, "payload": {}}]';
  ELSIF 'none' = ANY (titles) THEN
    RETURN NULL;
  END IF;
  RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object(
           'key', 'todo-done:' || (o ->> 'rowId') || ':' || (o ->> 'opIndex'),
           'type', 'email.todo_done',
           'version', 1,
           'payload', jsonb_build_object('to', actor_id, 'todoId', o ->> 'rowId',
                                         'title', o -> 'row' ->> 'title',
                                         'visibleTodos', (SELECT count(*) FROM public.todos t
                                                           WHERE t._sync_partition = plan_reactions.partition)),
           'maxAttempts', 5) ORDER BY (o ->> 'opIndex')::int), '[]'::jsonb)
    FROM jsonb_array_elements(operations) o
   WHERE o ->> 'table' = 'todos' AND o ->> 'op' = 'upsert'
     AND (o -> 'row' ->> 'done')::boolean
     AND NOT coalesce((o -> 'stored' ->> 'done')::boolean, false));
END
$$;
SELECT syncular.set_reaction_planner('public.plan_reactions(jsonb, text, text, text, text)') IS NOT NULL AS registered;

CREATE FUNCTION pg_temp.reactions() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT format('%s %s v%s seq=%s commit=%s/%s status=%s attempts=%s/%s created=commit:%s available=created:%s payload=%s',
                r.idempotency_key, r.type, r.version, r.source_commit_seq, r.source_client_id,
                r.source_client_commit_id, r.status, r.attempts, r.max_attempts,
                r.created_at_ms = c.created_at_ms, r.available_at_ms = r.created_at_ms, r.payload)
    FROM syncular.sync_reactions r
    LEFT JOIN syncular.sync_commits c ON c.partition = r.partition AND c.commit_seq = r.source_commit_seq
   ORDER BY r.source_commit_seq, r.idempotency_key
$$;

-- an applied commit: t1 inserted done and t2 not done -> one reaction, for t1
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": true}'),
                    pg_temp.up('todos', '{"id": "t2", "list_id": "l1", "title": "eggs", "done": false}'))));
SELECT * FROM pg_temp.reactions();

-- replay of a-1: cached, the planner does not run, nothing more is enqueued
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": true}'),
                    pg_temp.up('todos', '{"id": "t2", "list_id": "l1", "title": "eggs", "done": false}'))));
SELECT count(*) AS reactions FROM syncular.sync_reactions;

-- a rejected commit (a version conflict on its second op) enqueues nothing although its
-- first op would plan a reaction
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t2", "done": true}'),
                    pg_temp.up('todos', '{"id": "t1", "title": "oat milk"}', 0))));
SELECT count(*) AS reactions FROM syncular.sync_reactions;

-- t2 becomes done in a later commit: a second reaction, keyed by that commit
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t2", "done": true}', 1))));
SELECT * FROM pg_temp.reactions();

-- a planner returning NULL enqueues nothing; the commit applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t3", "list_id": "l1", "title": "none", "done": true}'))));
SELECT count(*) AS reactions FROM syncular.sync_reactions;

-- a planner error, then an invalid record: the round fails with sync.internal_error; no row,
-- no commit, no idempotency record, no reaction
SELECT max_commit_seq AS seq_before FROM syncular.partitions WHERE partition = 'p1' \gset
SELECT pg_temp.try($$SELECT count(*) FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t4", "list_id": "l1", "title": "explode", "done": true}'))))$$) AS planner_error;
SELECT pg_temp.try($$SELECT count(*) FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-6', pg_temp.up('todos', '{"id": "t4", "list_id": "l1", "title": "invalid", "done": true}'))))$$) AS invalid_record;
SELECT pg_temp.row_state('todos', 'p1', 't4') AS t4,
       (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1') - :seq_before AS new_seqs,
       (SELECT count(*) FROM syncular.sync_commits WHERE client_commit_id IN ('a-5', 'a-6')) AS commits,
       (SELECT count(*) FROM syncular.push_results WHERE client_commit_id IN ('a-5', 'a-6')) AS results,
       (SELECT count(*) FROM syncular.sync_reactions) AS reactions;
-- the client retries a-5 (it was never answered); once the planner is fixed it applies
SELECT syncular.set_reaction_planner(NULL) IS NOT NULL AS planner_off;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t4", "list_id": "l1", "title": "explode", "done": true}'))));
SELECT count(*) AS reactions FROM syncular.sync_reactions;

\i sql/rules_done.psql
