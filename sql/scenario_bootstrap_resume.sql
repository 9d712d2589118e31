-- scenario_bootstrap_resume: conformance catalogue B.5, bootstrap resume mid-stream
-- (push-and-pull.md §7): bootstrap/paged-external-resume-after-interruption, with
-- bootstrap/fresh-inline-and-handoff-at-pin and B.9 bootstrap/segment-versions-seed-base-version,
-- and the project regression of README decision 2: a resume token that does not parse, or names
-- another table, restarts the bootstrap with a fresh pin instead of falling into incremental mode.
-- A paged bootstrap keeps its pin (asOfCommitSeq) across rounds, resumes after the token's row
-- cursor, survives a lost page, loses and duplicates nothing, and hands off at the pin.
\set testdb syncular_t_scenario_bootstrap_resume
\i sql/scenario_helpers.psql

-- Z (admin) writes seven rows in l1 and one in l2 (commit 1)
SELECT sim.client('Z', 'admin');
SELECT * FROM sim.sync('Z');
SELECT sim.queue('Z', 'z-1', '[{"ins": {"id": "b1", "list_id": "l1", "title": "one"}},
  {"ins": {"id": "b2", "list_id": "l1", "title": "two"}}, {"ins": {"id": "b3", "list_id": "l1", "title": "three"}},
  {"ins": {"id": "b4", "list_id": "l1", "title": "four"}}, {"ins": {"id": "b5", "list_id": "l1", "title": "five"}},
  {"ins": {"id": "b6", "list_id": "l1", "title": "six"}}, {"ins": {"id": "b7", "list_id": "l1", "title": "seven"}},
  {"ins": {"id": "x1", "list_id": "l2", "title": "elsewhere"}}]');
SELECT * FROM sim.sync('Z');

-- ---------------------------------------------------------------------------------------------
-- bootstrap/paged-external-resume-after-interruption: B pulls one page of two rows per round
SELECT sim.client('B', 'u2'), sim.subscribe('B', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('B');
-- round 1: pinned at maxSeq 1, rows b1 b2, incomplete: token with rowCursor b2, nextCursor = pin
SELECT * FROM sim.sync('B', '{"rows": 2, "pages": 1}');
-- meanwhile (after the pin, commit 2): b1 edited, b4 deleted, b8 inserted
SELECT sim.queue('Z', 'z-2', '[{"row": {"id": "b1", "title": "uno"}}, {"del": "b4"},
                               {"ins": {"id": "b8", "list_id": "l1", "title": "eight"}}]');
SELECT * FROM sim.sync('Z');
-- round 2 resumes after b2 at the same pin (the page reads current rows: b4 is gone)
SELECT * FROM sim.sync('B', '{"rows": 2, "pages": 1}');
-- round 3 is interrupted: the server sends b6 b7, the client never gets them
SELECT * FROM sim.sync('B', '{"rows": 2, "pages": 1}', deliver => false);
-- the retry presents the same token and gets the same page again
SELECT * FROM sim.sync('B', '{"rows": 2, "pages": 1}');
-- the last page: complete, no token, nextCursor still the pin
SELECT * FROM sim.sync('B', '{"rows": 2, "pages": 1}');
-- the handoff: cursor = pin, no token -> incremental from the pin replays commit 2
SELECT * FROM sim.sync('B');
SELECT sim.converged('B');
SELECT * FROM sim.replica('B');

-- ---------------------------------------------------------------------------------------------
-- bootstrap/fresh-inline-and-handoff-at-pin: C bootstraps in one round (default limits): one
-- inline page, complete, nextCursor = maxSeq = 2; its next round is incremental from there
SELECT sim.client('C', 'u1'), sim.subscribe('C', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('C');
SELECT * FROM sim.sync('C');
SELECT * FROM sim.sync('C');
SELECT sim.converged('C');

-- ---------------------------------------------------------------------------------------------
-- B.9 bootstrap/segment-versions-seed-base-version: the page said b1@2, so B can write on base
-- 2 at once (b1 -> version 3); C, whose page also said b1@2, is now stale: version conflict
SELECT sim.queue('B', 'b-1', '[{"row": {"id": "b1", "title": "first"}, "base": 2}]');
SELECT * FROM sim.sync('B');
SELECT sim.queue('C', 'c-1', '[{"row": {"id": "b1", "title": "premier"}, "base": 2}]');
SELECT * FROM sim.sync('C');
SELECT sim.converged('B'), sim.converged('C');

-- ---------------------------------------------------------------------------------------------
-- project regression (README decision 2): D is mid-bootstrap, pinned at 3 with a token after
-- b3, and a commit (4) lands meanwhile.  A token that does not parse or does not match must
-- restart the bootstrap from the table start with a fresh pin (4); treated as absent, the cursor
-- (3, then 4) would mean incremental and the pages after b3 would never come
SELECT sim.client('D', 'u1'), sim.subscribe('D', 's', '{"list_id": ["l1"]}');
SELECT * FROM sim.sync('D');
SELECT * FROM sim.sync('D', '{"rows": 3, "pages": 1}');
SELECT sim.queue('Z', 'z-3', '[{"ins": {"id": "b9", "list_id": "l1", "title": "nine"}}]');
SELECT * FROM sim.sync('Z');
-- the token names another table
UPDATE sim.subs SET token = jsonb_set(token, '{tables}', '["counters"]') WHERE name = 'D';
SELECT cursor, token FROM sim.subs WHERE name = 'D';
SELECT * FROM sim.sync('D', '{"rows": 3, "pages": 1}');
-- the token is not a token at all (cursor 4 = maxSeq)
UPDATE sim.subs SET token = '"garbage"' WHERE name = 'D';
SELECT * FROM sim.sync('D', '{"rows": 3, "pages": 1}');
-- with the restarted bootstrap's own token it resumes and completes at the new pin
SELECT * FROM sim.sync('D', '{"rows": 3, "pages": 1}');
SELECT * FROM sim.sync('D', '{"rows": 3, "pages": 1}');
SELECT sim.converged('D');

\i sql/scenario_done.psql
