#!/usr/bin/env bash
# The push corpus: one md5 per response of a fixed sequence of push rounds (test/corpus/
# push_fixture.sql: applied batches, cached replays, wire-3 column conflicts and the insert race,
# wire-2 version conflicts, row_deleted, row_missing, forbidden, scope changes, a unique-index
# violation, a storage-limit (54000) write, size and key limits, row and commit validators,
# declared references (missing_parent, restricted_delete, cascade, SET NULL, cascade_limit),
# CRDT merges and merge failures, the idempotency cache miss, and a push-and-pull round), then
# the SQL API's JSON answer and an md5 of the stored state (synced rows with versions, column
# versions and scopes, tombstones, the commit log, the stored results without their time and
# cache identity), to prove that a change to the push serves and stores the same bytes.  Runs
# against the cluster of the PG* environment (syncular installed), in a database `corpus_push`
# it recreates; prints "<request> <md5> <bytes>" lines.  Never asserts: compare two runs, e.g.
#   bash scripts/pgenv.sh -- bash test/corpus/push_corpus.sh > /tmp/after.md5   (each build)
#   diff /tmp/before.md5 /tmp/after.md5 && echo identical
# PUSH_CORPUS_RENDER=1 prints each response rendered as JSON (syncular.debug_render) instead of
# its md5, to read what a request exercises.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
db=corpus_push
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$here/push_fixture.sql" >/dev/null
# each request in its own statement (its own round and transaction), in order, at a pinned clock;
# a setting a request needs holds for that round only
psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
SET syncular.clock_override_ms = '1700000000000';
\set render `echo "${PUSH_CORPUS_RENDER:-0}"`
SELECT format('BEGIN; %s SELECT %L || '' '' || %s FROM corpus.req, syncular.handle(req, ''p1'', actor) h WHERE n = %s; COMMIT;',
              CASE WHEN pre IS NOT NULL THEN replace(pre, 'SET ', 'SET LOCAL ') END, name,
              CASE WHEN :'render' = '1' THEN 'syncular.debug_render(h)::text'
                   ELSE 'md5(h) || '' '' || length(h)' END, n)
  FROM corpus.req ORDER BY n \gexec
-- the SQL API's JSON answer: applied, cached, a conflict, a reference violation
SELECT 'sql push ' || md5(syncular.push('p2', 'u2', 'S', '[
  {"clientCommitId": "s-1", "operations": [{"table": "lists", "op": "upsert", "row": {"id": "S1", "ws": "w1", "name": "s"}},
                                           {"table": "todos", "op": "upsert", "row": {"id": "s1", "ws": "w1", "list_id": "S1", "title": "s", "done": null, "n": 1, "meta": {"a": [1, "x"]}, "doc": null, "att": null}}]},
  {"clientCommitId": "s-1", "operations": [{"table": "lists", "op": "delete", "rowId": "S1"}]},
  {"clientCommitId": "s-2", "operations": [{"table": "todos", "op": "upsert", "baseVersion": 0, "row": {"id": "s1", "ws": "w1", "list_id": "S1", "title": "t"}}]},
  {"clientCommitId": "s-3", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "s2", "ws": "w1", "list_id": "S9", "title": "u", "done": null, "n": 1, "meta": null, "doc": null, "att": null}}]}]')::text);
-- the stored state the rounds left
SELECT 'state rows ' || md5(string_agg(x, E'\n' ORDER BY x)) FROM (
  SELECT format('%s %s %s %s %s %s %s', t, _sync_partition, _sync_row_id, _sync_server_version,
                encode(_sync_column_versions, 'hex'), _sync_scopes, encode(_sync_payload, 'hex')) x
    FROM (SELECT 'lists' t, * FROM (SELECT _sync_partition, _sync_row_id, _sync_server_version, _sync_column_versions, _sync_scopes, _sync_payload FROM public.lists) a
          UNION ALL SELECT 'todos', _sync_partition, _sync_row_id, _sync_server_version, _sync_column_versions, _sync_scopes, _sync_payload FROM public.todos
          UNION ALL SELECT 'notes', _sync_partition, _sync_row_id, _sync_server_version, _sync_column_versions, _sync_scopes, _sync_payload FROM public.notes
          UNION ALL SELECT 'tags', _sync_partition, _sync_row_id, _sync_server_version, _sync_column_versions, _sync_scopes, _sync_payload FROM public.tags) r) s;
SELECT 'state tombstones ' || md5(string_agg(to_jsonb(t)::text, E'\n' ORDER BY to_jsonb(t)::text)) FROM syncular.sync_tombstones t;
-- the commit rows without what later layouts keep in them (the result; the change of a
-- one-upsert commit), and every change wherever it is kept (the view syncular.changes)
SELECT 'state commits ' || md5(string_agg((to_jsonb(c) - '{result,tbl,row_id,op,row_version,scopes,payload,scope_var,scope_value}'::text[])::text,
                                          E'\n' ORDER BY c.partition, c.commit_seq))
  FROM syncular.sync_commits c;
SELECT 'state changes ' || md5(string_agg(to_jsonb(c)::text, E'\n' ORDER BY to_jsonb(c)::text))
  FROM syncular.changes c;
SELECT 'state results ' || md5(string_agg(format('%s %s %s %s', r.partition, r.client_id, r.client_commit_id,
                                                 r.result - 'recordedAtMs' - 'cacheIdentity'), E'\n'
                                          ORDER BY r.partition, r.client_id, r.client_commit_id))
  FROM syncular.push_results r;
SQL
dropdb "$db"
