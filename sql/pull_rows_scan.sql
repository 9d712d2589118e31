-- pull_rows_scan: the rows lane's direct ordered scan (pull_rows.c, SPEC §3.7): page boundaries
-- and resume cursors in byte order whatever the synced table's key collation (its primary key
-- walked forward, a descent where the two orders disagree), rows outside the grant next to
-- granted ones, a subscription with more scope values than the merged scans take (the ids then
-- come from one statement: same pages), and rows changed between pages.
\i sql/pull_fixture.psql

-- drain(actor, subscription, limits): bootstrap rounds from scratch until the section is
-- complete; "<rounds> rounds, <pages> pages: <ids in received order>"
CREATE FUNCTION pg_temp.drain(actor text, sub jsonb, lim jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  resp jsonb; f jsonb; seg jsonb; state jsonb; ids text[] := '{}'; pages int := 0; rounds int := 0;
  cursor bigint := -1;
BEGIN
  LOOP
    rounds := rounds + 1;
    resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
      'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
        jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'drain-' || actor, 'schemaVersion', 1,
                           'logEpoch', syncular._producer_epoch('p1', actor, 'drain-' || actor)),
        jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0,
                           'limitSnapshotRows', (lim->>'rows')::int,
                           'maxSnapshotPages', (lim->>'pages')::int, 'accept', 1),
        sub || jsonb_build_object('type', 'SUBSCRIPTION', 'cursor', cursor)
            || coalesce(jsonb_build_object('bootstrapState', state), '{}')))), 'p1', actor));
    state := NULL;
    FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
      IF f->>'type' = 'SEGMENT_INLINE' THEN
        pages := pages + 1;
        seg := syncular.debug_render(decode(f->>'payload', 'base64'));
        ids := ids || ARRAY(SELECT r->'values'->>'id'
                              FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY y(blk, b),
                                   jsonb_array_elements(blk) WITH ORDINALITY x(r, o) ORDER BY b, o);
      ELSIF f->>'type' = 'SUB_END' THEN
        cursor := (f->>'nextCursor')::bigint;
        state := f->'bootstrapState';
      END IF;
    END LOOP;
    EXIT WHEN state IS NULL OR rounds > 100;
  END LOOP;
  RETURN format('%s rounds, %s pages: %s', rounds, pages, array_to_string(ids, ' '));
END $$;

-- granted (L1) and other (L2) rows alternate in id order; pages of 2 rows over L1 alone
SELECT pg_temp.push(jsonb_build_array(jsonb_build_object('clientCommitId', 'i1', 'operations',
  (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'row', jsonb_build_object(
            'id', 'r' || lpad(g::text, 2, '0'), 'list_id', CASE WHEN g % 2 = 1 THEN 'L1' ELSE 'L2' END,
            'title', NULL)) ORDER BY g)
     FROM generate_series(1, 12) g))));
SELECT pg_temp.round('limited', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                     '{"rows": 2, "pages": 2}');
SELECT pg_temp.drain('limited', '{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}}',
                     '{"rows": 2, "pages": 2}');
-- both lists: one merged pass, each row once, byte order
SELECT pg_temp.drain('admin', '{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}}',
                     '{"rows": 5, "pages": 1}');
-- L2 asked by an actor granted only L1: nothing of L2 is served (revoked)
SELECT pg_temp.round('limited', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]');

-- 41 scope values (more than the merged scans take): the ids come from one statement, the
-- same pages and order as with the two values that hold rows
SELECT pg_temp.drain('admin', jsonb_build_object('id', 's', 'table', 'todos', 'scopes', jsonb_build_object(
         'list_id', (SELECT jsonb_agg('L' || g) FROM generate_series(0, 40) g))),
       '{"rows": 5, "pages": 1}');

-- a key collation that orders ids unlike bytes (ICU, "a" < "B" < "b"): mixed-case ids, pages
-- still in byte order; the walker first steps over the other case, then gives up and descends
SELECT pg_temp.push(jsonb_build_array(jsonb_build_object('clientCommitId', 'i2', 'operations',
  (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'row', jsonb_build_object(
            'id', c || lpad(g::text, 3, '0'), 'list_id', 'L3', 'title', NULL)) ORDER BY g, c)
     FROM generate_series(1, 90) g, unnest(ARRAY['a', 'B']) c))));
-- (hand-made DDL on a synced table: the DDL guard lets it through with the superuser escape hatch)
SET syncular.allow_synced_table_ddl = on;
ALTER TABLE public.todos ALTER COLUMN _sync_row_id TYPE text COLLATE "en-x-icu";
RESET syncular.allow_synced_table_ddl;
SELECT (SELECT string_agg(_sync_row_id, ' ' ORDER BY _sync_row_id)
          FROM (SELECT _sync_row_id FROM public.todos WHERE list_id = 'L3'
                 ORDER BY _sync_row_id LIMIT 4) x) AS key_order_starts;
WITH d AS (SELECT pg_temp.drain('admin', '{"id": "s", "table": "todos", "scopes": {"list_id": ["L3"]}}',
                                '{"rows": 50, "pages": 2}') AS r)
SELECT split_part(r, ':', 1) AS drained,
       split_part(r, ': ', 2) = (SELECT string_agg(_sync_row_id, ' ' ORDER BY _sync_row_id COLLATE "C")
                                   FROM public.todos WHERE list_id = 'L3') AS byte_order_each_once
  FROM d;
-- mixed with the other lists under the same collation
SELECT pg_temp.drain('admin', '{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}}',
                     '{"rows": 4, "pages": 2}');

-- rows changed between rounds: round 1 ends at r05 (pin 2); then r03 and r06 are deleted, r07
-- updated, r061 (after the cursor) and r00 (before it) inserted: round 2 resumes after r05 and
-- reads the current rows (r061 and the new r07, not r06); r00 and the deletes come with the
-- incremental handoff from the pin
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": -1}]',
                     '{"rows": 5, "pages": 1}');
SELECT pg_temp.push('[{"clientCommitId": "i3", "operations": [
   {"table": "todos", "op": "delete", "rowId": "r03"},
   {"table": "todos", "op": "delete", "rowId": "r06"},
   {"table": "todos", "row": {"id": "r07", "title": "seven"}},
   {"table": "todos", "row": {"id": "r061", "list_id": "L2", "title": null}},
   {"table": "todos", "row": {"id": "r00", "list_id": "L1", "title": null}}]}]');
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": 2,
  "bootstrapState": {"asOfCommitSeq": 2, "tables": ["todos"], "tableIndex": 0, "rowCursor": "r05"}}]',
                     '{"rows": 5, "pages": 1}');


-- a pull round whose client record would not change (same cursor, subscriptions and wire
-- version, written within a second) writes nothing: updated_at_ms stays; other subscriptions write
SELECT max_commit_seq AS top FROM syncular.partitions WHERE partition = 'p1' \gset
SELECT count(*) FROM pg_temp.round('admin', format('[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": %s}]', :top)::jsonb);
SELECT updated_at_ms AS before_ms FROM syncular.sync_clients WHERE client_id = 'reader-admin' \gset
SELECT pg_sleep(0.02);
SELECT count(*) FROM pg_temp.round('admin', format('[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": %s}]', :top)::jsonb);
SELECT updated_at_ms = :before_ms AS unchanged_not_written, cursor = :top AS cursor_kept
  FROM syncular.sync_clients WHERE client_id = 'reader-admin';
SELECT count(*) FROM pg_temp.round('admin', format('[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": %s}]', :top)::jsonb);
SELECT updated_at_ms > :before_ms AS changed_written, subscriptions->0->'scopes' AS subscriptions
  FROM syncular.sync_clients WHERE client_id = 'reader-admin';

-- ordinary SQL writes to the table with its key in that collation: the capture compares its row
-- ids with the catalog's ("C") under "C" (a multi-row INSERT with tombstones in the partition,
-- an UPDATE that moves rows to another scope value, a DELETE)
SET syncular.partition = 'p1';
INSERT INTO public.todos (id, list_id) VALUES ('s1', 'L1'), ('s2', 'L1');
UPDATE public.todos SET list_id = 'L2' WHERE id IN ('s1', 's2');
SELECT count(*) AS moved_entries FROM syncular.sync_row_scopes
 WHERE partition = 'p1' AND row_id IN ('s1', 's2') AND value = 'L2';
DELETE FROM public.todos WHERE id IN ('s1', 's2');
SELECT count(*) AS tombstones FROM syncular.sync_tombstones
 WHERE partition = 'p1' AND row_id IN ('s1', 's2');

ROLLBACK;
