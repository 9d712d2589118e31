-- pull_incremental: commit windows (push-and-pull.md §3.6): scope filtering through the first
-- effective variable then exact matching, limitCommits (commits never split, the first always
-- delivered), nextCursor rules; revoked; reset at the horizon, cursor = horizon incremental.
\i sql/pull_fixture.psql

-- the log: commit 1..7
SELECT pg_temp.push('[
 {"clientCommitId": "k1", "operations": [{"table": "todos", "row": {"id": "t1", "list_id": "L1", "title": "one"}}]},
 {"clientCommitId": "k2", "operations": [{"table": "todos", "row": {"id": "t2", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t3", "list_id": "L1", "title": null}}]},
 {"clientCommitId": "k3", "operations": [{"table": "todos", "row": {"id": "x1", "list_id": "L2", "title": null}}]},
 {"clientCommitId": "k4", "operations": [{"table": "todos", "row": {"id": "t4", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t5", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "t6", "list_id": "L1", "title": null}}]},
 {"clientCommitId": "k5", "operations": [{"table": "todos", "row": {"id": "t1", "title": "uno"}},
                                         {"table": "todos", "op": "delete", "rowId": "t3"}]},
 {"clientCommitId": "k6", "operations": [{"table": "todos", "row": {"id": "t7", "list_id": "L1", "title": null}},
                                         {"table": "todos", "row": {"id": "x2", "list_id": "L2", "title": null}},
                                         {"table": "notes", "row": {"id": "n0", "list_id": "L1", "owner_id": "u1", "body": null}}]},
 {"clientCommitId": "k7", "operations": [{"table": "todos", "row": {"id": "x3", "list_id": "L2", "title": null}}]}
]');

-- everything of L1 after 0 (defaults: limitCommits 1000); only todos changes of L1; the cursor
-- advances to maxSeq = 7 even though commit 7 does not match
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]');
-- two values of the variable
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L2", "L1"]}, "cursor": 4}]');

-- limitCommits counts changes and never splits a commit
-- limit 2: commit 1 (1 change) fits, commit 2 (2 changes) would pass 2 -> held back; next = 1
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]', '{"commits": 2}');
-- limit 3: commits 1 and 2 fill the budget exactly; the look-ahead sees commit 4 -> next = 2
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0}]', '{"commits": 3}');
-- limit 1: the first commit is delivered whole although it has 3 changes; next = 4
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 2}]', '{"commits": 1}');
-- limit 3 from 4: commits 5 (2 changes) and 6 (1 of L1) fill the budget exactly and nothing
-- matches after them: within budget -> next = maxSeq = 7
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 4}]', '{"commits": 3}');
-- caught up: no commits, cursor stays at maxSeq
SELECT pg_temp.round('admin', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 7}]');

-- exact matching on every effective variable: the window is driven by list_id (first in sorted
-- order); notes of owner u2 in L1 are filtered out afterwards
SELECT pg_temp.push('[
 {"clientCommitId": "k8", "operations": [{"table": "notes", "row": {"id": "n1", "list_id": "L1", "owner_id": "u1", "body": "mine"}},
                                         {"table": "notes", "row": {"id": "n2", "list_id": "L1", "owner_id": "u2", "body": "theirs"}}]},
 {"clientCommitId": "k9", "operations": [{"table": "notes", "row": {"id": "n3", "list_id": "L1", "owner_id": "u2", "body": null}}]},
 {"clientCommitId": "k10", "operations": [{"table": "notes", "row": {"id": "n4", "list_id": "L2", "owner_id": "u1", "body": null}}]}
]');
SELECT pg_temp.round('admin', '[{"id": "mine", "table": "notes", "scopes": {"owner_id": ["u1"], "list_id": ["L1"]}, "cursor": 0}]');
-- a commit whose only candidate changes fail the exact match is not delivered; with limit 1 the
-- look-ahead still ends within budget (1 matching change) -> next = maxSeq
SELECT pg_temp.round('admin', '[{"id": "mine", "table": "notes", "scopes": {"owner_id": ["u1"], "list_id": ["L1"]}, "cursor": 6}]', '{"commits": 1}');

-- sections come in request order, each with its own decision
SELECT pg_temp.round('admin', '[{"id": "a", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 0},
                                {"id": "b", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 10},
                                {"id": "c", "table": "notes", "scopes": {"list_id": ["L2"], "owner_id": ["u1"]}, "cursor": 9}]');

-- revoked: no commits, empty scopes, nextCursor = the request cursor
SELECT pg_temp.round('limited', '[{"id": "r", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 3},
                                  {"id": "ok", "table": "todos", "scopes": {"list_id": ["L1", "L2"]}, "cursor": 6}]');

-- the pruning horizon (set directly here): 0 <= cursor < horizon -> reset sync.cursor_expired with
-- nextCursor = the request cursor; cursor = horizon is still incremental (B.8); -1 bootstraps
UPDATE syncular.sync_partitions SET horizon_seq = 4 WHERE partition = 'p1';
SELECT pg_temp.round('admin', '[{"id": "behind", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 3},
                                {"id": "zero", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 0},
                                {"id": "at", "table": "todos", "scopes": {"list_id": ["L1"]}, "cursor": 4},
                                {"id": "fresh", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": -1}]');
-- revocation comes before the horizon check
SELECT pg_temp.round('limited', '[{"id": "r", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 1}]');
-- a cursor from the future (> maxSeq) bootstraps
SELECT pg_temp.round('admin', '[{"id": "future", "table": "todos", "scopes": {"list_id": ["L2"]}, "cursor": 99}]');

ROLLBACK;
