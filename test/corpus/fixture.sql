-- Pull corpus fixture (test/corpus/pull_corpus.sh): a deterministic commit log and row state,
-- then the requests whose responses the corpus fingerprints.  Everything a response carries
-- that a run would otherwise vary (log epoch, commit times) is pinned after the pushes, so two
-- builds that serve the same bytes print the same md5 list.
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "qty", "type": "integer", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}", "owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]}]}') IS NOT NULL AS registered;

-- actors: admin sees everything, limited list L1 (any owner), many 40 lists (above the pull's
-- merge limit), owner1 every list but only owner o1's notes
CREATE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE actor
    WHEN 'limited' THEN '{"list_id": ["L1"], "owner_id": "*"}'::jsonb
    WHEN 'many' THEN jsonb_build_object('list_id', (SELECT jsonb_agg('L' || g) FROM generate_series(1, 40) g),
                                        'owner_id', '*')
    WHEN 'owner1' THEN '{"list_id": "*", "owner_id": ["o1"]}'::jsonb
    ELSE '{"list_id": "*", "owner_id": "*"}'::jsonb END
$$;
SELECT syncular.set_scope_resolver('public.resolver(text,text,text)') IS NOT NULL AS resolver;

CREATE SCHEMA corpus;
-- a title: short ASCII, non-ASCII (UTF-8 and the UTF-16 order of scope values), or long enough
-- to be stored compressed (repetitive) or out of line (md5 chains)
CREATE FUNCTION corpus.title(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE i % 7
    WHEN 0 THEN 'title ' || i
    WHEN 1 THEN 'é ' || i || ' 日本 🎉'
    WHEN 2 THEN repeat('compressible ', 300) || i
    WHEN 3 THEN (SELECT string_agg(md5((i * 1000 + g)::text), '') FROM generate_series(1, 120) g)
    ELSE 't' || i END
$$;
-- list of an item at step s: items move between lists as s grows (scopes moving)
CREATE FUNCTION corpus.list(i int, s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN i % 11 = 0 THEN 'Lé' || ((i + s) % 3) ELSE 'L' || (1 + (i * 7 + s * (i % 3)) % 45) END
$$;

-- the commit log: 12 rounds of pushes over todos and notes, updating, deleting and re-creating
-- rows under other scopes (scope columns cannot change on update: a row moves by delete and
-- re-create), and commits that write both tables.  corpus.alive tracks which rows exist, so
-- every commit applies (checked: the fixture fails otherwise).
CREATE TABLE corpus.alive (tbl text, id text, list text, PRIMARY KEY (tbl, id));
CREATE FUNCTION corpus.op(t text, i int, s int, del boolean) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  rid text := CASE t WHEN 'todos' THEN 't' || lpad(i::text, 4, '0') ELSE 'n' || i END;
  cur text := (SELECT a.list FROM corpus.alive a WHERE a.tbl = t AND a.id = rid);
  lst text := coalesce(cur, corpus.list(i, s));
BEGIN
  IF del AND cur IS NOT NULL THEN
    DELETE FROM corpus.alive a WHERE a.tbl = t AND a.id = rid;
    RETURN jsonb_build_object('table', t, 'op', 'delete', 'rowId', rid);
  END IF;
  INSERT INTO corpus.alive VALUES (t, rid, lst) ON CONFLICT DO NOTHING;
  -- a (re-)creation is an insert intent (baseVersion 0): a deleted row comes back (SPEC §6.2)
  RETURN jsonb_build_object('table', t, 'op', 'upsert', 'baseVersion', CASE WHEN cur IS NULL THEN 0 END,
    'row', CASE t
    WHEN 'todos' THEN jsonb_build_object('id', rid, 'list_id', lst, 'title', corpus.title(i + s),
                                         'qty', i * 10 + s)
    ELSE jsonb_build_object('id', rid, 'list_id', lst, 'owner_id', 'o' || (i % 3),
                            'body', corpus.title(i * 3 + s)) END) - CASE WHEN cur IS NULL THEN '' ELSE 'baseVersion' END;
END $$;
CREATE FUNCTION corpus.push(part text, id text, ops jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r jsonb;
BEGIN
  r := syncular.push(part, 'admin', 'writer', jsonb_build_array(jsonb_build_object(
         'clientCommitId', id, 'operations', ops)));
  IF r->0->>'status' <> 'applied' THEN
    RAISE EXCEPTION 'corpus fixture: commit % not applied: %', id, r;
  END IF;
END $$;
DO $$
DECLARE
  s int;
  c int;
  ops jsonb;
BEGIN
  FOR s IN 0..11 LOOP
    FOR c IN 0..9 LOOP
      SELECT jsonb_agg(corpus.op('todos', i, s, s > 2 AND (i + s + c) % 13 = 0) ORDER BY i)
        INTO ops
        FROM generate_series(c * 12 + s % 5, c * 12 + s % 5 + (c % 4) * 5 + 1) i;
      PERFORM corpus.push('p1', format('todo-%s-%s', s, c), ops);
    END LOOP;
    -- notes and todos in one commit (notes sort first in the change index)
    SELECT jsonb_agg(corpus.op('notes', i, s, s % 4 = 3 AND i % 4 = 0) ORDER BY i)
      INTO ops FROM generate_series(s * 3, s * 3 + 8) i;
    ops := ops || jsonb_build_array(corpus.op('todos', 500 + s % 4, s, false));
    PERFORM corpus.push('p1', format('note-%s', s), ops);
  END LOOP;
  -- a second partition with a short log
  PERFORM corpus.push('p2', 'p2-1', jsonb_build_array(jsonb_build_object('table', 'todos',
    'op', 'upsert', 'row', jsonb_build_object('id', 'x', 'list_id', 'L1', 'title', 'p2', 'qty', 1))));
END $$;

-- pin what differs between runs
UPDATE syncular.sync_partition_registry SET log_epoch = 'epoch-' || partition;
UPDATE syncular.sync_commits SET created_at_ms = 1700000000000 + commit_seq * 1000;
ANALYZE;

-- The requests: (name, partition, actor, request bytes, budget); one SUBSCRIPTION per element
-- of subs; wire 2 and 3.
CREATE TABLE corpus.req (n serial PRIMARY KEY, name text NOT NULL, part text NOT NULL,
                         actor text NOT NULL, budget int, req bytea NOT NULL);
CREATE FUNCTION corpus.add(name text, actor text, subs jsonb, commits int DEFAULT 0, nrows int DEFAULT 0,
                           pages int DEFAULT 0, accept int DEFAULT 1, budget int DEFAULT NULL,
                           part text DEFAULT 'p1') RETURNS void LANGUAGE sql AS $$
  INSERT INTO corpus.req (name, part, actor, budget, req)
  SELECT name || ' w' || w, part, actor, budget, syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', w, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'reader-' || actor, 'schemaVersion', 1,
                         'logEpoch', 'epoch-' || part),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', commits, 'limitSnapshotRows', nrows,
                         'maxSnapshotPages', pages, 'accept', accept))
    || (SELECT jsonb_agg(s || '{"type": "SUBSCRIPTION"}' ORDER BY o)
          FROM jsonb_array_elements(subs) WITH ORDINALITY x(s, o))))
    FROM (VALUES (2), (3)) v(w)
$$;
CREATE FUNCTION corpus.sub(id text, tbl text, scopes jsonb, cursor bigint, token jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('id', id, 'table', tbl, 'scopes', scopes,
                                              'cursor', cursor, 'bootstrapState', token::text))
$$;

DO $$
DECLARE
  maxc bigint := (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1');
  cur bigint;
  lim int;
  sc jsonb;
  i int := 0;
BEGIN
  -- incremental windows: cursors over the log, limits from 1 change to the default
  FOREACH cur IN ARRAY ARRAY[0, 1, 7, 20, 45, 77, 100, maxc - 5, maxc - 1, maxc]::bigint[] LOOP
    FOREACH lim IN ARRAY ARRAY[0, 1, 5, 40] LOOP
      FOR sc IN SELECT * FROM jsonb_array_elements('[{"list_id": ["L1"]}, {"list_id": ["L1", "L2", "Lé1"]},
                   {"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}, {"list_id": ["L3", "L30", "L44", "L7", "Lé0", "Lé2"]}]'::jsonb) LOOP
        i := i + 1;
        PERFORM corpus.add(format('inc%s c%s l%s', i, cur, lim), 'admin',
                           jsonb_build_array(corpus.sub('s', 'todos', sc, cur)), lim);
      END LOOP;
      PERFORM corpus.add(format('inc-notes c%s l%s', cur, lim), 'owner1',
        jsonb_build_array(corpus.sub('n', 'notes', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"], "owner_id": ["o0", "o1", "o2"]}', cur),
                          corpus.sub('m', 'notes', '{"list_id": ["L1", "L2"], "owner_id": ["o1"]}', cur),
                          corpus.sub('t', 'todos', '{"list_id": ["L1"]}', cur)), lim);
      PERFORM corpus.add(format('inc-limited c%s l%s', cur, lim), 'limited',
        jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2"]}', cur),
                          corpus.sub('b', 'notes', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', cur)), lim);
      PERFORM corpus.add(format('inc-many c%s l%s', cur, lim), 'many',
        jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', cur)), lim);
    END LOOP;
  END LOOP;
  -- the response budget (its minimum, 64 KiB) over long windows
  FOREACH cur IN ARRAY ARRAY[0, 30, 90]::bigint[] LOOP
    PERFORM corpus.add(format('budget c%s', cur), 'admin',
      jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', cur),
                        corpus.sub('b', 'notes', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"], "owner_id": ["o0", "o1", "o2"]}', cur)),
      0, 0, 0, 1, 65536);
  END LOOP;
  -- bootstrap pages, fresh and resumed, inline and as a sqlite image
  FOREACH lim IN ARRAY ARRAY[0, 1, 7, 50] LOOP
    FOR sc IN SELECT * FROM jsonb_array_elements('[{"list_id": ["L1"]}, {"list_id": ["L1", "L2", "Lé1"]},
                 {"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}]'::jsonb) LOOP
      i := i + 1;
      PERFORM corpus.add(format('boot%s r%s', i, lim), 'admin',
                         jsonb_build_array(corpus.sub('s', 'todos', sc, -1)), 0, lim, 3);
      PERFORM corpus.add(format('boot%s r%s resumed', i, lim), 'admin',
        jsonb_build_array(corpus.sub('s', 'todos', sc, -1, jsonb_build_object(
          'asOfCommitSeq', maxc - 10, 'tables', jsonb_build_array('todos'), 'tableIndex', 0,
          'rowCursor', 't0040'))), 0, lim, 2);
    END LOOP;
    PERFORM corpus.add(format('boot-many r%s', lim), 'many',
      jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', -1),
                        corpus.sub('b', 'notes', '{"list_id": ["L1", "L5"], "owner_id": ["o0", "o2"]}', -1)), 0, lim, 2);
    PERFORM corpus.add(format('boot-owner r%s', lim), 'owner1',
      jsonb_build_array(corpus.sub('b', 'notes', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"], "owner_id": ["o1", "o2"]}', -1)), 0, lim, 4);
  END LOOP;
  PERFORM corpus.add('boot budget', 'admin',
    jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', -1),
                      corpus.sub('b', 'notes', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"], "owner_id": ["o0", "o1", "o2"]}', -1)), 0, 0, 0, 1, 65536);
  PERFORM corpus.add('boot image', 'admin',
    jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2"]}', -1)), 0, 0, 0, 2);
  PERFORM corpus.add('p2 inc', 'admin', jsonb_build_array(corpus.sub('a', 'todos', '{"list_id": ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26", "L27", "L28", "L29", "L30", "L31", "L32", "L33", "L34", "L35", "L36", "L37", "L38", "L39", "L40", "L41", "L42", "L43", "L44", "L45", "Lé0", "Lé1", "Lé2"]}', 0)),
                     0, 0, 0, 1, NULL, 'p2');
END $$;
