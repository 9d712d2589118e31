-- crdt_readme: the README "CRDT columns" example, verbatim, in a private database with an app
-- schema and a scope resolver (README "Using it").
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_crdt_readme;
\c syncular_t_crdt_readme
SET client_min_messages = warning;
CREATE EXTENSION syncular;
RESET client_min_messages;
CREATE SCHEMA app;
SET search_path = app, public;
CREATE FUNCTION app.allowed_scopes(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT jsonb_build_object('list_id', jsonb_build_array('*')) $$;
SELECT syncular.set_scope_resolver('app.allowed_scopes(text,text,text)');

-- ---- README begins
-- a host merger for a second crdt type: the greater value wins
CREATE FUNCTION app.max_merge(stored bytea, incoming bytea) RETURNS bytea LANGUAGE sql AS
  $$ SELECT CASE WHEN stored IS NULL OR incoming > stored THEN incoming ELSE stored END $$;
SELECT syncular.set_crdt_merger('max-bytes', 'app.max_merge(bytea,bytea)');

SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "notes", "primaryKey": "id",
  "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "body", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
    {"name": "best", "type": "crdt", "nullable": true, "crdtType": "max-bytes"}]}]}');

-- two replicas edit the same Yjs document: "abc", then concurrently "X" after "c"
SELECT r ->> 'status' FROM jsonb_array_elements(syncular.push('tenant-1', 'user-42', 'phone', '[
  {"clientCommitId": "p-1", "operations": [{"table": "notes", "op": "upsert",
   "row": {"id": "n1", "list_id": "l1", "body": "AQEBAAQBAXQDYWJjAA==", "best": "BQ=="}}]}]')) r;
SELECT r ->> 'status' FROM jsonb_array_elements(syncular.push('tenant-1', 'user-42', 'laptop', '[
  {"clientCommitId": "l-1", "operations": [{"table": "notes", "op": "upsert", "baseVersion": 1,
   "row": {"id": "n1", "body": "AQECAIQBAgFYAA==", "best": "Bw=="}}]}]')) r;

-- the stored cell is the merge of both updates; crdt_merge is the same merge from SQL
SELECT body = syncular.crdt_merge('yjs-doc', decode('AQEBAAQBAXQDYWJjAA==', 'base64'),
                                             decode('AQECAIQBAgFYAA==', 'base64')) AS merged,
       encode(best, 'hex') AS best
  FROM notes WHERE id = 'n1';
-- ---- README ends

\c :orig_db
DROP DATABASE syncular_t_crdt_readme;
