-- push_batch: the row-write batch (push_rows.c).  A commit's upserts of a table without
-- triggers, rules, row validator or blob_ref column are written per table in one statement;
-- the batch is flushed before a read of a row it holds, a row validator, a delete, a write of
-- another kind of table, a rejection and the end of the operations.  The outcome must be the
-- one of the op-by-op path: a constraint violation names the operation that caused it,
-- validators and declared references see the commit's earlier writes, and rows, changes and
-- stored results are the same as when every write is its own statement.
-- cmin (the command id of the statement that wrote a row version) shows where the statements
-- were: rows written by one statement share it.
\set testdb syncular_t_push_batch
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "items", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "n", "type": "integer", "nullable": false},
     {"name": "label", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"],
   "indexes": [{"name": "uq_items_label", "columns": ["label"], "unique": true}]},
  {"name": "notes", "primaryKey": "id", "columns": [
     {"name": "id", "type": "integer", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "item_id", "type": "string", "nullable": true},
     {"name": "body", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"],
   "references": [{"column": "item_id", "parentTable": "items"}]},
  {"name": "checks", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "item_id", "type": "string", "nullable": false}],
   "scopes": ["list:{list_id}"]}]}'::jsonb) ->> 'action' AS schema_action;
-- a relational CHECK the engine does not know about (class 23 when violated)
ALTER TABLE public.items ADD CONSTRAINT items_n_nonnegative CHECK (n >= 0);
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l1');
-- a row validator on checks that reads items: the item must exist (in this commit or before)
CREATE FUNCTION public.validate_check(op text, tbl text, row_id text, r jsonb, stored jsonb,
                                      actor text, part text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF op = 'upsert' AND NOT EXISTS (SELECT 1 FROM public.items i
                                    WHERE i._sync_partition = part AND i.id = r ->> 'item_id') THEN
    RAISE EXCEPTION 'no such item' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.no_item", "message": "the item does not exist"}';
  END IF;
END
$$;
SELECT syncular.set_row_validator('checks', 'public.validate_check(text, text, text, jsonb, jsonb, text, text)') IS NOT NULL AS registered;
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');

-- item(i, n): an insert of item i<n> with label lab<i>
CREATE FUNCTION pg_temp.item(i int, n int DEFAULT 1, lab text DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT pg_temp.up('items', jsonb_build_object('id', 'i' || lpad(i::text, 3, '0'), 'list_id', 'l1',
                                                'n', n, 'label', coalesce(lab, 'lab' || i)))
$$;
-- cmins(partition, table): how many statements wrote the partition's rows of the table
CREATE FUNCTION pg_temp.cmins(part text, tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c bigint;
BEGIN
  EXECUTE format('SELECT count(DISTINCT cmin::text::int) FROM public.%I WHERE _sync_partition = $1', tbl)
    INTO c USING part;
  RETURN c;
END
$$;
-- state(partition): rows, row-scope entries, commits, changes of a partition (no partition
-- names, no sequence-independent noise), to compare partitions
CREATE FUNCTION pg_temp.state(part text) RETURNS TABLE (what text, v text) LANGUAGE sql AS $$
  SELECT 'items', string_agg(format('%s v%s cv=%s %s %s', _sync_row_id, _sync_server_version,
           encode(_sync_column_versions, 'hex'), _sync_scopes, encode(_sync_payload, 'hex')), '; '
           ORDER BY _sync_row_id) FROM public.items WHERE _sync_partition = part
  UNION ALL
  SELECT 'items projection', string_agg(format('%s %s %s', id, n, label), '; ' ORDER BY id)
    FROM public.items WHERE _sync_partition = part
  UNION ALL
  SELECT 'notes', string_agg(format('%s v%s cv=%s %s %s', _sync_row_id, _sync_server_version,
           encode(_sync_column_versions, 'hex'), _sync_scopes, encode(_sync_payload, 'hex')), '; '
           ORDER BY _sync_row_id) FROM public.notes WHERE _sync_partition = part
  UNION ALL
  SELECT 'row scopes', string_agg(format('%s/%s %s=%s', tbl, row_id, var, value), '; '
           ORDER BY tbl, row_id, var) FROM syncular.sync_row_scopes WHERE partition = part
  UNION ALL
  SELECT 'changes', string_agg(format('%s %s %s v%s %s %s', tbl, row_id, op, row_version, scopes,
           encode(payload, 'hex')), '; ' ORDER BY commit_seq, idx)
    FROM syncular.changes WHERE partition = part
  UNION ALL
  SELECT 'tombstones', string_agg(format('%s/%s', tbl, row_id), '; ' ORDER BY tbl, row_id)
    FROM syncular.sync_tombstones WHERE partition = part
$$;

-- 1. a 100-op commit is one row statement; its changes are written after it
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('c-100', VARIADIC
  (SELECT array_agg(pg_temp.item(i) ORDER BY i) FROM generate_series(1, 100) i))));
SELECT count(*) AS items, pg_temp.cmins('p1', 'items') AS item_statements,
       (SELECT count(*) FROM syncular.sync_row_scopes WHERE partition = 'p1') AS row_scopes
  FROM public.items WHERE _sync_partition = 'p1';

-- 2. op 57 of 100 violates the CHECK (n = -1): rejected at opIndex 57, nothing written; the
-- next commit of the same request applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-check', VARIADIC (SELECT array_agg(pg_temp.item(i, CASE WHEN i = 257 THEN -1 ELSE 1 END) ORDER BY i)
                                   FROM generate_series(200, 299) i)),
  pg_temp.pc('c-after', pg_temp.item(301))));
SELECT pg_temp.stored('p1', 'A', 'c-check') AS stored_check;
-- op 57 of 100 repeats the label of op 12 (unique index): rejected at opIndex 57
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-unique', VARIADIC (SELECT array_agg(pg_temp.item(i, 1, CASE WHEN i = 457 THEN 'lab412' END) ORDER BY i)
                                   FROM generate_series(400, 499) i))));
-- op 57 violates the CHECK and op 80 is refused on its own (baseVersion 3 on an absent row):
-- the earlier operation's violation is the commit's answer
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-two', VARIADIC (SELECT array_agg(CASE WHEN i = 580 THEN
      pg_temp.up('items', '{"id": "zz", "list_id": "l1", "n": 1}', 3)
    ELSE pg_temp.item(i, CASE WHEN i = 557 THEN -1 ELSE 1 END) END ORDER BY i) FROM generate_series(500, 599) i))));
SELECT count(*) FILTER (WHERE id BETWEEN 'i200' AND 'i299' OR id BETWEEN 'i400' AND 'i599' OR id = 'zz') AS rejected_rows_written, count(*) AS items,
       (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1') AS max_seq
  FROM public.items WHERE _sync_partition = 'p1';

-- 3. the same row written three times in one commit (insert, update, update), between writes
-- of other rows
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('c-same',
  pg_temp.item(700, 1), pg_temp.item(701, 1),
  pg_temp.up('items', '{"id": "i700", "n": 2}'), pg_temp.item(702, 1),
  pg_temp.up('items', '{"id": "i700", "n": 3, "label": "third"}'))));
SELECT pg_temp.row_state('items', 'p1', 'i700') AS i700;

-- 4. a row validator that reads items sees the items written earlier in the same commit
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-val', pg_temp.item(800), pg_temp.item(801),
    pg_temp.up('checks', '{"id": "k1", "list_id": "l1", "item_id": "i801"}'),
    pg_temp.item(802)),
  pg_temp.pc('c-val-no', pg_temp.item(803),
    pg_temp.up('checks', '{"id": "k2", "list_id": "l1", "item_id": "i804"}'),
    pg_temp.item(804))));

-- 5. a declared reference to an item written earlier in the same commit; mixed tables
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-ref', pg_temp.item(900), pg_temp.up('notes', '{"id": 1, "list_id": "l1", "item_id": "i900", "body": "a"}'),
    pg_temp.item(901), pg_temp.up('notes', '{"id": 2, "list_id": "l1", "item_id": "i901", "body": "b"}'),
    pg_temp.up('notes', '{"id": 1, "body": "a2"}')),
  pg_temp.pc('c-ref-missing', pg_temp.item(902), pg_temp.up('notes', '{"id": 3, "list_id": "l1", "item_id": "i999", "body": "c"}'))));
SELECT pg_temp.row_state('notes', 'p1', '1') AS note1, pg_temp.cmins('p1', 'notes') AS note_statements;

-- 6. deletes between upserts keep the order of the writes.  i950 holds label "keep": an insert
-- taking "keep" before the delete of i950 is a violation at the insert; after it, it applies
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('c-950', pg_temp.item(950, 1, 'keep'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-del-after', pg_temp.item(951), pg_temp.item(952, 1, 'keep'), pg_temp.del('items', 'i950'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-del-before', pg_temp.item(953), pg_temp.del('items', 'i950'), pg_temp.item(954, 1, 'keep'),
    pg_temp.item(955), pg_temp.del('items', 'i953'), pg_temp.item(953, 5))));
SELECT pg_temp.row_state('items', 'p1', 'i953') AS i953, pg_temp.row_state('items', 'p1', 'i954') AS i954,
       pg_temp.row_state('items', 'p1', 'i950') AS i950;

-- 7. the same operations as one commit (p2) and as one-op commits (p3): the same rows, row-scope
-- entries, changes (in order) and tombstones
SELECT count(*) FROM pg_temp.acquire('p2', 'u1', 'B');
SELECT count(*) FROM pg_temp.acquire('p3', 'u1', 'C');
CREATE TEMP TABLE ops AS SELECT o, k FROM unnest(ARRAY[
  pg_temp.item(1, 1), pg_temp.item(2, 2),
  pg_temp.up('notes', '{"id": 10, "list_id": "l1", "item_id": "i001", "body": "x"}'),
  pg_temp.up('items', '{"id": "i001", "n": 7}'), pg_temp.item(3, 3),
  pg_temp.del('items', 'i002'), pg_temp.item(4, 4, 'lab2'),
  pg_temp.up('notes', '{"id": 10, "body": "y"}'), pg_temp.up('items', '{"id": "i003", "label": null}'),
  pg_temp.del('items', 'i003'), pg_temp.item(5, 5)]) WITH ORDINALITY AS x(o, k);
SELECT * FROM pg_temp.round('p2', 'u1', 'B', jsonb_build_array(pg_temp.pc('one', VARIADIC
  (SELECT array_agg(o ORDER BY k) FROM ops))));
SELECT count(*) AS applied_commits FROM (SELECT pg_temp.round('p3', 'u1', 'C', jsonb_build_array(pg_temp.pc('op' || k, o)))
  FROM ops ORDER BY k) x WHERE x.round LIKE 'PUSH_RESULT % applied%';
SELECT a.what, a.v IS NOT DISTINCT FROM b.v AS same, a.v IS NOT NULL AS present
  FROM pg_temp.state('p2') a JOIN pg_temp.state('p3') b USING (what);

-- 7b. a row deleted behind the engine's back (the superuser-only capture bypass) keeps its
-- row-scope entry: writers address a row's entries by primary key from the scopes stored with
-- the row (docs/storage.md, "Commit log layout"), and here none is stored.  A batched commit
-- writing the row again with other scopes adds the new entry and leaves the stale one (l1),
-- which a bootstrap skips: each candidate row is checked against its stored scopes.
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l2');
-- (behind the capture triggers too: the bypass the engine's own rewrites use)
BEGIN;
SELECT syncular._capture_bypass(true);
DELETE FROM public.items WHERE _sync_partition = 'p2' AND _sync_row_id = 'i004';
COMMIT;
SELECT * FROM pg_temp.round('p2', 'u1', 'B', jsonb_build_array(pg_temp.pc('stale', pg_temp.item(40),
  pg_temp.up('items', '{"id": "i004", "list_id": "l2", "n": 4, "label": "moved"}'), pg_temp.item(41))));
SELECT row_id, var, value FROM syncular.sync_row_scopes
 WHERE partition = 'p2' AND tbl = 'items' AND row_id IN ('i004', 'i040', 'i041') ORDER BY 1, 2, 3;
-- one statement wrote the three rows (the batch, not its op-by-op replay)
SELECT count(DISTINCT cmin::text) AS statements FROM public.items
 WHERE _sync_partition = 'p2' AND id IN ('i004', 'i040', 'i041');

-- 7c. a commit that updates stored rows (their scopes stay) and inserts new ones between them:
-- the updates are one plain UPDATE, the new rows one insert (two statements, each row written
-- once), with the rows, versions and row-scope entries of the op-by-op path (section 7)
SELECT count(*) FROM pg_temp.acquire('p6', 'u1', 'B');
SELECT * FROM pg_temp.round('p6', 'u1', 'B', jsonb_build_array(pg_temp.pc('first', VARIADIC
  (SELECT array_agg(pg_temp.item(i) ORDER BY i) FROM generate_series(1, 6) i))));
SELECT * FROM pg_temp.round('p6', 'u1', 'B', jsonb_build_array(pg_temp.pc('mixed', VARIADIC
  (SELECT array_agg(pg_temp.item(i, 10 + i) ORDER BY i) FROM generate_series(4, 9) i))));
SELECT count(DISTINCT cmin::text) FILTER (WHERE _sync_server_version = 2) AS update_statements,
       count(DISTINCT cmin::text) FILTER (WHERE id BETWEEN 'i007' AND 'i009') AS insert_statements,
       count(DISTINCT cmin::text) FILTER (WHERE id BETWEEN 'i004' AND 'i009') AS statements
  FROM public.items WHERE _sync_partition = 'p6';
SELECT _sync_row_id, _sync_server_version, n, encode(_sync_column_versions, 'hex') AS cv, _sync_scopes
  FROM public.items WHERE _sync_partition = 'p6' ORDER BY 1;
SELECT string_agg(row_id || ' ' || var || '=' || value, '; ' ORDER BY row_id) AS row_scopes
  FROM syncular.sync_row_scopes WHERE partition = 'p6';
SELECT string_agg(format('%s v%s', row_id, row_version), '; ' ORDER BY commit_seq, idx) AS changes
  FROM syncular.changes WHERE partition = 'p6';

-- 8. the same commits with every write its own statement (a trigger on items and notes makes
-- them not batchable; last: relhastriggers stays set): byte-identical responses, stored
-- results, rows and changes
SELECT count(*) FROM pg_temp.acquire('p4', 'u1', 'B');
SELECT count(*) FROM pg_temp.acquire('p5', 'u1', 'B');
SELECT pg_temp.req('p4', 'B', jsonb_build_array(
  pg_temp.pc('one', VARIADIC (SELECT array_agg(o ORDER BY k) FROM ops)),
  pg_temp.pc('c-check', VARIADIC (SELECT array_agg(pg_temp.item(i, CASE WHEN i = 257 THEN -1 ELSE 1 END) ORDER BY i)
                                   FROM generate_series(200, 299) i)),
  pg_temp.pc('c-100', VARIADIC (SELECT array_agg(pg_temp.item(i) ORDER BY i) FROM generate_series(101, 200) i)))) AS req4 \gset
SELECT pg_temp.req('p5', 'B', jsonb_build_array(
  pg_temp.pc('one', VARIADIC (SELECT array_agg(o ORDER BY k) FROM ops)),
  pg_temp.pc('c-check', VARIADIC (SELECT array_agg(pg_temp.item(i, CASE WHEN i = 257 THEN -1 ELSE 1 END) ORDER BY i)
                                   FROM generate_series(200, 299) i)),
  pg_temp.pc('c-100', VARIADIC (SELECT array_agg(pg_temp.item(i) ORDER BY i) FROM generate_series(101, 200) i)))) AS req5 \gset
SELECT syncular.handle(:'req4'::bytea, 'p4', 'u1') AS resp4 \gset
SELECT pg_temp.cmins('p4', 'items') AS p4_item_statements;
CREATE FUNCTION public.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER noop BEFORE INSERT ON public.items FOR EACH ROW EXECUTE FUNCTION public.noop();
CREATE TRIGGER noop BEFORE INSERT ON public.notes FOR EACH ROW EXECUTE FUNCTION public.noop();
SELECT syncular.handle(:'req5'::bytea, 'p5', 'u1') AS resp5 \gset
SELECT pg_temp.cmins('p5', 'items') AS p5_item_statements;
SELECT * FROM pg_temp.show('p5', :'resp5');
-- the responses differ only in the partition's epoch (RESP_HEADER)
SELECT octet_length(:'resp4'::bytea) = octet_length(:'resp5'::bytea) AS same_length,
       (SELECT jsonb_agg(f) FROM jsonb_array_elements(syncular.debug_render(:'resp4'::bytea) -> 'frames') f
         WHERE f ->> 'type' <> 'RESP_HEADER')
     = (SELECT jsonb_agg(f) FROM jsonb_array_elements(syncular.debug_render(:'resp5'::bytea) -> 'frames') f
         WHERE f ->> 'type' <> 'RESP_HEADER') AS results_identical;
SELECT r4.client_commit_id, pg_temp.stored('p4', 'B', r4.client_commit_id) = pg_temp.stored('p5', 'B', r4.client_commit_id) AS stored_identical
  FROM syncular.push_results r4 WHERE r4.partition = 'p4' ORDER BY 1;
SELECT a.what, a.v IS NOT DISTINCT FROM b.v AS same, a.v IS NOT NULL AS present
  FROM pg_temp.state('p4') a JOIN pg_temp.state('p5') b USING (what);

\i sql/rules_done.psql
