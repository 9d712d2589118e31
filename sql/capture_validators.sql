-- capture_validators: syncular.capture_validators runs a table's row validator on the rows
-- ordinary SQL writes (src/capture_row.c, src/capture_log.c, src/hooks.c).  Off (the default):
-- a server write is trusted and the validator is not called.  On: INSERT, UPDATE, COPY, MERGE,
-- DELETE and TRUNCATE call it per row with the arguments a push gives it (op, table, rowId, the
-- row, the stored row, actor, partition); its error is the statement's (SQLSTATE, message,
-- DETAIL, with a CONTEXT naming the table and rowId) and nothing of the statement is logged; a
-- table without a validator is unaffected; only a superuser can switch it.
\set testdb syncular_t_capture_validators
\i sql/capture_helpers.psql
SET syncular.partition = 'p1';

-- the validator: records its arguments, refuses the title 'forbidden' and the delete of 'keep'
CREATE TABLE public.vcalls (n serial, op text, tbl text, row_id text, title text, stored_title text,
                            actor text, part text);
CREATE FUNCTION public.validate_todo(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                     actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO public.vcalls (op, tbl, row_id, title, stored_title, actor, part)
    VALUES (op, tbl, row_id, new_row ->> 'title', stored_row ->> 'title', actor_id, partition);
  IF op = 'upsert' AND new_row ->> 'title' = 'forbidden' THEN
    RAISE EXCEPTION 'title not allowed' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.forbidden_title", "message": "not this title", "details": {"rowId": "' || row_id || '"}}';
  END IF;
  IF op = 'delete' AND stored_row ->> 'title' = 'keep' THEN
    RAISE EXCEPTION 'this row stays';
  END IF;
END $$;
SELECT syncular.set_row_validator('todos', 'public.validate_todo(text,text,text,jsonb,jsonb,text,text)');
CREATE FUNCTION pg_temp.logged() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM syncular.sync_commits) || ' commits, '
         || (SELECT count(*) FROM syncular.changes) || ' changes' $$;

-- off (the default): trusted, the validator is not called
SHOW syncular.capture_validators;
INSERT INTO app.todos (id, list_id, title) VALUES ('a', 'l1', 'forbidden');
SELECT count(*) AS validator_calls FROM public.vcalls;
DELETE FROM app.todos;
SELECT pg_temp.logged() AS log;

-- on: every row written is validated, as a push's would be
SET syncular.capture_validators = on;
INSERT INTO app.todos (id, list_id, title) VALUES ('a', 'l1', 'first'), ('b', 'l1', 'keep');
UPDATE app.todos SET title = 'second' WHERE id = 'a';
SELECT n, op, tbl, row_id, title, stored_title, actor, part FROM public.vcalls ORDER BY n;
SELECT pg_temp.logged() AS log;

-- a refused row fails the statement with the validator's error; nothing of it is logged
\set VERBOSITY default
INSERT INTO app.todos (id, list_id, title) VALUES ('c', 'l1', 'fine'), ('d', 'l1', 'forbidden');
UPDATE app.todos SET title = 'forbidden' WHERE id = 'a';
DELETE FROM app.todos;
\set VERBOSITY terse
SELECT id, title FROM app.todos ORDER BY id;
SELECT pg_temp.logged() AS log;
TRUNCATE app.todos;
COPY app.todos (id, list_id, title) FROM STDIN;
e	l1	ok
f	l1	forbidden
\.
MERGE INTO app.todos t USING (VALUES ('a', 'forbidden')) v(id, title) ON t.id = v.id
  WHEN MATCHED THEN UPDATE SET title = v.title;
SELECT id, title FROM app.todos ORDER BY id;
SELECT pg_temp.logged() AS log;

-- rows the validator accepts go through every statement kind
TRUNCATE public.vcalls;
COPY app.todos (id, list_id, title) FROM STDIN;
e	l1	copied
\.
MERGE INTO app.todos t USING (VALUES ('a', 'merged'), ('g', 'new')) v(id, title) ON t.id = v.id
  WHEN MATCHED THEN UPDATE SET title = v.title
  WHEN NOT MATCHED THEN INSERT (id, list_id, title) VALUES (v.id, 'l1', v.title);
DELETE FROM app.todos WHERE id = 'e';
SELECT n, op, row_id, title, stored_title FROM public.vcalls ORDER BY n;
SELECT id, title FROM app.todos ORDER BY id;
SELECT pg_temp.logged() AS log;

-- the actor is the commit's (syncular.actor_id, else the role); a table without a validator
-- (notes) is written as before
TRUNCATE public.vcalls;
SET syncular.actor_id = 'backend-job';
UPDATE app.todos SET title = 'by the job' WHERE id = 'g';
RESET syncular.actor_id;
INSERT INTO app.notes (id, list_id) VALUES (1, 'l1');
SELECT op, row_id, actor, part FROM public.vcalls;
SELECT actor_id, client_id FROM syncular.sync_commits ORDER BY commit_seq DESC LIMIT 2;

-- a push is validated as always (the setting only concerns SQL writes)
SELECT r ->> 'status' AS status, r -> 'results' -> 0 ->> 'code' AS code
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "k1", "operations": [
    {"table": "todos", "op": "upsert", "row": {"id": "h", "list_id": "l1", "title": "forbidden",
     "done": false, "n": 1, "meta": null}}]}]')) r;

-- only a superuser (or a role granted SET on it) switches it
CREATE ROLE syncular_validators_role;
SET ROLE syncular_validators_role;
SET syncular.capture_validators = off;
RESET ROLE;
DROP ROLE syncular_validators_role;
\i sql/capture_done.psql
