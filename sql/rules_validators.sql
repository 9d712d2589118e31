-- rules_validators: §6.7 row validators and the §6.8 whole-commit validator inside the push
-- transaction (push-and-pull.md §2.7; barrier-rfc0007.md §8; docs/hooks.md).  Off is
-- unchanged; a SY001 rejection rolls the commit back with the host code, message and details
-- (PUSH_RESULT_DETAILS, normalized, replayed byte for byte); acceptance applies and converges;
-- an update validator sees the stored row; a validator's SQL sees an earlier sibling's staged
-- row (even a STABLE one); the commit validator gets the ordered evidence and can require a
-- sibling; an unavailable opIndex, a reserved code, a malformed DETAIL, a plain error all give
-- sync.constraint_violation with a fixed message; details that break the codec's rules are
-- dropped; a serialization failure is a server failure (nothing persisted).
\set testdb syncular_t_rules_validators
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "lists", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "name", "type": "string", "nullable": false}]},
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": false},
     {"name": "done", "type": "boolean", "nullable": true},
     {"name": "raw", "type": "bytes", "nullable": true}]}]}'::jsonb) ->> 'action' AS schema_action;
INSERT INTO public.grants VALUES ('u1', 'list_id', '*'), ('u2', 'list_id', '*');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
\set long_title '"this title is much longer than forty characters, really"'

-- off: no validator registered, a long title applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', ('{"id": "t0", "list_id": "L1", "title": ' || :'long_title' || ', "done": false, "raw": null}')::jsonb))));

-- the row validator: NOTICEs what it sees; titles of at most 40 characters; the list of a todo
-- must exist (an authoritative read of the synced table, STABLE so that it needs the engine's
-- fresh snapshot to see staged rows); test hooks: title 'reserved' raises a reserved code,
-- 'plain' a plain exception, 'zero' a division by zero, 'badjson' an unparsable DETAIL,
-- 'weird' details that break the PUSH_RESULT_DETAILS rules, 'serial' a serialization failure
CREATE FUNCTION public.validate_todo(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                     actor_id text, partition text)
RETURNS void LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t text := new_row ->> 'title';
BEGIN
  RAISE NOTICE 'validate_todo % % % new=% stored=% actor=% partition=%', op, tbl, row_id, new_row,
    stored_row, actor_id, partition;
  IF op = 'delete' THEN
    RETURN;
  END IF;
  IF char_length(t) > 40 THEN
    RAISE EXCEPTION 'todo title too long' USING ERRCODE = 'SY001',
      DETAIL = json_build_object('code', 'app.title_too_long',
                                 'message', 'a todo title has at most 40 characters',
                                 'details', json_build_object('requiredAction', 'shorten_title',
                                                              'reason', 'title_too_long',
                                                              'fieldPaths', json_build_array('title')),
                                 'opIndex', 99)::text;
  END IF;
  CASE t
  WHEN 'reserved' THEN
    RAISE EXCEPTION 'reserved' USING ERRCODE = 'SY001', DETAIL = '{"code": "sync.forbidden"}';
  WHEN 'plain' THEN
    RAISE EXCEPTION 'secret database text';
  WHEN 'zero' THEN
    PERFORM 1 / 0;
  WHEN 'badjson' THEN
    RAISE EXCEPTION 'bad' USING ERRCODE = 'SY001', DETAIL = '{"code": ';
  WHEN 'weird' THEN
    RAISE EXCEPTION 'weird details' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.weird", "details": {"foo": 1}}';
  WHEN 'serial' THEN
    RAISE EXCEPTION 'could not serialize' USING ERRCODE = '40001';
  ELSE
  END CASE;
  IF NOT EXISTS (SELECT 1 FROM public.lists l
                  WHERE l._sync_partition = validate_todo.partition AND l.id = new_row ->> 'list_id') THEN
    RAISE EXCEPTION 'no list' USING ERRCODE = 'SY001',
      DETAIL = json_build_object('code', 'app.no_list', 'details',
                                 json_build_object('fieldPaths', json_build_array('list_id'),
                                                   'references', json_build_object('list', new_row ->> 'list_id')))::text;
  END IF;
END
$$;
SELECT syncular.set_row_validator('todos', 'public.validate_todo(text, text, text, jsonb, jsonb, text, text)') IS NOT NULL AS registered;

-- the list L1 exists from here on (the validator on todos does not run for lists)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('lists', '{"id": "L1", "list_id": "L1", "name": "home"}'))));

-- reject: op 0 valid, op 1 too long -> rejected at opIndex 1 (the DETAIL's opIndex 99 is
-- ignored for a row validator) with the host code, message and normalized details; op 0 is
-- rolled back; the insert validator sees stored NULL
SET client_min_messages = notice;
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t1", "list_id": "L1", "title": "milk", "done": false, "raw": "AAE="}'),
                    pg_temp.up('todos', ('{"id": "t2", "list_id": "L1", "title": ' || :'long_title' || ', "done": false, "raw": null}')::jsonb)))) AS resp_a3 \gset
SET client_min_messages = warning;
SELECT * FROM pg_temp.show('p1', :'resp_a3');
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1, pg_temp.row_state('todos', 'p1', 't2') AS t2,
       (SELECT count(*) FROM syncular.sync_commits) AS commits;
SELECT pg_temp.stored('p1', 'A', 'a-3') AS stored_a3;
-- on the wire: the codec's normalized text (member order fieldPaths, reason, requiredAction)
SELECT position('{"fieldPaths":["title"],"reason":"title_too_long","requiredAction":"shorten_title"}'::bytea
                IN :'resp_a3'::bytea) > 0 AS normalized_details_on_wire;
-- the replay: the same bytes, the validator does not run again (no NOTICE)
SET client_min_messages = notice;
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t1", "list_id": "L1", "title": "milk", "done": false, "raw": "AAE="}'),
                    pg_temp.up('todos', ('{"id": "t2", "list_id": "L1", "title": ' || :'long_title' || ', "done": false, "raw": null}')::jsonb)))) = :'resp_a3'::bytea
  AS replay_byte_identical;
SET client_min_messages = warning;

-- accept: the same commit with a short title applies; bytes show as base64
SET client_min_messages = notice;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t1", "list_id": "L1", "title": "milk", "done": false, "raw": "AAE="}'),
                    pg_temp.up('todos', '{"id": "t2", "list_id": "L1", "title": "bread", "done": false, "raw": null}'))));
-- an update validator sees the merged row and the stored row; a delete sees new NULL
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t1", "done": true}', 1), pg_temp.del('todos', 't2'))));
SET client_min_messages = warning;
-- converges: client B (another actor) bootstraps the list and sees the server state
SELECT count(*) FROM pg_temp.acquire('p1', 'u2', 'B');
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["L1"]}')));
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1_server;

-- staged reads: a new list and its todo in one commit apply (the STABLE validator sees the
-- list written by op 0); a todo of a list that does not exist is rejected with app.no_list
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-6', pg_temp.up('lists', '{"id": "L2", "list_id": "L2", "name": "work"}'),
                    pg_temp.up('todos', '{"id": "t3", "list_id": "L2", "title": "report", "done": false, "raw": null}')),
  pg_temp.pc('a-7', pg_temp.up('todos', '{"id": "t4", "list_id": "L3", "title": "orphan", "done": false, "raw": null}'))));

-- every other failure is sync.constraint_violation "write validator failed", retryable false,
-- no details, no database text; the commit rolls back
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-8', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "reserved", "done": false, "raw": null}')),
  pg_temp.pc('a-9', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "plain", "done": false, "raw": null}')),
  pg_temp.pc('a-10', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "zero", "done": false, "raw": null}')),
  pg_temp.pc('a-11', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "badjson", "done": false, "raw": null}'))));
SELECT pg_temp.stored('p1', 'A', 'a-9')::text !~ 'secret' AS no_database_text,
       pg_temp.row_state('todos', 'p1', 't5') AS t5;
-- details that break the PUSH_RESULT_DETAILS rules are dropped; code and message stay
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-12', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "weird", "done": false, "raw": null}'))));
SELECT pg_temp.stored('p1', 'A', 'a-12') AS stored_a12;
-- a serialization failure is not a fact about the commit: the round fails, nothing is stored
SELECT pg_temp.try($$SELECT count(*) FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-13', pg_temp.up('todos', '{"id": "t5", "list_id": "L1", "title": "serial", "done": false, "raw": null}'))))$$) AS serial;
SELECT pg_temp.stored('p1', 'A', 'a-13') AS stored_a13, pg_temp.row_state('todos', 'p1', 't5') AS t5;

-- the whole-commit validator: NOTICEs the evidence (client ops in order, absent-row deletes
-- included); a new list needs a todo in the same commit (it reads the synced table, so it sees
-- the staged todos); title 'index7' names opIndex 7; title 'boom' raises a plain error;
-- title 'first' rejects without opIndex (attributed to op 0)
CREATE FUNCTION public.validate_commit(operations jsonb, client_id text, client_commit_id text,
                                       actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  o jsonb;
BEGIN
  RAISE NOTICE 'validate_commit % % % % %', client_id, client_commit_id, actor_id, partition, operations;
  FOR o IN SELECT value FROM jsonb_array_elements(operations) LOOP
    IF o ->> 'table' = 'lists' AND o ->> 'op' = 'upsert'
       AND jsonb_typeof(o -> 'stored') IS DISTINCT FROM 'object'
       AND NOT EXISTS (SELECT 1 FROM public.todos t
                        WHERE t._sync_partition = validate_commit.partition AND t.list_id = o ->> 'rowId') THEN
      RAISE EXCEPTION 'list without todo' USING ERRCODE = 'SY001',
        DETAIL = json_build_object('code', 'app.list_needs_todo',
                                   'message', 'a new list must be pushed with at least one todo',
                                   'details', json_build_object('requiredAction', 'add_todo'),
                                   'opIndex', (o ->> 'opIndex')::int)::text;
    END IF;
    CASE o -> 'row' ->> 'title'
    WHEN 'index7' THEN
      RAISE EXCEPTION 'x' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.x", "opIndex": 7}';
    WHEN 'boom' THEN
      RAISE EXCEPTION 'secret commit validator text';
    WHEN 'first' THEN
      RAISE EXCEPTION 'first op' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.first"}';
    ELSE
    END CASE;
  END LOOP;
END
$$;
SELECT syncular.set_commit_validator('public.validate_commit(jsonb, text, text, text, text)') IS NOT NULL AS registered;
SELECT syncular.set_row_validator('todos', NULL) IS NOT NULL AS row_validator_off;

SET client_min_messages = notice;
-- a list alone is rejected at its opIndex (1), the todo of op 0 rolls back
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t6", "list_id": "L1", "title": "tea", "done": false, "raw": null}'),
                    pg_temp.up('lists', '{"id": "L4", "list_id": "L4", "name": "empty"}'))));
-- with its todo (pushed after it) it applies; an absent-row delete and an update are evidence
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-2', pg_temp.up('lists', '{"id": "L4", "list_id": "L4", "name": "full"}'),
                    pg_temp.up('todos', '{"id": "t7", "list_id": "L4", "title": "coffee", "done": false, "raw": null}'),
                    pg_temp.del('todos', 'nope'),
                    pg_temp.up('todos', '{"id": "t1", "title": "oat milk"}'))));
SET client_min_messages = warning;
SELECT pg_temp.row_state('lists', 'p1', 'L4') AS l4, pg_temp.row_state('todos', 'p1', 't6') AS t6;
-- out-of-range opIndex, a plain error, a rejection without opIndex
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-3', pg_temp.up('todos', '{"id": "t8", "list_id": "L1", "title": "index7", "done": false, "raw": null}')),
  pg_temp.pc('b-4', pg_temp.up('todos', '{"id": "t8", "list_id": "L1", "title": "ok", "done": false, "raw": null}'),
                    pg_temp.up('todos', '{"id": "t9", "list_id": "L1", "title": "boom", "done": false, "raw": null}')),
  pg_temp.pc('b-5', pg_temp.up('todos', '{"id": "t8", "list_id": "L1", "title": "ok", "done": false, "raw": null}'),
                    pg_temp.up('todos', '{"id": "t9", "list_id": "L1", "title": "first", "done": false, "raw": null}'))));
SELECT pg_temp.stored('p1', 'A', 'b-4')::text !~ 'secret' AS no_database_text,
       pg_temp.row_state('todos', 'p1', 't8') AS t8;
-- details of a commit-validator rejection replay byte for byte
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-6', pg_temp.up('lists', '{"id": "L5", "list_id": "L5", "name": "x"}')))) AS resp_b6 \gset
SELECT * FROM pg_temp.show('p1', :'resp_b6');
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-6', pg_temp.up('lists', '{"id": "L5", "list_id": "L5", "name": "x"}')))) = :'resp_b6'::bytea AS replay_byte_identical;
-- unregistered: the same commit applies
SELECT syncular.set_commit_validator(NULL) IS NOT NULL AS commit_validator_off;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('b-7', pg_temp.up('lists', '{"id": "L5", "list_id": "L5", "name": "x"}'))));
SELECT commit_seq, client_commit_id FROM syncular.sync_commits ORDER BY commit_seq;

\i sql/rules_done.psql
