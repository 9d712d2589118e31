-- pull_bootstrap: rows-lane bootstrap (push-and-pull.md §3.7): paging by _sync_row_id under
-- COLLATE "C", resume tokens across rounds (no loss, no duplicates, handoff at the pin), unusable
-- tokens restart with a fresh pin whatever the cursor (project decision, §3.5), the first page is
-- always sent, exact scope matching, inline segments (accept bit 0).
\i sql/pull_fixture.psql

-- L1 holds 8 rows whose ids sort differently under C and under linguistic collations
SELECT pg_temp.push('[
 {"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "b", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "B", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "é", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "a", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "_x", "list_id": "L1", "title": null}}]},
 {"clientCommitId": "k2", "operations": [
   {"table": "todos", "row": {"id": "Z", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "9", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "10", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "c1", "list_id": "L2", "title": null}},
   {"table": "todos", "row": {"id": "c2", "list_id": "L2", "title": null}}]},
 {"clientCommitId": "k3", "operations": [
   {"table": "notes", "row": {"id": "n1", "list_id": "L1", "owner_id": "u1", "body": null}},
   {"table": "notes", "row": {"id": "n2", "list_id": "L1", "owner_id": "u2", "body": null}},
   {"table": "notes", "row": {"id": "n3", "list_id": "L1", "owner_id": "u1", "body": null}}]}
]');

-- round 1: 2 pages of 3 rows, C order; incomplete -> resume token, nextCursor = pin = maxSeq = 3
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}]',
                     '{"rows": 3, "pages": 2}');
-- on the wire the token is compact JSON in the reference's member order
SELECT position(convert_to('{"asOfCommitSeq":3,"tables":["todos"],"tableIndex":0,"rowCursor":"a"}', 'UTF8') IN
  syncular.handle(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
    'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'raw', 'schemaVersion', 1,
                         'logEpoch', syncular._producer_epoch('p1', 'admin', 'raw')),
      '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 3, "maxSnapshotPages": 2, "accept": 1}'::jsonb,
      '{"type": "SUBSCRIPTION", "id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": -1}'::jsonb))),
    'p1', 'admin')) > 0 AS token_bytes_compact;
-- meanwhile (after the pin): insert "aa", update "10", delete "b"
SELECT pg_temp.push('[{"clientCommitId": "k4", "operations": [
   {"table": "todos", "row": {"id": "aa", "list_id": "L1", "title": null}},
   {"table": "todos", "row": {"id": "10", "title": "ten"}},
   {"table": "todos", "op": "delete", "rowId": "b"}]}]');
-- round 2 resumes after "a" at the same pin (the client presents cursor = pin and the token):
-- the remaining rows, read current; complete -> no token, nextCursor = the pin (3)
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 3,
  "bootstrapState": {"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0, "rowCursor": "a"}}]',
                     '{"rows": 3, "pages": 2}');
-- round 3, the handoff: cursor = pin, no token -> incremental from the pin replays (pin, maxSeq]
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 3}]');
-- no loss, no duplicates: the pages of rounds 1-2 plus the replay give exactly the current rows
SELECT string_agg(_sync_row_id, ' ' ORDER BY _sync_row_id COLLATE "C") AS current_l1
  FROM public.todos WHERE _sync_partition = 'p1' AND list_id = 'L1';

-- a whole bootstrap in one round (default limits): complete, no token, nextCursor = maxSeq
SELECT pg_temp.round('admin', '[{"id": "all", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": -1}]');
-- the last page holds exactly limitSnapshotRows rows: complete, no token
SELECT pg_temp.round('admin', '[{"id": "l2", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]',
                     '{"rows": 1, "pages": 2}');
-- nothing in scope: the first page is still sent (0 rows) so the client clears; complete
SELECT pg_temp.round('admin', '[{"id": "none", "table": "todos", "scopes": {"list_id": ["L9"]}, "cursor": -1}]');
-- a client accepting only external rows segments gets SEGMENT_REF descriptors (segments_external)
SELECT pg_temp.round('admin', '[{"id": "ext", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]', '{}', 2);

-- exact matching on every variable: n2 (owner u2) is skipped but still advances the keyset
SELECT pg_temp.round('admin', '[{"id": "n", "table": "notes", "scopes": {"list_id": ["L1"], "owner_id": ["u1"]}, "cursor": -1}]',
                     '{"rows": 2, "pages": 1}');
SELECT pg_temp.round('admin', '[{"id": "n", "table": "notes", "scopes": {"list_id": ["L1"], "owner_id": ["u1"]}, "cursor": 3,
  "bootstrapState": {"asOfCommitSeq": 3, "tables": ["notes"], "tableIndex": 0, "rowCursor": "n2"}}]',
                     '{"rows": 2, "pages": 1}');

-- a valid token with rowCursor null resumes from the table start at the token's pin
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 2,
  "bootstrapState": {"asOfCommitSeq": 2, "tables": ["todos"], "tableIndex": 0, "rowCursor": null}}]');

-- regression test for the project decision: a present token that does not parse or does not match
-- restarts the bootstrap with a fresh pin (maxSeq = 4) from the table start, although the cursor
-- (3) would otherwise be incremental
SELECT t AS token, r AS response
  FROM (VALUES ('{"garbage": 1}'), ('[1, 2]'), ('"x"'), ('5'),
               ('{"asOfCommitSeq": 3, "tables": ["notes"], "tableIndex": 0, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": 3, "tables": [], "tableIndex": 0, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 1, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": "3", "tables": ["todos"], "tableIndex": 0, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": 3.5, "tables": ["todos"], "tableIndex": 0, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": 99, "tables": ["todos"], "tableIndex": 0, "rowCursor": "a"}'),
               ('{"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0, "rowCursor": 7}'),
               ('{"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0}')) v(t),
       LATERAL pg_temp.round('admin', jsonb_build_array(jsonb_build_object('id', 'bad', 'table', 'todos',
                 'scopes', '{"list_id": ["L1"]}'::jsonb, 'cursor', 3, 'bootstrapState', t::jsonb)),
                 '{"rows": 2, "pages": 1}') r;

-- behind the horizon: a token pinned below it restarts with a fresh pin; an unusable token
-- bootstraps instead of resetting; without a token the section resets
UPDATE syncular.sync_partitions SET horizon_seq = 4 WHERE partition = 'p1';
SELECT pg_temp.round('admin', '[{"id": "old-pin", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 3,
  "bootstrapState": {"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0, "rowCursor": "c1"}}]');
SELECT pg_temp.round('admin', '[{"id": "bad-token", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 1,
  "bootstrapState": {"nope": true}}]');
SELECT pg_temp.round('admin', '[{"id": "no-token", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 1}]');
-- revocation still comes first, token or not
SELECT pg_temp.round('limited', '[{"id": "rev", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 4,
  "bootstrapState": {"asOfCommitSeq": 4, "tables": ["todos"], "tableIndex": 0, "rowCursor": "c1"}}]');

ROLLBACK;
