-- capture_rules: the rules of ordinary SQL writes to synced tables.  Unencodable values fail the
-- statement with a catalogue error and log nothing; the engine's own writes are not captured
-- twice; a SQL write is authoritative and a client's later push with a stale baseVersion gets
-- the normal conflict with the new serverRow; INSERT ... ON CONFLICT; crdt and bytes columns
-- stored as written; the writer fence and the RFC 0007 serve gate refuse like for a push; a role
-- with only table privileges writes (the log is written as the extension owner, the actor is
-- the role); dropped or disabled capture triggers are detected; unregister_schema drops them.
\set testdb syncular_t_capture_rules
\i sql/capture_helpers.psql
SET syncular.partition = 'p1';

-- values the codec cannot carry: the statement fails, nothing is logged
\set VERBOSITY default
INSERT INTO app.todos (id, list_id, n) VALUES ('big', 'l1', 9007199254740992);
INSERT INTO app.todos (id, list_id) VALUES ('noscope', '');
SET syncular.max_row_bytes = 1024;
INSERT INTO app.todos (id, list_id, title) VALUES ('long', 'l1', repeat('x', 2000));
RESET syncular.max_row_bytes;
INSERT INTO app.todos (id, list_id) VALUES (repeat('k', 1100), 'l1');
\set VERBOSITY terse
SELECT (SELECT count(*) FROM app.todos) AS rows, (SELECT count(*) FROM syncular.sync_commits) AS commits,
       (SELECT count(*) FROM syncular.changes) AS changes;

-- the engine's own write (a push) is one commit, logged once
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS seq
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "k1", "operations": [
    {"table": "todos", "op": "upsert", "row": {"id": "t1", "list_id": "l1", "title": "from a client",
     "done": false, "n": 1, "meta": null}}]}]')) r;
SELECT commit_seq, client_id, client_commit_id FROM syncular.sync_commits ORDER BY commit_seq;
SELECT commit_seq, idx, row_id, op, row_version FROM syncular.changes ORDER BY commit_seq, idx;

-- a SQL write is authoritative (no baseVersion); the client's stale push then conflicts with
-- the row SQL wrote as serverRow, only on the column SQL changed
UPDATE app.todos SET title = 'fixed by support' WHERE id = 't1';
SELECT r ->> 'status' AS status, r -> 'results' -> 0 ->> 'status' AS result,
       r -> 'results' -> 0 ->> 'code' AS code, r -> 'results' -> 0 -> 'serverRow' AS server_row,
       r -> 'results' -> 0 -> 'serverVersion' AS server_version,
       r -> 'results' -> 0 -> 'conflictColumns' AS conflict_columns
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "k2", "operations": [
    {"table": "todos", "op": "upsert", "row": {"id": "t1", "title": "offline edit"}, "baseVersion": 1}]}]')) r;
-- a column SQL did not change merges without conflict (per-column versions)
SELECT r ->> 'status' AS status
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "k3", "operations": [
    {"table": "todos", "op": "upsert", "row": {"id": "t1", "done": true}, "baseVersion": 1}]}]')) r;
SELECT title, done, _sync_server_version FROM app.todos WHERE id = 't1';

-- INSERT ... ON CONFLICT DO UPDATE: the update path, one commit
INSERT INTO app.todos (id, list_id, title) VALUES ('t1', 'l1', 'upserted by SQL')
  ON CONFLICT (_sync_partition, _sync_row_id) DO UPDATE SET title = EXCLUDED.title;
SELECT part, seq, idx, row_id, op, ver, payload ->> 'title' AS title
  FROM pg_temp.log_after((SELECT max(commit_seq) - 1 FROM syncular.sync_commits));

-- crdt and bytes columns are stored as written (no merge for a SQL write); an integer key
INSERT INTO app.notes (id, list_id, doc, raw) VALUES (7, 'l1', '\x0000', '\x00ff10');
SELECT _sync_row_id, syncular.decode_row('notes', _sync_payload) FROM app.notes;
UPDATE app.notes SET doc = NULL WHERE id = 7;
SELECT _sync_server_version, encode(_sync_column_versions, 'hex') AS cv,
       syncular.decode_row('notes', _sync_payload) FROM app.notes;

-- actor and client id of SQL commits: the defaults (current role, syncular:sql)
SELECT DISTINCT client_id, actor_id FROM syncular.sync_commits WHERE client_id <> 'c1';

-- the writer fence refuses a SQL write as it refuses a push (nothing written)
INSERT INTO syncular.sync_writer_fence (partition, required_writer_version) VALUES ('fenced', 2);
INSERT INTO app.todos (_sync_partition, id, list_id) VALUES ('fenced', 'x', 'l1');
-- the RFC 0007 serve gate: a pending checkpoint of the served version refuses it too
SELECT syncular.declare_checkpoint('gated', 'bf1', 1) ->> 'state' AS checkpoint;
INSERT INTO app.todos (_sync_partition, id, list_id) VALUES ('gated', 'x', 'l1');
SELECT count(*) AS rows_written FROM app.todos WHERE _sync_partition IN ('fenced', 'gated');
-- (the pending checkpoint gates every partition, §4.2: remove it for what follows)
DELETE FROM syncular.sync_backfill_checkpoints WHERE partition = 'gated';

-- a role with table privileges only: the log is written as the extension owner, the commit's
-- actor is the role
SET client_min_messages = warning;
DROP ROLE IF EXISTS syncular_capture_writer;
CREATE ROLE syncular_capture_writer;
GRANT USAGE ON SCHEMA app TO syncular_capture_writer;
GRANT SELECT, INSERT, UPDATE ON app.todos TO syncular_capture_writer;
SET ROLE syncular_capture_writer;
INSERT INTO app.todos (id, list_id, title) VALUES ('w1', 'l2', 'by the role');
RESET ROLE;
SELECT c.actor_id, c.client_id, x.row_id FROM syncular.sync_commits c JOIN syncular.changes x
    ON x.partition = c.partition AND x.commit_seq = c.commit_seq WHERE x.row_id = 'w1';
REVOKE ALL ON app.todos FROM syncular_capture_writer;
REVOKE ALL ON SCHEMA app FROM syncular_capture_writer;
DROP ROLE syncular_capture_writer;

-- a disabled or dropped capture trigger: the DDL guard refuses to disable one (src/ddl_guard.c);
-- disabled anyway with the superuser escape hatch, ensure_schema re-opening the version refuses
-- and says what to do
SELECT compiled AS ir FROM syncular.sync_settings \gset
ALTER TABLE app.todos DISABLE TRIGGER syncular_capture_update;
ALTER TABLE app.todos DISABLE TRIGGER ALL;
SET syncular.allow_synced_table_ddl = on;
ALTER TABLE app.todos DISABLE TRIGGER syncular_capture_update;
RESET syncular.allow_synced_table_ddl;
\set VERBOSITY default
SELECT syncular.ensure_schema(:'ir'::jsonb, '[]', 'app') ->> 'action' AS action;
\set VERBOSITY terse
ALTER TABLE app.todos ENABLE TRIGGER syncular_capture_update;
SELECT syncular.ensure_schema(:'ir'::jsonb, '[]', 'app') ->> 'action' AS action;

-- a schema bump: the row rewrite of todos (a column appended) is the engine's own write, not a
-- commit; the new table gets its capture triggers; a table that is not materialized is written
-- through _sync_payload
SELECT max(commit_seq) AS seq_before FROM syncular.sync_commits WHERE partition = 'p1' \gset
SELECT syncular.ensure_schema('{"version": 2, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "done", "type": "boolean", "nullable": true},
    {"name": "n", "type": "integer", "nullable": true},
    {"name": "meta", "type": "json", "nullable": true},
    {"name": "note", "type": "string", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "integer", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
    {"name": "raw", "type": "bytes", "nullable": true}]},
  {"name": "blobs", "primaryKey": "id", "materialize": false, "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]}]}', '[]', 'app') - 'appSchema' AS bump;
SELECT count(*) AS commits_by_the_bump FROM syncular.sync_commits WHERE partition = 'p1' AND commit_seq > :seq_before;
UPDATE app.todos SET note = 'v2 column' WHERE id = 'w1';
SELECT part, seq, row_id, ver, payload ->> 'note' AS note FROM pg_temp.log_after(:seq_before);
INSERT INTO app.blobs (_sync_payload) VALUES (syncular.encode_row('blobs', '{"id": "b1", "list_id": "l1", "body": "opaque"}'));
SELECT _sync_partition, _sync_row_id, _sync_scopes, _sync_server_version FROM app.blobs;
SELECT row_id, op, ver, scopes, payload FROM pg_temp.log_after(:seq_before) WHERE tbl = 'blobs';
\set VERBOSITY default
INSERT INTO app.blobs (_sync_payload) VALUES ('\x00');
\set VERBOSITY terse

-- unregister_schema keeps the tables as plain tables, without the capture triggers
SELECT syncular.unregister_schema('app') ->> 'keptTables' AS kept;
SELECT count(*) AS capture_triggers FROM pg_trigger WHERE tgrelid IN ('app.todos'::regclass, 'app.notes'::regclass, 'app.blobs'::regclass);
UPDATE app.todos SET title = 'plain table now' WHERE id = 'w1';

\i sql/capture_done.psql
