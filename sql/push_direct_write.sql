-- push_direct_write: a pushed write of a row of a table whose only triggers are the capture
-- triggers is made without a statement (src/storage_rowdirect.c): the update of a stored row
-- logs no tuple lock (the executor locks the old tuple before any BEFORE UPDATE row trigger, the
-- capture's included), a new row no speculative-insertion confirm, and the rows, their index
-- entries and row-scope entries are those the statements wrote.  A table with a trigger of the
-- app is written by the upsert statement, which fires it.  The WAL is read with pg_walinspect,
-- by relation.  Works in a private database.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_direct_write;
CREATE DATABASE syncular_t_direct_write;
\c syncular_t_direct_write
SET client_min_messages = warning;
CREATE EXTENSION syncular;
CREATE EXTENSION pg_walinspect;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "n", "type": "integer", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]},
  {"name": "tasks", "primaryKey": "id", "scopes": ["list:{list_id}", "owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false}]}]}') ->> 'action' AS action;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1", "l2"], "owner_id": ["o1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
-- an index of the app on a column
CREATE INDEX todos_n ON public.todos (n);
-- a trigger of the app on notes
CREATE TABLE public.audit (k serial, what text);
CREATE FUNCTION public.audit_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.audit (what) VALUES (TG_OP || ' ' || NEW.id || ' ' || coalesce(NEW.body, '-'));
  RETURN NEW;
END $$;
CREATE TRIGGER audit_note AFTER INSERT OR UPDATE ON public.notes
  FOR EACH ROW EXECUTE FUNCTION public.audit_note();

-- push(tbl, row, commit id): a commit of one upsert, its status; wal(tbl, since): the heap
-- records logged since on the synced table and on sync_row_scopes (read after the push's
-- transaction committed)
CREATE FUNCTION pg_temp.push(tbl text, r jsonb, id text, base bigint DEFAULT NULL) RETURNS text
LANGUAGE sql AS $$
  SELECT syncular.push('p1', 'u1', 'c1', jsonb_build_array(jsonb_build_object(
           'clientCommitId', id, 'operations', jsonb_build_array(
             jsonb_build_object('table', tbl, 'row', r)
             || CASE WHEN base IS NULL THEN '{}' ELSE jsonb_build_object('baseVersion', base) END)))) -> 0 ->> 'status'
$$;
-- ('-' also when nothing at all was written since: pg_walinspect refuses a start past the end)
CREATE FUNCTION pg_temp.wal_of(rel regclass, since pg_lsn) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN since >= pg_current_wal_flush_lsn() THEN '-' ELSE
    (SELECT coalesce(string_agg(record_type, ', ' ORDER BY start_lsn), '-')
       FROM pg_get_wal_records_info_till_end_of_wal(since)
      WHERE resource_manager = 'Heap'
        AND block_ref ~ ('rel \d+/\d+/' || pg_relation_filenode(rel) || ' ')) END
$$;
CREATE FUNCTION pg_temp.wal(tbl text, since pg_lsn) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s: %s | sync_row_scopes: %s', tbl, pg_temp.wal_of(tbl::regclass, since),
                pg_temp.wal_of('syncular.sync_row_scopes', since))
$$;
CREATE FUNCTION pg_temp.rows() RETURNS TABLE (id text, list_id text, title text, n bigint,
  ver bigint, scopes jsonb, payload_matches boolean) LANGUAGE sql AS $$
  SELECT id, list_id, title, n, _sync_server_version, _sync_scopes,
         syncular.decode_row('todos', _sync_payload) = jsonb_build_object('id', id,
           'list_id', list_id, 'title', title, 'n', n)
    FROM public.todos ORDER BY id
$$;

-- a new row: a plain insert (no HEAP_CONFIRM), its row-scope entry; then updates: no LOCK
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "a", "n": 5}', 'c1');
SELECT pg_temp.wal('todos', :'l0');
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "b", "n": 5}', 'c2');
SELECT pg_temp.wal('todos', :'l0');
SELECT * FROM pg_temp.rows();
-- the indexed column changes: not a HOT update; the app's index finds the new version only
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "c", "n": 7}', 'c3');
SELECT pg_temp.wal('todos', :'l0');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM public.todos WHERE n = 7;
SELECT id, title FROM public.todos WHERE n = 7;
SELECT id, title FROM public.todos WHERE n = 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- a second row; deleted (the delete statement takes its row-scope entry) and pushed again in
-- another list (baseVersion 0 recreates it): a new row once more, its tombstone cleared
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t2", "list_id": "l1", "title": "d", "n": null}', 'c4');
SELECT pg_temp.wal('todos', :'l0');
SELECT syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "c5", "operations": [
  {"table": "todos", "op": "delete", "rowId": "t2"}]}]') -> 0 ->> 'status' AS deleted;
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t2", "list_id": "l2", "title": "e", "n": 1}', 'c5b', 0);
SELECT pg_temp.wal('todos', :'l0');
SELECT count(*) AS tombstones FROM syncular.sync_tombstones;
SELECT * FROM pg_temp.rows();
SELECT partition, tbl, var, value, row_id FROM syncular.sync_row_scopes ORDER BY row_id, value;
-- the log holds every commit, each with its change, as before
SELECT commit_seq, (SELECT count(*) FROM syncular.changes c
                     WHERE c.partition = m.partition AND c.commit_seq = m.commit_seq) AS changes
  FROM syncular.sync_commits m WHERE partition = 'p1' ORDER BY commit_seq;
-- a replayed commit writes nothing
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "c", "n": 7}', 'c3');
SELECT pg_temp.wal('todos', :'l0');
SELECT * FROM pg_temp.rows();

-- a table with a trigger of the app: the upsert statement writes it (the push reads nothing
-- ahead of such a table) and fires the trigger; the insert is a speculative insertion, the
-- update locks the row first (ON CONFLICT DO UPDATE, and any BEFORE UPDATE row trigger)
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('notes', '{"id": "n1", "list_id": "l1", "body": "x"}', 'c6');
SELECT pg_temp.wal('notes', :'l0');
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('notes', '{"id": "n1", "list_id": "l1", "body": "y"}', 'c7');
SELECT pg_temp.wal('notes', :'l0');
SELECT what FROM public.audit ORDER BY k;
SELECT id, body, _sync_server_version FROM public.notes;
SELECT partition, tbl, var, value, row_id FROM syncular.sync_row_scopes WHERE tbl = 'notes';

-- a CHECK constraint of the app: the statements write the table, which checks it
ALTER TABLE public.todos ADD CONSTRAINT n_small CHECK (n < 100);
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "c", "n": 8}', 'c8');
SELECT pg_temp.wal('todos', :'l0');
SELECT pg_temp.push('todos', '{"id": "t1", "list_id": "l1", "title": "c", "n": 500}', 'c9');
ALTER TABLE public.todos DROP CONSTRAINT n_small;

-- the commit log's row (a one-upsert commit keeps its change in it) is inserted without a
-- statement while its table has no trigger but the writer fence; the answer is kept per session
-- and dropped when a table's definition changes: a trigger of the app added on sync_commits
-- after pushes of this session
-- makes the next push's log insert a statement, which fires it; dropped, the direct insert again
CREATE FUNCTION public.audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.audit (what) VALUES ('change ' || NEW.tbl || ' ' || NEW.row_id);
  RETURN NEW;
END $$;
CREATE TRIGGER audit_change AFTER INSERT ON syncular.sync_commits
  FOR EACH ROW EXECUTE FUNCTION public.audit_change();
SELECT pg_temp.push('todos', '{"id": "t3", "list_id": "l1", "title": "f", "n": 2}', 'c10');
SELECT what FROM public.audit WHERE what LIKE 'change %' ORDER BY k;
DROP TRIGGER audit_change ON syncular.sync_commits;
SELECT pg_temp.push('todos', '{"id": "t4", "list_id": "l1", "title": "g", "n": 3}', 'c11');
SELECT what FROM public.audit WHERE what LIKE 'change %' ORDER BY k;

-- a unique index of the app refuses a direct insert inside the commit (its writes share one
-- executor state, src/storage_direct_scope.c): the commit is rejected, nothing of it stays, and
-- the next commit of the session writes directly again
CREATE UNIQUE INDEX todos_title ON public.todos (title);
SELECT pg_temp.push('todos', '{"id": "t5", "list_id": "l1", "title": "g", "n": 4}', 'c12');
SELECT pg_temp.push('todos', '{"id": "t5", "list_id": "l1", "title": "h", "n": 4}', 'c13');
DROP INDEX public.todos_title;
SELECT id, title FROM public.todos WHERE id IN ('t4', 't5') ORDER BY id;
SELECT count(*) AS scope_entries FROM syncular.sync_row_scopes WHERE row_id = 't5';

-- the writer fence of the direct commit-row insert is checked in place of its trigger call
-- (push_errors: its refusal); the call is made when function statistics count it
BEGIN;
SET LOCAL track_functions = 'all';
SELECT pg_temp.push('todos', '{"id": "t6", "list_id": "l1", "title": "i", "n": 6}', 'c14');
SELECT pg_stat_get_xact_function_calls('syncular.syncular_writer_fence()'::regprocedure) AS fence_calls;
COMMIT;

-- a one-upsert commit's stored result is built as jsonb without its text (push_outcome_jsonb):
-- the value and the size jsonb_in gives its text
SELECT commit_seq, result - 'recordedAtMs' - 'cacheIdentity' AS stored,
       (result ->> 'recordedAtMs') ~ '^[0-9]+$' AS integral_time,
       length(result ->> 'cacheIdentity') > 0 AS has_identity,
       result = (result::text)::jsonb AND pg_column_size(result) = pg_column_size((result::text)::jsonb) AS as_parsed
  FROM syncular.sync_commits WHERE partition = 'p1' AND commit_seq IN (1, 2) ORDER BY commit_seq;

-- a new row of a table with two scope variables: its two row-scope entries inserted directly,
-- one executor state for both
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push('tasks', '{"id": "k1", "list_id": "l1", "owner_id": "o1"}', 'c15');
SELECT pg_temp.wal('tasks', :'l0');
SELECT partition, tbl, var, value, row_id FROM syncular.sync_row_scopes WHERE tbl = 'tasks' ORDER BY var;
-- both have their index entries (found by the primary key alone)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS by_key FROM syncular.sync_row_scopes
 WHERE partition = 'p1' AND tbl = 'tasks' AND var IN ('list_id', 'owner_id')
   AND value IN ('l1', 'o1') AND row_id = 'k1';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a commit of several upserts: each row written directly as a one-upsert commit's row (no
-- HEAP_CONFIRM, no LOCK), and its log without statements: the commit row, the change rows
-- (idx in order; the scope index entries are sync_change_scopes rows) and one
-- entry per distinct scope value, however many changes share it
CREATE FUNCTION pg_temp.push_many(id text, VARIADIC rs jsonb[]) RETURNS text LANGUAGE sql AS $$
  SELECT syncular.push('p1', 'u1', 'c1', jsonb_build_array(jsonb_build_object(
           'clientCommitId', id, 'operations', (SELECT jsonb_agg(jsonb_build_object(
             'table', 'todos', 'row', r)) FROM unnest(rs) r)))) -> 0 ->> 'status'
$$;
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT pg_temp.push_many('c16', '{"id": "t7", "list_id": "l1", "title": "m1", "n": 1}',
  '{"id": "t8", "list_id": "l2", "title": "m2", "n": 2}',
  '{"id": "t1", "list_id": "l1", "title": "m3", "n": 7}',
  '{"id": "t9", "list_id": "l1", "title": "m4", "n": null}');
SELECT pg_temp.wal('todos', :'l0');
SELECT * FROM pg_temp.rows() WHERE id IN ('t1', 't7', 't8', 't9');
SELECT c.idx, c.row_id, c.op, c.row_version, c.scopes,
       syncular.decode_row('todos', c.payload) ->> 'title' AS title
  FROM syncular.sync_changes c JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c16' ORDER BY c.idx;
SELECT s.tbl, s.var, s.value FROM syncular.sync_change_scopes s
  JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c16' ORDER BY s.value;
SELECT m.result -> 'results' AS results,
       m.result = (m.result::text)::jsonb
         AND pg_column_size(m.result) = pg_column_size((m.result::text)::jsonb) AS as_parsed
  FROM syncular.sync_commits m WHERE m.client_commit_id = 'c16';
-- replayed, the commit answers its stored result
SELECT pg_temp.push_many('c16', '{"id": "t7", "list_id": "l1", "title": "m1", "n": 1}') AS replayed;
-- with a delete among them the log is written by the statements (the tombstone's upsert): the
-- same rows
SELECT syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "c17", "operations": [
  {"table": "todos", "row": {"id": "t10", "list_id": "l2", "title": "m5", "n": 5}},
  {"table": "todos", "op": "delete", "rowId": "t9"},
  {"table": "todos", "row": {"id": "t11", "list_id": "l2", "title": "m6", "n": 6}}]}]') -> 0 ->> 'status' AS status;
SELECT c.idx, c.row_id, c.op, c.row_version, c.scopes
  FROM syncular.sync_changes c JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c17' ORDER BY c.idx;
SELECT s.tbl, s.var, s.value FROM syncular.sync_change_scopes s
  JOIN syncular.sync_commits m USING (partition, commit_seq)
 WHERE m.client_commit_id = 'c17' ORDER BY s.value;
-- a unique index of the app refuses the third row of a direct batch: the commit is rejected at
-- that operation, nothing of it stays
CREATE UNIQUE INDEX todos_title ON public.todos (title);
SELECT (syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "c18", "operations": [
  {"table": "todos", "row": {"id": "t12", "list_id": "l1", "title": "u1", "n": 1}},
  {"table": "todos", "row": {"id": "t13", "list_id": "l1", "title": "u2", "n": 1}},
  {"table": "todos", "row": {"id": "t14", "list_id": "l1", "title": "m1", "n": 1}}]}]') -> 0)
  #- '{results,0,error,details}' AS rejected;
DROP INDEX public.todos_title;
SELECT count(*) AS left_behind FROM public.todos WHERE id IN ('t12', 't13', 't14');
SELECT count(*) AS scope_entries FROM syncular.sync_row_scopes WHERE row_id IN ('t12', 't13', 't14');

-- a commit of 40 upserts (20 rows stored before, 20 new ones; one batch of each kind, past
-- what a statement used to take): every row written directly, the updates without a LOCK
-- record and the inserts without HEAP_CONFIRM; the rows, their payloads and their row-scope
-- entries as a push of one row writes them (record types without the HOT_ and +INIT variants,
-- which depend on the pages)
CREATE FUNCTION pg_temp.wal_counts(rel regclass, since pg_lsn) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(t || ' x' || n, ', ' ORDER BY t), '-')
    FROM (SELECT regexp_replace(record_type, '^HOT_|\+INIT$', '', 'g') AS t, count(*) AS n
            FROM pg_get_wal_records_info_till_end_of_wal(since)
           WHERE resource_manager = 'Heap'
             AND block_ref ~ ('rel \d+/\d+/' || pg_relation_filenode(rel) || ' ')
           GROUP BY 1) x
$$;
SELECT syncular.push('p1', 'u1', 'c1', jsonb_build_array(jsonb_build_object('clientCommitId', 'c19',
         'operations', (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'row',
           jsonb_build_object('id', 'b' || g, 'list_id', 'l' || (1 + g % 2), 'title', 'first', 'n', g)))
           FROM generate_series(1, 20) g)))) -> 0 ->> 'status' AS stored_first;
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT syncular.push('p1', 'u1', 'c1', jsonb_build_array(jsonb_build_object('clientCommitId', 'c20',
         'operations', (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'row',
           jsonb_build_object('id', 'b' || g, 'list_id', 'l' || (1 + g % 2), 'title', 'second', 'n', g)))
           FROM generate_series(1, 40) g)))) -> 0 ->> 'status' AS forty;
SELECT pg_temp.wal_counts('public.todos', :'l0') AS todos,
       pg_temp.wal_counts('syncular.sync_row_scopes', :'l0') AS row_scopes;
SELECT count(*) AS rows, count(*) FILTER (WHERE payload_matches) AS payloads_match,
       count(*) FILTER (WHERE ver = 2) AS updated, count(*) FILTER (WHERE ver = 1) AS inserted
  FROM pg_temp.rows() WHERE id ~ '^b' AND title = 'second';
SELECT count(*) AS row_scope_entries,
       count(*) FILTER (WHERE rs.value = t.list_id) AS matching
  FROM syncular.sync_row_scopes rs JOIN public.todos t ON t._sync_partition = rs.partition
   AND t._sync_row_id = rs.row_id
 WHERE rs.partition = 'p1' AND rs.row_id ~ '^b';

-- the capture of SQL writes is unchanged: an UPDATE by SQL is logged as a commit
UPDATE public.todos SET title = 'sql' WHERE id = 't1';
SELECT * FROM pg_temp.rows() WHERE id !~ '^b';
SELECT count(*) AS commits FROM syncular.sync_commits WHERE partition = 'p1';

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_direct_write;
