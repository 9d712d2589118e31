-- Push corpus fixture (test/corpus/push_corpus.sh): a registered schema with declared
-- references, a unique index, a CRDT column, a blob_ref column, row and commit validators, and
-- the requests whose responses the corpus fingerprints, in the order they are served.  Every
-- request is built here (its bytes depend only on the schema) and served later, one round per
-- statement, so each sees the state the earlier ones left.  The log epoch is pinned after the
-- partition is created and push_corpus.sh pins the clock, so two builds that serve the same
-- bytes print the same md5 list.
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "lists", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "name", "type": "string", "nullable": true}]},
  {"name": "todos", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true},
     {"name": "done", "type": "boolean", "nullable": true},
     {"name": "n", "type": "integer", "nullable": true},
     {"name": "meta", "type": "json", "nullable": true},
     {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
     {"name": "att", "type": "blob_ref", "nullable": true}],
   "indexes": [{"name": "uniq_title", "columns": ["title"], "unique": true}],
   "references": [{"column": "list_id", "parentTable": "lists", "onDelete": "cascade"}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "todo_id", "type": "string", "nullable": true},
     {"name": "body", "type": "string", "nullable": true}],
   "references": [{"column": "todo_id", "parentTable": "todos", "onDelete": "set null"}]},
  {"name": "tags", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "integer", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false}],
   "references": [{"column": "list_id", "parentTable": "lists"}]}]}') ->> 'action' AS schema_action;
-- an index the operator added: a value past the btree maximum fails the row write with 54000
CREATE INDEX corpus_todos_meta_k ON public.todos ((meta ->> 'k'));

-- u1 writes workspace w1, u2 w1 and w2, admin everything
CREATE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE actor
    WHEN 'u1' THEN '{"ws": ["w1"]}'::jsonb
    WHEN 'u2' THEN '{"ws": ["w1", "w2"]}'::jsonb
    ELSE '{"ws": "*"}'::jsonb END
$$;
SELECT syncular.set_scope_resolver('public.resolver(text,text,text)') IS NOT NULL AS resolver;

-- the row validator of notes: body 'bad' is refused with details; 'plain' raises a plain error;
-- 'locked' refuses a NULL todo_id (a SET NULL cascade)
CREATE FUNCTION public.validate_note(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                     actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF op <> 'delete' AND new_row ->> 'body' = 'bad' THEN
    RAISE EXCEPTION 'bad note' USING ERRCODE = 'SY001',
      DETAIL = json_build_object('code', 'app.bad_note', 'message', 'a note may not say bad',
                                 'details', json_build_object('fieldPaths', json_build_array('body'),
                                                              'reason', 'bad_word'))::text;
  ELSIF op <> 'delete' AND new_row ->> 'body' = 'plain' THEN
    RAISE EXCEPTION 'secret database text';
  ELSIF op <> 'delete' AND new_row ->> 'body' = 'locked' AND new_row ->> 'todo_id' IS NULL THEN
    RAISE EXCEPTION 'locked note' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.locked_note", "details": {"fieldPaths": ["todo_id"]}}';
  END IF;
END
$$;
SELECT syncular.set_row_validator('notes', 'public.validate_note(text, text, text, jsonb, jsonb, text, text)') IS NOT NULL AS row_validator;
-- the commit validator: a list named 'commitbad' is refused at its opIndex
CREATE FUNCTION public.validate_commit(operations jsonb, client_id text, client_commit_id text,
                                       actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE o jsonb;
BEGIN
  FOR o IN SELECT value FROM jsonb_array_elements(operations) LOOP
    IF o ->> 'table' = 'lists' AND o -> 'row' ->> 'name' = 'commitbad' THEN
      RAISE EXCEPTION 'bad list' USING ERRCODE = 'SY001',
        DETAIL = json_build_object('code', 'app.bad_list', 'details',
                                   json_build_object('requiredAction', 'rename'),
                                   'opIndex', (o ->> 'opIndex')::int)::text;
    END IF;
  END LOOP;
END
$$;
SELECT syncular.set_commit_validator('public.validate_commit(jsonb, text, text, text, text)') IS NOT NULL AS commit_validator;

-- create partition p1 (and p2 for the SQL API), then pin the epochs
SELECT length(syncular.handle(syncular.debug_encode(jsonb_build_object('magic', 'SSP2',
  'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'boot', 'schemaVersion', 1),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0,
                       'maxSnapshotPages', 0, 'accept', 1)))), part, 'admin')) > 0
  FROM (VALUES ('p1'), ('p2')) v(part);
UPDATE syncular.sync_partition_registry SET log_epoch = 'epoch-' || partition;

CREATE SCHEMA corpus;
-- Yjs v1 updates of client 1 on the root text "t" (sql/crdt_merge.sql): "abc", then "de"
CREATE FUNCTION corpus.yjs(which int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(CASE which WHEN 1 THEN '\x01010100040101740361626300'::bytea
                           WHEN 2 THEN '\x0101010384010202646500'::bytea
                           ELSE '\x0102'::bytea END, 'base64')
$$;
-- incompressible text of n bytes
CREATE FUNCTION corpus.noise(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT left(string_agg(md5('n' || i), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
-- up(table, row, baseVersion, wire): an upsert whose present columns are the row's keys (wire
-- 3: sparse row; wire 2: full row, absent keys NULL); rowId the rendered id unless given
CREATE FUNCTION corpus.up(tbl text, r jsonb, base bigint DEFAULT NULL, wire int DEFAULT 3,
                          row_id text DEFAULT NULL) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'table', tbl,
    'rowId', coalesce(row_id, CASE jsonb_typeof(r -> 'id') WHEN 'string' THEN r ->> 'id' ELSE (r -> 'id')::text END),
    'op', 'upsert', 'baseVersion', base,
    'payload', encode(CASE WHEN wire >= 3 THEN syncular.encode_sparse_row(tbl, r)
                           ELSE syncular.encode_row(tbl, r) END, 'base64')))
$$;
CREATE FUNCTION corpus.del(tbl text, row_id text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('table', tbl, 'rowId', row_id, 'op', 'delete')
$$;
CREATE FUNCTION corpus.pc(id text, VARIADIC ops jsonb[]) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', id, 'operations', to_jsonb(ops))
$$;
-- a whole todo row (wire 2 needs every column)
CREATE FUNCTION corpus.todo(id text, ws text, list text, title text, n int DEFAULT 1,
                            doc text DEFAULT NULL, meta jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('id', id, 'ws', ws, 'list_id', list, 'title', title, 'done', false,
                            'n', n, 'meta', meta, 'doc', doc, 'att', null)
$$;

-- The requests, served in n order: (name, actor, client, wire, settings for the round, bytes)
CREATE TABLE corpus.req (n serial PRIMARY KEY, name text NOT NULL, actor text NOT NULL,
                         pre text, req bytea NOT NULL);
CREATE FUNCTION corpus.add(name text, actor text, client text, commits jsonb[], wire int DEFAULT 3,
                           pre text DEFAULT NULL, pull jsonb DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO corpus.req (name, actor, pre, req)
  SELECT name, actor, pre, syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', wire, 'msgKind', 'request', 'frames',
    jsonb_build_array(jsonb_build_object('type', 'REQ_HEADER', 'clientId', client,
                                         'schemaVersion', 1, 'logEpoch', 'epoch-p1'))
    || to_jsonb(commits) || coalesce(pull, '[]')))
$$;

-- applied: an insert batch over three tables (parents first), then every path that rejects
SELECT corpus.add('insert batch', 'u1', 'A', ARRAY[corpus.pc('a-1',
  corpus.up('lists', '{"id": "L1", "ws": "w1", "name": "home"}'),
  corpus.up('lists', '{"id": "L2", "ws": "w1", "name": "work"}'),
  corpus.up('todos', corpus.todo('t1', 'w1', 'L1', 'milk')),
  corpus.up('todos', corpus.todo('t2', 'w1', 'L1', 'eggs', 2, corpus.yjs(1))),
  corpus.up('todos', corpus.todo('t3', 'w1', 'L2', 'bread')),
  corpus.up('notes', '{"id": "n1", "ws": "w1", "todo_id": "t1", "body": "buy"}'),
  corpus.up('notes', '{"id": "n2", "ws": "w1", "todo_id": "t2", "body": "soon"}'),
  corpus.up('tags', '{"id": 1, "ws": "w1", "list_id": "L2"}'))]);
SELECT corpus.add('cached replay', 'u1', 'A', ARRAY[corpus.pc('a-1',
  corpus.up('lists', '{"id": "L1", "ws": "w1", "name": "other"}'))]);
SELECT corpus.add('unversioned patch', 'u1', 'A', ARRAY[corpus.pc('a-2',
  corpus.up('todos', '{"id": "t1", "title": "oat milk"}'))]);
SELECT corpus.add('versioned disjoint patch', 'u2', 'B', ARRAY[corpus.pc('b-1',
  corpus.up('todos', '{"id": "t1", "n": 7}', 1))]);
SELECT corpus.add('conflict w3 column', 'u2', 'B', ARRAY[corpus.pc('b-2',
  corpus.up('todos', '{"id": "t1", "title": "soy milk", "n": 8}', 1))]);
SELECT corpus.add('conflict w3 insert race', 'u2', 'B', ARRAY[corpus.pc('b-3',
  corpus.up('todos', corpus.todo('t1', 'w1', 'L1', 'tea'), 0))]);
SELECT corpus.add('conflict w3 replayed', 'u2', 'B', ARRAY[corpus.pc('b-2',
  corpus.up('todos', '{"id": "t1", "n": 99}'))]);
SELECT corpus.add('base ahead', 'u1', 'A', ARRAY[corpus.pc('a-3',
  corpus.up('todos', '{"id": "t1", "n": 1}', 9))]);
SELECT corpus.add('scope change', 'u2', 'B', ARRAY[corpus.pc('b-4',
  corpus.up('todos', '{"id": "t1", "ws": "w2"}'))]);
SELECT corpus.add('scope equal', 'u1', 'A', ARRAY[corpus.pc('a-4',
  corpus.up('todos', '{"id": "t1", "ws": "w1", "done": true}'))]);
SELECT corpus.add('forbidden update', 'u1', 'A', ARRAY[corpus.pc('a-5',
  corpus.up('todos', corpus.todo('t9', 'w2', 'L9', 'far')))]);
SELECT corpus.add('insert w2', 'u2', 'B', ARRAY[corpus.pc('b-5',
  corpus.up('lists', '{"id": "L9", "ws": "w2", "name": "away"}'),
  corpus.up('todos', corpus.todo('t9', 'w2', 'L9', 'far')))]);
SELECT corpus.add('forbidden stored', 'u1', 'A', ARRAY[corpus.pc('a-6',
  corpus.up('todos', '{"id": "t9", "n": 2}'))]);
SELECT corpus.add('forbidden delete', 'u1', 'A', ARRAY[corpus.pc('a-7', corpus.del('todos', 't9'))]);
SELECT corpus.add('delete', 'u2', 'B', ARRAY[corpus.pc('b-6', corpus.del('todos', 't9'))]);
SELECT corpus.add('row deleted', 'u2', 'B', ARRAY[corpus.pc('b-7',
  corpus.up('todos', '{"id": "t9", "title": "late"}'))]);
SELECT corpus.add('row deleted full', 'u2', 'B', ARRAY[corpus.pc('b-8',
  corpus.up('todos', corpus.todo('t9', 'w2', 'L9', 'late')))]);
SELECT corpus.add('row deleted undisclosed', 'u1', 'A', ARRAY[corpus.pc('a-8',
  corpus.up('todos', '{"id": "t9", "title": "late"}'))]);
SELECT corpus.add('recreate', 'u2', 'B', ARRAY[corpus.pc('b-9',
  corpus.up('todos', corpus.todo('t9', 'w2', 'L9', 'back'), 0))]);
SELECT corpus.add('row missing versioned', 'u1', 'A', ARRAY[corpus.pc('a-9',
  corpus.up('todos', '{"id": "t20", "ws": "w1", "title": "ghost"}', 3))]);
SELECT corpus.add('row missing sparse', 'u1', 'A', ARRAY[corpus.pc('a-10',
  corpus.up('todos', '{"id": "t21", "ws": "w1", "title": "half"}'))]);
SELECT corpus.add('absent delete', 'u1', 'A', ARRAY[corpus.pc('a-11', corpus.del('todos', 'nope'))]);
SELECT corpus.add('unique violation', 'u1', 'A', ARRAY[corpus.pc('a-12',
  corpus.up('todos', corpus.todo('t4', 'w1', 'L1', 'ok')),
  corpus.up('todos', corpus.todo('t5', 'w1', 'L1', 'eggs')))]);
SELECT corpus.add('storage limit 54000', 'u1', 'A', ARRAY[corpus.pc('a-13',
  corpus.up('todos', corpus.todo('t6', 'w1', 'L1', 'big', 1, NULL, jsonb_build_object('k', corpus.noise(3000)))))]);
SELECT corpus.add('row bytes', 'u1', 'A', ARRAY[corpus.pc('a-14',
  corpus.up('todos', corpus.todo('t7', 'w1', 'L1', corpus.noise(1500))))],
  3, 'SET syncular.max_row_bytes = 1024;');
SELECT corpus.add('key too large', 'u1', 'A', ARRAY[corpus.pc('a-15',
  corpus.up('todos', corpus.todo(corpus.noise(1100), 'w1', 'L1', 'long id')))]);
SELECT corpus.add('row validator', 'u1', 'A', ARRAY[corpus.pc('a-16',
  corpus.up('notes', '{"id": "n3", "ws": "w1", "todo_id": null, "body": "fine"}'),
  corpus.up('notes', '{"id": "n1", "body": "bad"}'))]);
SELECT corpus.add('row validator plain', 'u1', 'A', ARRAY[corpus.pc('a-17',
  corpus.up('notes', '{"id": "n4", "ws": "w1", "todo_id": null, "body": "plain"}'))]);
SELECT corpus.add('commit validator', 'u1', 'A', ARRAY[corpus.pc('a-18',
  corpus.up('lists', '{"id": "L3", "ws": "w1", "name": "x"}'),
  corpus.up('lists', '{"id": "L4", "ws": "w1", "name": "commitbad"}'))]);
SELECT corpus.add('missing parent', 'u1', 'A', ARRAY[corpus.pc('a-19',
  corpus.up('todos', corpus.todo('t8', 'w1', 'L77', 'orphan')))]);
SELECT corpus.add('restricted delete', 'u1', 'A', ARRAY[corpus.pc('a-20', corpus.del('lists', 'L2'))]);
SELECT corpus.add('cascade limit', 'u1', 'A', ARRAY[corpus.pc('a-21', corpus.del('lists', 'L1'))],
  3, 'SET syncular.max_cascade_operations_per_commit = 1;');
SELECT corpus.add('cascade set null validator', 'u1', 'A', ARRAY[corpus.pc('a-22',
  corpus.up('notes', '{"id": "n5", "ws": "w1", "todo_id": "t2", "body": "locked"}'),
  corpus.del('lists', 'L1'))]);
SELECT corpus.add('child in w2', 'u2', 'B', ARRAY[corpus.pc('b-10',
  corpus.up('todos', corpus.todo('t11', 'w2', 'L1', 'eleven')))]);
SELECT corpus.add('cascade forbidden', 'u1', 'A', ARRAY[corpus.pc('a-33', corpus.del('lists', 'L1'))]);
SELECT corpus.add('child in w2 gone', 'u2', 'B', ARRAY[corpus.pc('b-11', corpus.del('todos', 't11'))]);
SELECT corpus.add('crdt merge', 'u1', 'A', ARRAY[corpus.pc('a-23',
  corpus.up('todos', jsonb_build_object('id', 't2', 'doc', corpus.yjs(2)), 1))]);
SELECT corpus.add('crdt merge failed', 'u1', 'A', ARRAY[corpus.pc('a-24',
  corpus.up('todos', jsonb_build_object('id', 't2', 'title', 'lost', 'doc', corpus.yjs(3))))]);
SELECT corpus.add('crdt insert failed', 'u1', 'A', ARRAY[corpus.pc('a-25',
  corpus.up('todos', corpus.todo('t10', 'w1', 'L1', 'ten', 1, corpus.yjs(3))))]);
SELECT corpus.add('cascade and set null', 'u1', 'A', ARRAY[corpus.pc('a-26',
  corpus.up('notes', '{"id": "n6", "ws": "w1", "todo_id": "t3", "body": "keep"}'),
  corpus.del('lists', 'L1'))]);
SELECT corpus.add('delete then restrict ok', 'u1', 'A', ARRAY[corpus.pc('a-27',
  corpus.del('tags', '1'), corpus.del('lists', 'L2'))]);
SELECT corpus.add('unknown table', 'u1', 'A', ARRAY[corpus.pc('a-28', corpus.del('nope', 'x'))]);
SELECT corpus.add('pk mismatch', 'u1', 'A', ARRAY[corpus.pc('a-29',
  corpus.up('lists', '{"id": "L5", "ws": "w1", "name": "x"}', NULL, 3, 'L6'))]);
SELECT corpus.add('bad payload', 'u1', 'A', ARRAY[
  corpus.pc('a-30', '{"table": "lists", "rowId": "L5", "op": "upsert", "payload": "AQ=="}')]);
SELECT corpus.add('cache miss', 'u1', 'A', ARRAY[corpus.pc('a-31',
  corpus.up('lists', '{"id": "L5", "ws": "w1", "name": "five"}'))],
  3, 'DO $$ BEGIN PERFORM syncular.inject_fault(''idempotency_cache_miss'', ''p1'', ''A''); END $$;');
SELECT corpus.add('three commits', 'u1', 'A', ARRAY[
  corpus.pc('a-31', corpus.up('lists', '{"id": "L5", "ws": "w1", "name": "five"}')),
  corpus.pc('a-32', corpus.up('lists', '{"id": "L6", "ws": "w1", "name": "six"}', 4)),
  corpus.pc('a-31', corpus.up('lists', '{"id": "L5", "ws": "w1", "name": "five"}'))]);
-- wire 2: versioned full rows, stale base conflicts without a bitmap, scope columns stripped
-- from updates, an unversioned upsert on a deleted row inserts (no delete precedence)
SELECT corpus.add('w2 insert', 'u2', 'W', ARRAY[corpus.pc('w-1',
  corpus.up('lists', '{"id": "M1", "ws": "w2", "name": "m"}', NULL, 2),
  corpus.up('todos', corpus.todo('u1', 'w2', 'M1', 'w2 one'), NULL, 2),
  corpus.up('todos', corpus.todo('u2', 'w2', 'M1', 'w2 two'), NULL, 2))], 2);
SELECT corpus.add('w2 update', 'u2', 'W', ARRAY[corpus.pc('w-2',
  corpus.up('todos', corpus.todo('u1', 'w1', 'M1', 'w2 one!', 5), 1, 2))], 2);
SELECT corpus.add('w2 conflict', 'u2', 'W', ARRAY[corpus.pc('w-3',
  corpus.up('todos', corpus.todo('u1', 'w2', 'M1', 'w2 stale', 6), 1, 2))], 2);
SELECT corpus.add('w2 conflict base 0', 'u2', 'W', ARRAY[corpus.pc('w-4',
  corpus.up('todos', corpus.todo('u2', 'w2', 'M1', 'w2 race'), 0, 2))], 2);
SELECT corpus.add('w2 delete', 'u2', 'W', ARRAY[corpus.pc('w-5', corpus.del('todos', 'u2'))], 2);
SELECT corpus.add('w2 unversioned reinsert', 'u2', 'W', ARRAY[corpus.pc('w-6',
  corpus.up('todos', corpus.todo('u2', 'w2', 'M1', 'w2 again'), NULL, 2))], 2);
SELECT corpus.add('w2 row missing', 'u2', 'W', ARRAY[corpus.pc('w-7',
  corpus.up('todos', corpus.todo('u3', 'w2', 'M1', 'w2 ghost'), 2, 2))], 2);
SELECT corpus.add('w2 base ahead', 'u2', 'W', ARRAY[corpus.pc('w-8',
  corpus.up('todos', corpus.todo('u2', 'w2', 'M1', 'w2 ahead'), 9, 2))], 2);
SELECT corpus.add('w2 unique violation', 'u2', 'W', ARRAY[corpus.pc('w-9',
  corpus.up('todos', corpus.todo('u4', 'w2', 'M1', 'w2 again'), NULL, 2))], 2);
SELECT corpus.add('w2 validator', 'u2', 'W', ARRAY[corpus.pc('w-10',
  corpus.up('notes', '{"id": "m1", "ws": "w2", "todo_id": null, "body": "bad"}', NULL, 2))], 2);
SELECT corpus.add('w2 cascade', 'u2', 'W', ARRAY[corpus.pc('w-11',
  corpus.up('notes', '{"id": "m2", "ws": "w2", "todo_id": "u1", "body": "x"}', NULL, 2),
  corpus.del('lists', 'M1'))], 2);
-- a round that pushes and pulls: the pushed changes as COMMIT frames, wire 3 and wire 2
SELECT corpus.add('push and pull w' || w, 'admin', 'R' || w, ARRAY[corpus.pc('r-' || w,
  corpus.up('lists', jsonb_build_object('id', 'R' || w, 'ws', 'w1', 'name', 'r'), NULL, w))], w, NULL,
  jsonb_build_array(jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 1000,
                                       'limitSnapshotRows', 1000, 'maxSnapshotPages', 4, 'accept', 1))
  || (SELECT jsonb_agg(jsonb_build_object('type', 'SUBSCRIPTION', 'id', t || c, 'table', t,
                                          'scopes', '{"ws": ["w1", "w2"]}'::jsonb, 'cursor', c)
                       ORDER BY o, c DESC)
        FROM unnest(ARRAY['lists', 'todos', 'notes', 'tags']) WITH ORDINALITY u(t, o),
             (VALUES (0), (-1)) v(c)))
  FROM (VALUES (3), (2)) v(w) ORDER BY w DESC;
