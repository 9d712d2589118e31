-- push_basic: syncular.handle end to end — epoch acquisition, two-client convergence (B.1),
-- offline FIFO replay (B.2), ack-loss replay (B.3), the stored log and indexes, client records.
\set testdb syncular_t_push_basic
\i sql/push_helpers.psql

-- epoch acquisition: no logEpoch -> RESP_HEADER resetRequired + the partition's new epoch, END
SELECT * FROM pg_temp.acquire('p1', 'u1', 'A');
SELECT * FROM pg_temp.acquire('p1', 'u2', 'B');
SELECT count(*) AS registry_rows, bool_and(log_epoch ~ '^[0-9a-f-]{36}$') AS uuid_epoch,
       bool_and(NOT epoch_required) AS not_required
  FROM syncular.sync_partition_registry;
-- nothing else was written by acquisition rounds
SELECT (SELECT count(*) FROM syncular.sync_clients) AS clients, (SELECT count(*) FROM syncular.sync_partitions) AS partitions;

-- B.1 client A inserts two todos and subscribes; B subscribes to the same list
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1, "meta": {"k": [1, 2]}, "doc": null, "att": null}'),
                    pg_temp.up('todos', '{"id": "t2", "list_id": "l1", "title": "eggs", "done": false, "n": 2, "meta": null, "doc": null, "att": null}')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}')));
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}')));
-- B updates t1 (one column), deletes t2; A pulls incrementally from its cursor 1
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(
  pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t1", "done": true}', 1), pg_temp.del('todos', 't2')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 1)));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 1)));
-- both converge on the server state
SELECT pg_temp.row_state('todos', 'p1', 't1') AS t1, pg_temp.row_state('todos', 'p1', 't2') AS t2;
SELECT id, list_id, title, done, n, meta FROM public.todos ORDER BY id;
-- a quiet subscription still advances its cursor to maxSeq
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.sub('s-l2', 'todos', '{"list_id": ["l2"]}', 0)));

-- the log: commits, changes (full-row payloads, stored scopes), scope index, tombstones
SELECT partition, commit_seq, client_id, client_commit_id, actor_id, writer_version, created_at_ms > 0 AS has_time
  FROM syncular.sync_commits ORDER BY commit_seq;
SELECT commit_seq, idx, tbl, row_id, op, row_version, scopes,
       CASE WHEN payload IS NULL THEN NULL ELSE syncular.decode_row(tbl, payload) END AS payload
  FROM syncular.changes ORDER BY commit_seq, idx;
-- the scope index: a commit of one upsert with one scope pair keeps its entry in its commit row
-- with its change (sync_commits_by_scope), any other commit in sync_change_scopes
-- (docs/storage.md)
SELECT * FROM syncular.sync_change_scopes ORDER BY commit_seq;
SELECT partition, tbl, scope_var, scope_value, commit_seq FROM syncular.sync_commits
 WHERE scope_var IS NOT NULL ORDER BY commit_seq;
SELECT * FROM syncular.sync_row_scopes ORDER BY row_id;
SELECT partition, tbl, row_id, commit_seq FROM syncular.sync_tombstones;
SELECT partition, max_commit_seq, horizon_seq FROM syncular.partitions;
-- client records: cursor = min nextCursor over active subscriptions, registration list replaced
SELECT client_id, actor_id, wire_version, cursor, subscriptions FROM syncular.sync_clients ORDER BY client_id;
-- idempotency records
SELECT client_id, client_commit_id, result - 'recordedAtMs' - 'cacheIdentity' AS result,
       (result ->> 'cacheIdentity') ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' AS uuid_identity
  FROM syncular.push_results ORDER BY client_commit_id;

-- B.2 offline FIFO replay: three commits in one request, each on the previous
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t3", "list_id": "l2", "title": "bread", "done": null, "n": null, "meta": null, "doc": null, "att": null}')),
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t3", "title": "rye bread"}', 1)),
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t3", "n": 7}', 2), pg_temp.up('todos', '{"id": "t1", "n": 10}')),
  pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', 1),
  pg_temp.sub('s-l2', 'todos', '{"list_id": ["l2"]}', 3)));
SELECT pg_temp.row_state('todos', 'p1', 't3') AS t3;

-- B.3 ack loss: the same request again replays every commit as cached with the original
-- commitSeq and results; nothing is applied twice
SELECT count(*) AS commits_before FROM syncular.sync_commits \gset
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-2', pg_temp.up('todos', '{"id": "t3", "list_id": "l2", "title": "bread", "done": null, "n": null, "meta": null, "doc": null, "att": null}')),
  pg_temp.pc('a-3', pg_temp.up('todos', '{"id": "t3", "title": "rye bread"}', 1)),
  pg_temp.pc('a-4', pg_temp.up('todos', '{"id": "t3", "n": 7}', 2), pg_temp.up('todos', '{"id": "t1", "n": 10}'))));
SELECT count(*) - :commits_before AS new_commits FROM syncular.sync_commits;
SELECT pg_temp.row_state('todos', 'p1', 't3') AS t3_unchanged;
-- a duplicate within one request is applied once; the later occurrence replays as cached
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t1", "n": 11}')),
  pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t1", "n": 12}'))));
SELECT n FROM public.todos WHERE id = 't1';

-- a push-only round refreshes the client record but keeps cursor and registrations
SELECT cursor, subscriptions FROM syncular.sync_clients WHERE client_id = 'A';

-- a commit whose only op deletes an absent row: applied, gets a commitSeq, no change
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-6', pg_temp.del('todos', 'nope'))));
SELECT commit_seq, (SELECT count(*) FROM syncular.changes c WHERE c.commit_seq = s.commit_seq) AS changes
  FROM syncular.sync_commits s WHERE client_commit_id = 'a-6';

-- partitions are independent: the same row id in p2 is another row with its own seq
SELECT * FROM pg_temp.acquire('p2', 'u1', 'A');
SELECT * FROM pg_temp.round('p2', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "other", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));
SELECT _sync_partition, id, title FROM public.todos WHERE id = 't1' ORDER BY 1;

-- a commit of one upsert with one scope pair (a-5, p2's a-1) keeps its change and its scope index
-- entry in its commit row (sync_commits_by_scope): no sync_changes row, no sync_change_scopes
-- row; a pull of the scope finds it there
SELECT partition, commit_seq, tbl, scope_var, scope_value,
       (SELECT count(*) FROM syncular.sync_change_scopes s
         WHERE s.partition = c.partition AND s.commit_seq = c.commit_seq) AS change_scopes,
       (SELECT count(*) FROM syncular.sync_changes x
         WHERE x.partition = c.partition AND x.commit_seq = c.commit_seq) AS change_rows
  FROM syncular.sync_commits c WHERE scope_var IS NOT NULL ORDER BY 1, 2;
SELECT commit_seq - 1 AS before_a5 FROM syncular.sync_commits WHERE partition = 'p1' AND client_commit_id = 'a-5' \gset
SELECT * FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(pg_temp.sub('s-l1', 'todos', '{"list_id": ["l1"]}', :before_a5)));

\i sql/push_done.psql
