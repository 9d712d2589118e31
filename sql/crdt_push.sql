-- crdt_push: CRDT columns in push (SPEC §5.10.3) and the merger registry (§5.10.2):
-- set_crdt_merger's checks, ensure_schema refusing an unknown crdtType until it is registered,
-- merge on insert and on every applied upsert (stored, logged and pulled), crdt-only patches
-- that never conflict, a conflict that applies no merge and shows the merged state in
-- serverRow, replays that do not re-merge, and sync.crdt_merge_failed as a durable rejection
-- (malformed update, a merger that raises, returns NULL, or was dropped).
-- Works in a private database (pg_regress shares one database across tests).
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_crdt_push;
\c syncular_t_crdt_push
\i sql/test_helpers.psql
\set VERBOSITY terse

-- Yjs v1 updates of client 1 on the root text "t" (see crdt_merge.sql): "abc", then "de"
\set a '\\x01010100040101740361626300'
\set b '\\x0101010384010202646500'

-- a host merger: the greater value wins (commutative, associative, idempotent)
CREATE FUNCTION public.max_merge(stored bytea, incoming bytea) RETURNS bytea
LANGUAGE sql AS $$ SELECT CASE WHEN stored IS NULL OR incoming > stored THEN incoming ELSE stored END $$;
CREATE FUNCTION public.strict_merge(stored bytea, incoming bytea) RETURNS bytea
LANGUAGE sql STRICT AS $$ SELECT incoming $$;
CREATE FUNCTION public.text_merge(stored text, incoming text) RETURNS text
LANGUAGE sql AS $$ SELECT incoming $$;

-- registration checks
SELECT pg_temp.try($$SELECT syncular.set_crdt_merger('max', 'public.text_merge(text,text)')$$) AS wrong_types;
SELECT pg_temp.try($$SELECT syncular.set_crdt_merger('max', 'public.strict_merge(bytea,bytea)')$$) AS strict;
SELECT pg_temp.try($$SELECT syncular.set_crdt_merger('', 'public.max_merge(bytea,bytea)')$$) AS empty_type;
SELECT pg_temp.try($$SELECT syncular.set_crdt_merger(NULL, 'public.max_merge(bytea,bytea)')$$) AS null_type;

-- ensure_schema refuses a crdtType that is neither yjs-doc nor registered (§5.10.1) ...
\set ir '{"version": 1, "tables": [{"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "title", "type": "string", "nullable": true}, {"name": "body", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"}, {"name": "score", "type": "crdt", "nullable": true, "crdtType": "max"}]}]}'
SELECT pg_temp.try(format('SELECT syncular.ensure_schema(%L)', :'ir')) AS unregistered;
-- ... and accepts it once registered: register mergers before the schema that uses them
SELECT syncular.set_crdt_merger('max', 'public.max_merge(bytea,bytea)');
SELECT crdt_type, fn FROM syncular.sync_crdt_mergers;
SELECT syncular.ensure_schema(:'ir') ->> 'action' AS action;
SELECT c ->> 'name' AS col, c ->> 'crdtType' AS crdt_type
  FROM syncular.sync_settings s, jsonb_array_elements(s.compiled -> 'tables' -> 0 -> 'columns') c
 WHERE c ->> 'type' = 'crdt';

CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');

-- push(client, commit id, row, baseVersion): one line "<status> <seq> <op results>"
CREATE FUNCTION pg_temp.push(client text, id text, r jsonb, base bigint DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
  SELECT concat_ws(' ', x ->> 'status', coalesce(x ->> 'commitSeq', '-'),
                   (SELECT string_agg(concat_ws(' ', o ->> 'status', o ->> 'code', o ->> 'message',
                                                o ->> 'serverVersion', o -> 'conflictColumns'), '; ')
                      FROM jsonb_array_elements(x -> 'results') o))
    FROM jsonb_array_elements(syncular.push('p1', 'u1', client, jsonb_build_array(jsonb_build_object(
           'clientCommitId', id, 'operations', jsonb_build_array(jsonb_build_object(
             'table', 'notes', 'op', 'upsert', 'row', r)
             || CASE WHEN base IS NULL THEN '{}' ELSE jsonb_build_object('baseVersion', base) END))))) x
$$;
CREATE FUNCTION pg_temp.b64(x bytea) RETURNS text LANGUAGE sql AS $$ SELECT encode(x, 'base64') $$;
-- the stored row: version, title, body and score as hex
CREATE VIEW pg_temp.stored AS
  SELECT id, _sync_server_version AS v, title, encode(body, 'hex') AS body, encode(score, 'hex') AS score
    FROM public.notes ORDER BY id;

-- insert: the stored value is merge(NULL, incoming)
SELECT pg_temp.push('A', 'c1', jsonb_build_object('id', 'n1', 'list_id', 'l1', 'title', 'one',
         'body', pg_temp.b64(:'a'), 'score', pg_temp.b64('\x05')));
SELECT * FROM pg_temp.stored;
-- a crdt-only patch merges, with or without a stale baseVersion (crdt columns never conflict)
SELECT pg_temp.push('B', 'c2', jsonb_build_object('id', 'n1', 'body', pg_temp.b64(:'b'), 'score', pg_temp.b64('\x03')), 1);
SELECT * FROM pg_temp.stored;
SELECT pg_temp.push('A', 'c3', jsonb_build_object('id', 'n1', 'title', 'one!'));
SELECT pg_temp.push('B', 'c4', jsonb_build_object('id', 'n1', 'body', pg_temp.b64(:'a'), 'score', pg_temp.b64('\x07')), 1);
SELECT * FROM pg_temp.stored;
-- a non-crdt column moved past baseVersion: conflict, no merge applied, serverRow carries the
-- merged crdt state (§5.10.3 rule 3)
SELECT pg_temp.push('B', 'c5', jsonb_build_object('id', 'n1', 'title', 'mine', 'score', pg_temp.b64('\x09')), 2);
SELECT r -> 'results' -> 0 -> 'serverRow' ->> 'body' = pg_temp.b64(decode(body, 'hex')) AS server_row_merged,
       r -> 'results' -> 0 -> 'serverRow' ->> 'score' AS server_score
  FROM syncular.push('p1', 'u1', 'B', '[{"clientCommitId": "c5", "operations": [{"table": "notes", "op": "upsert", "row": {"id": "n1", "title": "mine", "score": "CQ=="}, "baseVersion": 2}]}]') p,
       jsonb_array_elements(p) r, pg_temp.stored s;
SELECT * FROM pg_temp.stored;
-- the same commit replayed is cached and not merged again; identical bytes re-pushed under a
-- new id merge to the same state (idempotent merger): only the version moves
SELECT pg_temp.push('B', 'c4', jsonb_build_object('id', 'n1', 'body', pg_temp.b64(:'a'), 'score', pg_temp.b64('\x07')), 1);
SELECT pg_temp.push('B', 'c6', jsonb_build_object('id', 'n1', 'body', pg_temp.b64(:'b'), 'score', pg_temp.b64('\x07')));
SELECT * FROM pg_temp.stored;
-- the logged change and a pull serve the merged bytes
SELECT encode(decode((syncular.decode_row('notes', c.payload)) ->> 'body', 'base64'), 'hex') AS logged_body
  FROM syncular.changes c WHERE c.row_id = 'n1' ORDER BY c.commit_seq DESC LIMIT 1;
SELECT encode(decode(ch -> 'row' ->> 'body', 'base64'), 'hex') AS pulled_body
  FROM jsonb_array_elements(syncular.pull('p1', 'u1', 'R', '[{"id": "s", "table": "notes", "scopes": {"list_id": ["l1"]}}]')) sub,
       jsonb_array_elements(coalesce(sub -> 'rows', '[]')) ch
 LIMIT 1;

-- sync.crdt_merge_failed is a durable rejection of the whole commit: a malformed Yjs update
-- (the title written in the same op is rolled back), replayed unchanged
SELECT pg_temp.push('A', 'f1', jsonb_build_object('id', 'n1', 'title', 'lost', 'body', pg_temp.b64('\x0102')));
SELECT pg_temp.push('A', 'f1', jsonb_build_object('id', 'n1', 'title', 'lost', 'body', pg_temp.b64('\x0102')));
-- on insert too
SELECT pg_temp.push('A', 'f2', jsonb_build_object('id', 'n2', 'list_id', 'l1', 'title', 'two',
         'body', pg_temp.b64('\xff'), 'score', NULL));
-- NULL crdt values are written as NULL without a merge
SELECT pg_temp.push('A', 'c7', jsonb_build_object('id', 'n2', 'list_id', 'l1', 'title', 'two',
         'body', NULL, 'score', NULL));
SELECT * FROM pg_temp.stored;
-- a merger that raises, returns NULL, or was dropped
CREATE FUNCTION public.bad_merge(stored bytea, incoming bytea) RETURNS bytea
LANGUAGE plpgsql AS $$ BEGIN IF incoming = '\x00' THEN RETURN NULL; END IF; RAISE EXCEPTION 'merger exploded'; END $$;
SELECT syncular.set_crdt_merger('max', 'public.bad_merge(bytea,bytea)');
SELECT pg_temp.push('A', 'f3', jsonb_build_object('id', 'n1', 'score', pg_temp.b64('\x01')));
SELECT pg_temp.push('A', 'f4', jsonb_build_object('id', 'n1', 'score', pg_temp.b64('\x00')));
SELECT pg_temp.try($$SELECT syncular.crdt_merge('max', NULL, '\x01')$$) AS sql_raises;
DROP FUNCTION public.bad_merge(bytea, bytea);
SELECT pg_temp.push('A', 'f5', jsonb_build_object('id', 'n1', 'score', pg_temp.b64('\x01')));
SELECT pg_temp.try($$SELECT syncular.crdt_merge('max', NULL, '\x01')$$) AS sql_dropped;
-- unregistering a type the schema uses is allowed: its pushes are then rejected
SELECT syncular.set_crdt_merger('max', NULL);
SELECT pg_temp.push('A', 'f6', jsonb_build_object('id', 'n1', 'score', pg_temp.b64('\x01')));
SELECT * FROM pg_temp.stored;

-- a registration for yjs-doc replaces the built-in merger; unregistering restores it
CREATE FUNCTION public.last_merge(stored bytea, incoming bytea) RETURNS bytea
LANGUAGE sql AS $$ SELECT incoming $$;
SELECT syncular.set_crdt_merger('yjs-doc', 'public.last_merge(bytea,bytea)');
SELECT encode(syncular.crdt_merge('yjs-doc', :'a', '\x0102'), 'hex') AS replaced;
SELECT syncular.set_crdt_merger('yjs-doc', NULL);
SELECT pg_temp.try($$SELECT syncular.crdt_merge('yjs-doc', NULL, '\x0102')$$) AS builtin_again;
SELECT count(*) AS registrations FROM syncular.sync_crdt_mergers;

\c :orig_db
DROP DATABASE syncular_t_crdt_push;
