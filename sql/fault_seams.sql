-- fault_seams: syncular.inject_fault (superuser only) makes the NEXT idempotency lookup of a
-- (partition, client) unreadable: that commit answers SPEC §6.3's retryable
-- sync.idempotency_cache_miss (rejected, no commitSeq, one error record at opIndex 0), nothing is
-- applied or persisted, the fault is consumed, and the client's retry applies the commit.
\i sql/pull_fixture.psql

CREATE FUNCTION pg_temp.push_full(client text, commits jsonb) RETURNS SETOF jsonb LANGUAGE sql AS $$
  SELECT r FROM jsonb_array_elements(syncular.push('p1', 'admin', client, commits)) r
$$;
SELECT pg_temp.push_full('w1', '[{"clientCommitId": "k0", "operations": [
   {"table": "todos", "row": {"id": "a", "list_id": "L1", "title": "zero"}}]}]') ->> 'status' AS before;

-- armed for (p1, w1); arming twice before it fires is still one fault
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w1'), syncular.inject_fault('idempotency_cache_miss', 'p1', 'w1');
SELECT fault, partition, client_id FROM syncular.sync_faults;

-- the next lookup of w1 is unreadable: the first commit of the request answers cache_miss, the
-- second one is looked up normally and applied
SELECT pg_temp.push_full('w1', '[
  {"clientCommitId": "k1", "operations": [{"table": "todos", "row": {"id": "b", "list_id": "L1", "title": "one"}}]},
  {"clientCommitId": "k2", "operations": [{"table": "todos", "row": {"id": "c", "list_id": "L1", "title": "two"}}]}]');
SELECT count(*) AS faults_left FROM syncular.sync_faults;
-- not applied, not persisted: no row, no commit, no idempotency record for k1
SELECT id FROM public.todos ORDER BY id;
SELECT client_commit_id FROM syncular.push_results ORDER BY 1;
SELECT client_commit_id FROM syncular.sync_commits ORDER BY commit_seq;
-- the client keeps k1 queued; its retry applies it
SELECT pg_temp.push_full('w1', '[{"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "b", "list_id": "L1", "title": "one"}}]}]') - 'results' AS retry;

-- an already applied commit under a fault: cache_miss too (the stored result is not read), and
-- the next retry replays it as cached
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w1');
SELECT pg_temp.push_full('w1', '[{"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "b", "list_id": "L1", "title": "one"}}]}]') -> 'results' -> 0 ->> 'code' AS replay_under_fault;
SELECT pg_temp.push_full('w1', '[{"clientCommitId": "k1", "operations": [
   {"table": "todos", "row": {"id": "b", "list_id": "L1", "title": "one"}}]}]') ->> 'status' AS replay_after;

-- the same over the wire (SSP2 PUSH_RESULT of handle): status rejected, no commitSeq, error at 0
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w2');
SELECT f - 'type' AS push_result FROM jsonb_array_elements(syncular.debug_render(syncular.handle(syncular.debug_encode(
  jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'w2', 'schemaVersion', 1,
                       'logEpoch', syncular._producer_epoch('p1', 'admin', 'w2')),
    jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', 'm1', 'operations', jsonb_build_array(
      jsonb_build_object('table', 'todos', 'rowId', 'd', 'op', 'upsert', 'payload', encode(syncular.encode_sparse_row('todos',
        '{"id": "d", "list_id": "L1", "title": "w"}'), 'base64'))))))), 'p1', 'admin')) -> 'frames') f
 WHERE f ->> 'type' = 'PUSH_RESULT';

-- other clients and partitions are not affected; bad arguments
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w9');
SELECT pg_temp.push_full('w1', '[{"clientCommitId": "k3", "operations": [
   {"table": "todos", "row": {"id": "e", "list_id": "L1", "title": "e"}}]}]') ->> 'status' AS other_client;
SAVEPOINT bad;
SELECT syncular.inject_fault('disk_full', 'p1', 'w1');
ROLLBACK TO SAVEPOINT bad;
SELECT syncular.inject_fault('idempotency_cache_miss', '', 'w1');
ROLLBACK TO SAVEPOINT bad;

-- never reachable by an app role: no EXECUTE by default, and refused even when granted
CREATE ROLE regress_fault_app;
SET LOCAL ROLE regress_fault_app;
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w1');
ROLLBACK TO SAVEPOINT bad;
CREATE ROLE regress_fault_app;
GRANT USAGE ON SCHEMA syncular TO regress_fault_app;
GRANT EXECUTE ON FUNCTION syncular.inject_fault(text, text, text) TO regress_fault_app;
SET LOCAL ROLE regress_fault_app;
SELECT syncular.inject_fault('idempotency_cache_miss', 'p1', 'w1');
ROLLBACK TO SAVEPOINT bad;
SELECT count(*) AS armed FROM syncular.sync_faults;

ROLLBACK;
