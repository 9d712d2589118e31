-- rules_references: declared references (§6.11; push-and-pull.md §2.7; data-model-and-storage.md
-- §2.5; Appendix B.19), enforced once per commit after the operations, over the candidate
-- state: missing_parent; RESTRICT in both arrival orders; deleting a parent with its children
-- passes RESTRICT; CASCADE (recursive, through a non-materialized table, with tombstones and
-- row validators, attributed to the originating opIndex, no applied record of its own); SET
-- NULL moves only that column's version; the cascade cap (GUC); cascaded writes are authorized.
\set testdb syncular_t_rules_references
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "projects", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "name", "type": "string", "nullable": true}]},
  {"name": "tasks", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "project_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "references": [{"column": "project_id", "parentTable": "projects", "onDelete": "cascade"}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "task_id", "type": "string", "nullable": true},
     {"name": "body", "type": "string", "nullable": true}],
   "references": [{"column": "task_id", "parentTable": "tasks", "onDelete": "set null"}]},
  {"name": "tags", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "project_id", "type": "string", "nullable": false}],
   "references": [{"column": "project_id", "parentTable": "projects"}]},
  {"name": "comments", "primaryKey": "id", "scopes": ["ws:{ws}"], "materialize": false, "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "task_id", "type": "string", "nullable": false},
     {"name": "body", "type": "string", "nullable": true}],
   "references": [{"column": "task_id", "parentTable": "tasks", "onDelete": "cascade"}]},
  {"name": "owners", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "integer", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false}]},
  {"name": "pets", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "owner_id", "type": "integer", "nullable": true}],
   "references": [{"column": "owner_id", "parentTable": "owners", "onDelete": "set null"}]}]}'::jsonb) ->> 'action' AS schema_action;
SELECT t ->> 'name' AS tbl, t -> 'materialize' AS materialize, t -> 'references' AS refs
  FROM syncular.sync_settings s, jsonb_array_elements(s.compiled -> 'tables') t ORDER BY 1;
INSERT INTO public.grants VALUES ('u1', 'ws', 'w1'), ('admin', 'ws', '*');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
SHOW syncular.max_cascade_operations_per_commit;

-- the state of every row of the partition, one line per row
CREATE FUNCTION pg_temp.rows() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT format('%s %s v=%s cv=%s %s', tbl, id, v, coalesce(encode(cv, 'hex'), '-'), r)
    FROM (SELECT 'projects' tbl, _sync_row_id id, _sync_server_version v, _sync_column_versions cv,
                 syncular.decode_row('projects', _sync_payload) r FROM public.projects
          UNION ALL SELECT 'tasks', _sync_row_id, _sync_server_version, _sync_column_versions,
                 syncular.decode_row('tasks', _sync_payload) FROM public.tasks
          UNION ALL SELECT 'notes', _sync_row_id, _sync_server_version, _sync_column_versions,
                 syncular.decode_row('notes', _sync_payload) FROM public.notes
          UNION ALL SELECT 'tags', _sync_row_id, _sync_server_version, _sync_column_versions,
                 syncular.decode_row('tags', _sync_payload) FROM public.tags
          UNION ALL SELECT 'comments', _sync_row_id, _sync_server_version, _sync_column_versions,
                 syncular.decode_row('comments', _sync_payload) FROM public.comments) x
   ORDER BY tbl, id
$$;

-- missing parent: rejected with the details of §6.11; the row member is omitted when the
-- parent id is longer than 256 bytes
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('m-1', pg_temp.up('projects', '{"id": "p0", "ws": "w1", "name": "ok"}'),
                    pg_temp.up('tasks', '{"id": "k0", "ws": "w1", "project_id": "nope", "title": null}')),
  pg_temp.pc('m-2', pg_temp.up('tasks', jsonb_build_object('id', 'k0', 'ws', 'w1', 'project_id', repeat('x', 300), 'title', null)))));
SELECT * FROM pg_temp.rows();

-- parent and child in one commit, in either order, pass (the check runs over the candidate
-- state at the end of the commit)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-1', pg_temp.up('projects', '{"id": "p0", "ws": "w1", "name": "zero"}'),
                    pg_temp.up('projects', '{"id": "p1", "ws": "w1", "name": "one"}'),
                    pg_temp.up('tasks', '{"id": "k1", "ws": "w1", "project_id": "p1", "title": "a"}')),
  pg_temp.pc('c-2', pg_temp.up('tasks', '{"id": "k2", "ws": "w1", "project_id": "p2", "title": "b"}'),
                    pg_temp.up('projects', '{"id": "p2", "ws": "w1", "name": "two"}'),
                    pg_temp.up('tags', '{"id": "g1", "ws": "w1", "project_id": "p2"}'))));

-- RESTRICT, parent delete after the child: restricted_delete, nothing changes
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('r-1', pg_temp.up('projects', '{"id": "p1", "name": "renamed"}'), pg_temp.del('projects', 'p2'))));
SELECT pg_temp.row_state('projects', 'p1', 'p2') AS p2, pg_temp.row_state('projects', 'p1', 'p1') AS p1;
-- RESTRICT, child insert after the parent delete: missing_parent
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('r-2', pg_temp.up('projects', '{"id": "p6", "ws": "w1", "name": "six"}')),
  pg_temp.pc('r-3', pg_temp.del('projects', 'p6')),
  pg_temp.pc('r-4', pg_temp.up('tags', '{"id": "g6", "ws": "w1", "project_id": "p6"}'))));
-- a parent deleted and re-created in the same commit keeps its children
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('r-5', pg_temp.del('projects', 'p2'), pg_temp.up('projects', '{"id": "p2", "ws": "w1", "name": "two again"}', 0))));
SELECT pg_temp.row_state('tasks', 'p1', 'k2') AS k2, pg_temp.row_state('tags', 'p1', 'g1') AS g1;

-- CASCADE + SET NULL, recursively: p1 -> task k1 (cascade) -> note n1 (set null) and
-- comment c1 (cascade, a non-materialized table: found by decoding payloads); the note n2 of
-- another task is untouched.  A commit validator lists the evidence: the appended operations
-- follow the client operation and carry its opIndex (1)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-3', pg_temp.up('notes', '{"id": "n1", "ws": "w1", "task_id": "k1", "body": "note one"}'),
                    pg_temp.up('notes', '{"id": "n2", "ws": "w1", "task_id": "k2", "body": "note two"}'),
                    pg_temp.up('comments', '{"id": "c1", "ws": "w1", "task_id": "k1", "body": "hi"}'),
                    pg_temp.up('comments', '{"id": "c2", "ws": "w1", "task_id": "k2", "body": "yo"}'))));
CREATE FUNCTION public.list_ops(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'commit % evidence: %', client_commit_id,
    (SELECT string_agg(format('%s:%s %s/%s v%s->%s', o ->> 'opIndex', o ->> 'op', o ->> 'table', o ->> 'rowId',
                              coalesce(o ->> 'storedServerVersion', '-'), coalesce(o ->> 'nextServerVersion', '-')), ', ')
       FROM jsonb_array_elements(operations) o);
END
$$;
SELECT syncular.set_commit_validator('public.list_ops(jsonb, text, text, text, text)') IS NOT NULL AS registered;
SELECT pg_temp.row_state('notes', 'p1', 'n1') AS n1_before;
SET client_min_messages = notice;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-4', pg_temp.up('projects', '{"id": "p0", "name": "touched"}'), pg_temp.del('projects', 'p1'))));
SET client_min_messages = warning;
SELECT syncular.set_commit_validator(NULL) IS NOT NULL AS unregistered;
SELECT * FROM pg_temp.rows();
-- SET NULL moved only task_id's column version (ordinal 2 -> version 2): cv = 02 02
SELECT pg_temp.row_state('notes', 'p1', 'n1') AS n1_after;
-- the log: ordinary changes with the child's stored scopes; tombstones for every delete
SELECT c.idx, c.tbl, c.row_id, c.op, c.row_version, c.scopes,
       CASE WHEN c.payload IS NULL THEN NULL ELSE syncular.decode_row(c.tbl, c.payload) END AS payload
  FROM syncular.sync_changes c JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c-4' ORDER BY c.idx;
SELECT t.tbl, t.row_id FROM syncular.sync_tombstones t JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c-4' ORDER BY 1, 2;
SELECT pg_temp.stored('p1', 'A', 'c-4') AS stored_c4;

-- deleting a parent together with its RESTRICT child passes, parent first (its CASCADE task
-- k2 goes too, with k2's comment c2; k2's note n2 is set to NULL)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('r-6', pg_temp.del('projects', 'p2'), pg_temp.del('tags', 'g1'))));
SELECT * FROM pg_temp.rows();

-- the cascade cap: 3 tasks under p3; at cap 2 the delete is rejected (cascade_limit, at the
-- originating opIndex 1) and rolled back; at cap 3 it applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('l-1', pg_temp.up('projects', '{"id": "p3", "ws": "w1", "name": "three"}'),
                    pg_temp.up('tasks', '{"id": "k31", "ws": "w1", "project_id": "p3", "title": null}'),
                    pg_temp.up('tasks', '{"id": "k32", "ws": "w1", "project_id": "p3", "title": null}'),
                    pg_temp.up('tasks', '{"id": "k33", "ws": "w1", "project_id": "p3", "title": null}'))));
SET syncular.max_cascade_operations_per_commit = 2;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('l-2', pg_temp.up('projects', '{"id": "p0", "name": "again"}'), pg_temp.del('projects', 'p3'))));
SELECT count(*) AS tasks_left FROM public.tasks WHERE project_id = 'p3';
SET syncular.max_cascade_operations_per_commit = 3;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('l-3', pg_temp.del('projects', 'p3'))));
SELECT count(*) AS tasks_left FROM public.tasks WHERE project_id = 'p3';
RESET syncular.max_cascade_operations_per_commit;

-- cascaded operations run row validators; a rejection is attributed to the originating op
CREATE FUNCTION public.keep_tasks(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                  actor_id text, partition text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF op = 'delete' AND stored_row ->> 'title' = 'keep' THEN
    RAISE EXCEPTION 'kept' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.task_kept", "message": "this task cannot be deleted"}';
  END IF;
END
$$;
SELECT syncular.set_row_validator('tasks', 'public.keep_tasks(text, text, text, jsonb, jsonb, text, text)') IS NOT NULL AS registered;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('v-1', pg_temp.up('projects', '{"id": "p4", "ws": "w1", "name": "four"}'),
                    pg_temp.up('tasks', '{"id": "k4", "ws": "w1", "project_id": "p4", "title": "keep"}')),
  pg_temp.pc('v-2', pg_temp.up('projects', '{"id": "p0", "name": "x"}'), pg_temp.del('projects', 'p4'))));
SELECT pg_temp.row_state('projects', 'p1', 'p4') AS p4;

-- cascaded writes are authorized on the child's stored scopes: admin puts a task of
-- workspace w2 under u1's project p5; u1 may not delete it through the cascade
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('f-1', pg_temp.up('projects', '{"id": "p5", "ws": "w1", "name": "five"}'))));
SELECT count(*) FROM pg_temp.acquire('p1', 'admin', 'Z');
SELECT * FROM pg_temp.round('p1', 'admin', 'Z', jsonb_build_array(
  pg_temp.pc('z-1', pg_temp.up('tasks', '{"id": "k5", "ws": "w2", "project_id": "p5", "title": null}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('f-2', pg_temp.del('projects', 'p5'))));
SELECT pg_temp.row_state('projects', 'p1', 'p5') AS p5, pg_temp.row_state('tasks', 'p1', 'k5') AS k5;

-- an integer reference (the projection compares in int8): missing parent 99, then SET NULL
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('i-1', pg_temp.up('owners', '{"id": 7, "ws": "w1"}'),
                    pg_temp.up('pets', '{"id": "rex", "ws": "w1", "owner_id": 7}'),
                    pg_temp.up('pets', '{"id": "tom", "ws": "w1", "owner_id": 99}')),
  pg_temp.pc('i-2', pg_temp.up('owners', '{"id": 7, "ws": "w1"}'),
                    pg_temp.up('pets', '{"id": "rex", "ws": "w1", "owner_id": 7}')),
  pg_temp.pc('i-3', pg_temp.del('owners', '7'))));
SELECT pg_temp.row_state('pets', 'p1', 'rex') AS rex;

\i sql/rules_done.psql
