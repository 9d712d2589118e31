#!/usr/bin/env bash
# The pull corpus: one md5 per pull response for a fixed set of requests over a fixed commit log
# (test/corpus/fixture.sql: incremental windows of several subscriptions and limits, scopes
# moving, deletes, the 64 KiB budget, bootstrap pages fresh and resumed, inline and image, wire
# 2 and 3), to prove that a change to the pull serves the same bytes.  Runs against the cluster
# of the PG* environment (syncular installed), in a database `corpus` it recreates; prints
# "<request> <md5> <bytes>" lines.  Never asserts: compare two runs, e.g.
#   bash scripts/pgenv.sh -- bash test/corpus/pull_corpus.sh > /tmp/after.md5   (each build)
#   diff /tmp/before.md5 /tmp/after.md5 && echo identical
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
db=corpus
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$here/fixture.sql" >/dev/null
# each request in its own statement (its own round and transaction), in order
psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
SELECT format('%sSELECT %L || '' '' || md5(h) || '' '' || length(h) FROM corpus.req, syncular.handle(req, part, actor) h WHERE n = %s;%s',
              CASE WHEN budget IS NOT NULL THEN format('SET syncular.max_response_bytes = %s; ', budget) END,
              name, n, CASE WHEN budget IS NOT NULL THEN ' RESET syncular.max_response_bytes;' END)
  FROM corpus.req ORDER BY n \gexec
-- the SQL API's JSON answer too
SELECT 'sql pull ' || md5(syncular.pull('p1', 'owner1', 'sqlreader', '[{"id": "a", "table": "notes", "scopes": {"list_id": ["L1", "L2", "L3", "Lé1"], "owner_id": ["o0", "o1"]}, "cursor": 10}, {"id": "b", "table": "todos", "scopes": {"list_id": ["L1"]}}]', '{"limitCommits": 20, "limitSnapshotRows": 5}')::text);
SQL
dropdb "$db"
