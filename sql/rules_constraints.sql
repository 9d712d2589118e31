-- rules_constraints: the RFC 0007 relational-constraint scenario (barrier-rfc0007.md §8.5;
-- push-and-pull.md §2.2 step 12).  A compound unique index; a commit whose op 0 is valid and
-- whose op 1 collides with an existing row is rejected at opIndex 1 with
-- sync.constraint_violation; the existing row stays byte-identical; the valid sibling, its
-- row-scope entries and the tombstone it cleared are rolled back; nothing reaches the log; a
-- later unrelated push applies; a replay returns the same stored rejection, byte for byte;
-- neither the response, the stored result nor the LOG line the engine emits names the index.
\set testdb syncular_t_rules_constraints
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "items", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "a", "type": "string", "nullable": false},
     {"name": "b", "type": "integer", "nullable": false},
     {"name": "label", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"],
   "indexes": [{"name": "uq_items_ab", "columns": ["a", "b"], "unique": true}]}]}'::jsonb) ->> 'action' AS schema_action;
-- the physical unique index exists over (partition, a, b)
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'items' AND indexname LIKE 'sync_ix_%';
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l1');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');

-- i1 = (x, 1); i9 is created and deleted, leaving a tombstone
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-1', pg_temp.up('items', '{"id": "i1", "list_id": "l1", "a": "x", "b": 1, "label": "first"}'),
                    pg_temp.up('items', '{"id": "i9", "list_id": "l1", "a": "z", "b": 9, "label": null}')),
  pg_temp.pc('c-2', pg_temp.del('items', 'i9'))));
SELECT _sync_payload AS i1_payload, _sync_server_version AS i1_version FROM public.items WHERE _sync_row_id = 'i1' \gset
SELECT pg_temp.row_state('items', 'p1', 'i1') AS i1_before;
SELECT tbl, row_id, commit_seq FROM syncular.sync_tombstones ORDER BY row_id;
SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1';

-- the scenario: op 0 re-creates i9 (baseVersion 0: clears the tombstone, adds row-scope
-- entries), op 1 inserts i2 = (x, 1), which collides with i1.  The engine's LOG line is shown
-- (client_min_messages = log): fixed text, no constraint or index name.
SET client_min_messages = log;
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-3', pg_temp.up('items', '{"id": "i9", "list_id": "l1", "a": "y", "b": 2, "label": "again"}', 0),
                    pg_temp.up('items', '{"id": "i2", "list_id": "l1", "a": "x", "b": 1, "label": "dup"}')))) AS resp3 \gset
SET client_min_messages = warning;
SELECT * FROM pg_temp.show('p1', :'resp3');
-- the existing row is byte-identical, at the same version
SELECT _sync_payload = :'i1_payload'::bytea AS i1_payload_identical,
       _sync_server_version = :i1_version AS i1_version_same
  FROM public.items WHERE _sync_row_id = 'i1';
SELECT pg_temp.row_state('items', 'p1', 'i1') AS i1_after;
-- the valid sibling is rolled back: no row, no row-scope entries, the tombstone is back
SELECT pg_temp.row_state('items', 'p1', 'i9') AS i9, pg_temp.row_state('items', 'p1', 'i2') AS i2;
SELECT tbl, row_id, var, value FROM syncular.sync_row_scopes ORDER BY row_id;
SELECT tbl, row_id, commit_seq FROM syncular.sync_tombstones ORDER BY row_id;
-- no commit-log entry, no change, no sequence number used
SELECT (SELECT count(*) FROM syncular.sync_commits) AS commits,
       (SELECT count(*) FROM syncular.sync_changes) AS changes,
       (SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1') AS max_seq;
-- the rejection is stored (durable)
SELECT pg_temp.stored('p1', 'A', 'c-3') AS stored_c3;
-- nothing of the index or constraint name in the response bytes, its rendering, or the record
SELECT position('uq_items_ab'::bytea IN :'resp3'::bytea) = 0 AS resp_no_index_name,
       position('sync_ix_'::bytea IN :'resp3'::bytea) = 0 AS resp_no_physical_name,
       position('duplicate'::bytea IN :'resp3'::bytea) = 0 AS resp_no_pg_message,
       syncular.debug_render(:'resp3')::text !~ '(uq_items|sync_ix|duplicate|23505)' AS render_clean,
       pg_temp.stored('p1', 'A', 'c-3')::text !~ '(uq_items|sync_ix|duplicate)' AS record_clean;

-- a later unrelated push applies (i3 = (x, 2) does not collide)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-4', pg_temp.up('items', '{"id": "i3", "list_id": "l1", "a": "x", "b": 2, "label": null}'))));

-- the replay of c-3 returns the same stored rejection without retrying the writes (no LOG
-- line: nothing is executed), and its bytes equal the first answer
SET client_min_messages = log;
SELECT pg_temp.resp('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-3', pg_temp.up('items', '{"id": "i9", "list_id": "l1", "a": "y", "b": 2, "label": "again"}', 0),
                    pg_temp.up('items', '{"id": "i2", "list_id": "l1", "a": "x", "b": 1, "label": "dup"}')))) AS resp3b \gset
SET client_min_messages = warning;
SELECT :'resp3b'::bytea = :'resp3'::bytea AS replay_byte_identical;
SELECT * FROM pg_temp.show('p1', :'resp3b');
SELECT pg_temp.row_state('items', 'p1', 'i9') AS i9_still_absent,
       (SELECT count(*) FROM syncular.sync_commits) AS commits;

-- the same collision on an update (op 0 valid, op 1 moves i3 onto (x, 1)), and a collision
-- within the commit itself (both ops insert (q, 5)): rejected at the second op
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-5', pg_temp.up('items', '{"id": "i4", "list_id": "l1", "a": "w", "b": 4, "label": null}'),
                    pg_temp.up('items', '{"id": "i3", "b": 1}')),
  pg_temp.pc('c-6', pg_temp.up('items', '{"id": "i5", "list_id": "l1", "a": "q", "b": 5, "label": null}'),
                    pg_temp.up('items', '{"id": "i6", "list_id": "l1", "a": "q", "b": 5, "label": null}'))));
SELECT _sync_row_id, a, b, _sync_server_version FROM public.items ORDER BY 1;

\i sql/rules_done.psql
