-- capture_sql: ordinary SQL writes to synced tables are sync commits.  Every statement kind
-- (INSERT, UPDATE, DELETE, MERGE, COPY FROM, TRUNCATE), a primary-key change, a scope move,
-- NULLs, rollbacks (transaction, savepoint), one commit per transaction and partition, two
-- partitions in one transaction, writes through a view and through an app trigger; after each
-- step three clients (A: list l1, B: list l2, C: both) pull with syncular.pull from their
-- cursors and their replicas must equal the table.
\set testdb syncular_t_capture_sql
\i sql/capture_helpers.psql
INSERT INTO public.replica_cursor VALUES ('A', 'p1', '["l1"]', NULL), ('B', 'p1', '["l2"]', NULL),
  ('C', 'p1', '["l1", "l2"]', NULL);

-- no partition: neither _sync_partition nor syncular.partition -> a clear error, nothing written
\set VERBOSITY default
INSERT INTO app.todos (id, list_id, title) VALUES ('a', 'l1', 'first');
\set VERBOSITY terse
SELECT count(*) AS commits FROM syncular.sync_commits;

-- INSERT: one statement, one commit; the row gets its _sync_* columns from its columns
SET syncular.partition = 'p1';
INSERT INTO app.todos (id, list_id, title, done, n, meta) VALUES
  ('a', 'l1', 'first', false, 1, '{"k": [1, 2]}'), ('b', 'l1', 'second', NULL, NULL, NULL),
  ('c', 'l2', 'third', true, -5, '"s"');
SELECT _sync_partition, _sync_row_id, _sync_server_version, _sync_scopes, _sync_column_versions,
       syncular.decode_row('todos', _sync_payload) AS payload
  FROM app.todos ORDER BY id;
SELECT partition, commit_seq, client_id, client_commit_id ~ '^xid:[0-9]+$' AS xid_id, actor_id, writer_version
  FROM syncular.sync_commits ORDER BY commit_seq;
SELECT * FROM pg_temp.log_after(0);
SELECT * FROM syncular.sync_row_scopes ORDER BY row_id;
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- UPDATE of one column: row version 2, only that column's version moves
UPDATE app.todos SET title = 'first, edited' WHERE id = 'a';
SELECT _sync_row_id, _sync_server_version, encode(_sync_column_versions, 'hex') AS cv
  FROM app.todos ORDER BY id;
SELECT * FROM pg_temp.log_after(1);
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- several statements in one transaction: one commit, changes in statement order
BEGIN;
UPDATE app.todos SET n = 10 WHERE id = 'b';
UPDATE app.todos SET done = true WHERE id = 'b';
INSERT INTO app.todos (id, list_id, title) VALUES ('d', 'l1', 'fourth');
COMMIT;
SELECT * FROM pg_temp.log_after(2);
SELECT pg_temp.sync('A') AS a, pg_temp.sync('C') AS c;

-- UPDATE of the primary key: the old rowId is deleted (tombstone), the new one inserted
UPDATE app.todos SET id = 'a2' WHERE id = 'a';
SELECT * FROM pg_temp.log_after(3);
SELECT partition, tbl, row_id, commit_seq FROM syncular.sync_tombstones ORDER BY row_id;
SELECT pg_temp.sync('A') AS a, pg_temp.sync('C') AS c;

-- UPDATE of a scope column: the row moves; clients of l1 get a delete (old scopes), clients of
-- l2 the row; no tombstone (the row still exists)
UPDATE app.todos SET list_id = 'l2' WHERE id = 'b';
SELECT * FROM pg_temp.log_after(4);
SELECT tbl, var, value, row_id FROM syncular.sync_row_scopes WHERE row_id = 'b';
SELECT count(*) AS b_tombstones FROM syncular.sync_tombstones WHERE row_id = 'b';
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- NULLs written and cleared
UPDATE app.todos SET title = NULL, meta = 'null', n = NULL WHERE id = 'c';
UPDATE app.todos SET title = 'back' WHERE id = 'c';
SELECT _sync_server_version, syncular.decode_row('todos', _sync_payload) FROM app.todos WHERE id = 'c';
SELECT pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- DELETE: a delete change with the stored scopes, a tombstone, the row-scope entries gone
DELETE FROM app.todos WHERE id = 'd';
SELECT * FROM pg_temp.log_after(7);
SELECT count(*) AS d_scope_entries FROM syncular.sync_row_scopes WHERE row_id = 'd';
SELECT pg_temp.sync('A') AS a, pg_temp.sync('C') AS c;

-- a rolled-back transaction leaves nothing: no commit, no commit_seq used
SELECT max_commit_seq AS seq_before FROM syncular.partitions WHERE partition = 'p1' \gset
BEGIN;
INSERT INTO app.todos (id, list_id, title) VALUES ('r', 'l1', 'rolled back');
UPDATE app.todos SET title = 'never' WHERE id = 'c';
ROLLBACK;
SELECT max_commit_seq - :seq_before AS seqs_used, (SELECT count(*) FROM syncular.sync_commits
  WHERE commit_seq > :seq_before) AS commits FROM syncular.partitions WHERE partition = 'p1';

-- savepoints: the commit created inside a rolled-back savepoint is forgotten (its commit_seq is
-- taken again, gap-free); changes of a rolled-back savepoint are gone, the rest stays one commit
BEGIN;
SAVEPOINT s1;
INSERT INTO app.todos (id, list_id, title) VALUES ('s', 'l1', 'gone with s1');
ROLLBACK TO SAVEPOINT s1;
INSERT INTO app.todos (id, list_id, title) VALUES ('e', 'l1', 'kept');
SAVEPOINT s2;
UPDATE app.todos SET title = 'gone with s2' WHERE id = 'e';
ROLLBACK TO SAVEPOINT s2;
SAVEPOINT s3;
UPDATE app.todos SET n = 3 WHERE id = 'e';
RELEASE SAVEPOINT s3;
COMMIT;
SELECT * FROM pg_temp.log_after(:seq_before);
SELECT max_commit_seq - :seq_before AS seqs_used FROM syncular.partitions WHERE partition = 'p1';
SELECT pg_temp.sync('A') AS a, pg_temp.sync('C') AS c;

-- two partitions in one transaction: one commit in each; the row's _sync_partition wins over
-- the setting; actor and client id from the settings
BEGIN;
SET LOCAL syncular.actor_id = 'admin-panel';
SET LOCAL syncular.client_id = 'backoffice';
INSERT INTO app.todos (id, list_id, title) VALUES ('f', 'l1', 'in p1');
INSERT INTO app.todos (_sync_partition, id, list_id, title) VALUES ('p2', 'f', 'l1', 'in p2');
UPDATE app.todos SET title = 'in p2, edited' WHERE _sync_partition = 'p2' AND id = 'f';
COMMIT;
SELECT partition, commit_seq, client_id, actor_id FROM syncular.sync_commits
 WHERE client_id = 'backoffice' ORDER BY partition;
SELECT part, seq, idx, row_id, op, ver, payload ->> 'title' AS title FROM pg_temp.log_after(0)
 WHERE row_id = 'f' ORDER BY part, seq, idx;
INSERT INTO public.replica_cursor VALUES ('P2', 'p2', '["l1"]', NULL);
SELECT pg_temp.sync('A') AS a, pg_temp.sync('P2') AS p2;

-- MERGE: its UPDATE and INSERT actions, one commit
SELECT max_commit_seq AS seq_before FROM syncular.partitions WHERE partition = 'p1' \gset
MERGE INTO app.todos t
USING (VALUES ('e', 'merged e'), ('g', 'merged g'), ('f', NULL)) AS v(id, title)
   ON t._sync_partition = 'p1' AND t.id = v.id
 WHEN MATCHED AND v.title IS NULL THEN DELETE
 WHEN MATCHED THEN UPDATE SET title = v.title
 WHEN NOT MATCHED THEN INSERT (id, list_id, title) VALUES (v.id, 'l2', v.title);
SELECT seq, idx, row_id, op, ver, scopes, payload ->> 'title' AS title FROM pg_temp.log_after(:seq_before);
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- COPY FROM: one commit for the whole COPY
SELECT max_commit_seq AS seq_before FROM syncular.partitions WHERE partition = 'p1' \gset
COPY app.todos (id, list_id, title, done, n, meta) FROM stdin;
h	l1	copied h	t	7	{"x": 1}
i	l2	\N	\N	\N	\N
\.
SELECT seq, idx, row_id, op, ver, scopes, payload FROM pg_temp.log_after(:seq_before);
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- a write through an (auto-updatable) view, and through an app trigger writing another row;
-- an app BEFORE ROW trigger changes the row before the capture encodes it
CREATE VIEW app.open_todos AS SELECT id, list_id, title, done FROM app.todos WHERE done IS NOT TRUE;
UPDATE app.open_todos SET title = 'through the view' WHERE id = 'g';
CREATE FUNCTION app.shout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.title := upper(NEW.title); RETURN NEW; END $$;
CREATE TRIGGER a_shout BEFORE INSERT OR UPDATE ON app.todos FOR EACH ROW EXECUTE FUNCTION app.shout();
CREATE TABLE app.audit (id text, list_id text);
CREATE FUNCTION app.audit_to_todo() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO app.todos (id, list_id, title) VALUES (NEW.id, NEW.list_id, 'from audit'); RETURN NEW; END $$;
CREATE TRIGGER audit_todo AFTER INSERT ON app.audit FOR EACH ROW EXECUTE FUNCTION app.audit_to_todo();
INSERT INTO app.audit VALUES ('j', 'l1');
DROP TRIGGER a_shout ON app.todos;
SELECT id, title, syncular.decode_row('todos', _sync_payload) ->> 'title' AS payload_title
  FROM app.todos WHERE id IN ('g', 'j') ORDER BY id;
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c;

-- TRUNCATE: every row of the table logged as a delete, per partition
TRUNCATE app.todos;
SELECT c.partition, c.commit_seq, count(*) AS deletes, bool_and(c.op = 2) AS all_deletes
  FROM syncular.changes c JOIN syncular.partitions p
    ON p.partition = c.partition AND p.max_commit_seq = c.commit_seq
 GROUP BY 1, 2 ORDER BY 1;
SELECT count(*) AS row_scope_entries FROM syncular.sync_row_scopes WHERE tbl = 'todos';
SELECT pg_temp.sync('A') AS a, pg_temp.sync('B') AS b, pg_temp.sync('C') AS c, pg_temp.sync('P2') AS p2;

-- commit_seq is gap-free in both partitions
SELECT partition, max_commit_seq, (SELECT count(*) FROM syncular.sync_commits c
  WHERE c.partition = p.partition) AS commits,
  (SELECT bool_and(EXISTS (SELECT 1 FROM syncular.changes x WHERE x.partition = c.partition
     AND x.commit_seq = c.commit_seq)) FROM syncular.sync_commits c WHERE c.partition = p.partition) AS none_empty
  FROM syncular.partitions p ORDER BY partition;

\i sql/capture_done.psql
