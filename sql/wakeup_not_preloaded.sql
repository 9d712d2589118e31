-- wakeup_not_preloaded: this cluster does not preload the library, so there is no commit wake-up
-- ring (src/wakeup.c): whatever syncular.commit_wakeup says, applied commits NOTIFY
-- syncular_commit (payload base64url(partition) ":" commit_seq) at commit and never on
-- rollback, commit_wakeup_mode() answers notify and wait_commits refuses with a hint.  The ring
-- itself is tested by the TAP test test/t/020_wakeup_ring.pl on a preloaded node.
\set testdb syncular_t_wakeup_np
\i sql/push_helpers.psql

RESET client_min_messages;
SELECT count(*) AS frames FROM pg_temp.acquire('p1', 'u1', 'A');
SHOW syncular.commit_wakeup;
SELECT syncular.commit_wakeup_mode();
SET syncular.commit_wakeup = ring;
SELECT syncular.commit_wakeup_mode() AS ring_falls_back;
SET syncular.commit_wakeup = 'both';
SELECT syncular.commit_wakeup_mode() AS both_falls_back;

-- a push still applies in every mode (its NOTIFY cannot be shown here: psql prints the sender's
-- PID; test/t/020_wakeup_ring.pl and the gateway tests check the delivery)
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-1',
  pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1, "meta": null, "doc": null, "att": null}'))));
RESET syncular.commit_wakeup;

-- wait_commits: no ring here
\set VERBOSITY default
SELECT * FROM syncular.wait_commits(NULL, 0);
\set VERBOSITY terse
SELECT * FROM syncular.wait_commits(1, -1);
SELECT code, sqlstate FROM syncular.error_catalog() WHERE code = 'sync.storage.wakeup_unavailable';

\i sql/push_done.psql
