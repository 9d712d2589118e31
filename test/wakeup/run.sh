#!/usr/bin/env bash
# Commit wake-up ring test (src/wakeup.c, docs/realtime.md "Commit wake-ups"): the ring exists
# only when the library is in shared_preload_libraries, which the main test cluster deliberately
# does not set (sql/wakeup_not_preloaded checks that answer there).  This script starts a small
# cluster of its own with shared_preload_libraries = 'syncular' (unix socket in a private
# directory, TCP on 127.0.0.1 only, a free port), runs the pg_regress tests of test/wakeup, then
# the blocking checks (a waiter wakes on a commit, the timeout, pg_cancel_backend), NOTIFY per
# mode, and - when the gateway is built - the realtime gateway tests in ring mode.  The server is
# stopped by its data directory in a trap.  Serves the installation staged from this
# tree (scripts/cluster-work.sh).  Bounded: the caller (scripts/test.sh) runs it under timeout.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/cluster-work.sh wakeup
REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

out=$(mktemp -d /tmp/syncular-wakeup-out.XXXXXX)
chmod 777 "$out"
cleanup() {
  as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work" "$out"
}
trap cleanup EXIT

port=$(bash scripts/free-port.sh)
start_cluster "$port" -c shared_preload_libraries=syncular -c max_prepared_transactions=2

status=0
"$REGRESS" --bindir="$BIN" --inputdir=test/wakeup --outputdir="$out" \
  --host="$work" --port="$port" --user=postgres wakeup_ring || status=1
if [ $status -ne 0 ]; then
  mkdir -p test/wakeup/results && cp "$out"/results/*.out test/wakeup/results/ 2>/dev/null || true
  cat "$out/regression.diffs" 2>/dev/null || true
  echo "--- server log" >&2
  tail -30 "$work/server.log" >&2
fi

sql() { "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres "$@"; }
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; status=1; }
now_ms() { date +%s%3N; }
db=syncular_t_wakeup_run
sql -d postgres -c "CREATE DATABASE $db"
sql -d $db -f bench/setup.sql >/dev/null
sql -d $db -c "SELECT bench.epoch('p1')" >/dev/null
head() { sql -d $db -c "SELECT position FROM syncular.wait_commits(NULL, 0)"; }

# a sleeping waiter wakes when a commit becomes visible, not when the timeout ends
h=$(head)
t0=$(now_ms)
sql -d $db -c "SELECT kind || ' ' || coalesce(partition, '') || ' ' || coalesce(commit_seq::text, '')
               FROM syncular.wait_commits($h, 20000)" > "$out/waiter" &
waiter=$!
sleep 0.5
sql -d $db -c "SELECT bench.push('p1', 1)" >/dev/null
wait $waiter
t1=$(now_ms)
got=$(tr '\n' ' ' < "$out/waiter")
if [[ "$got" == "commit p1 "[0-9]*" head "* ]] && [ $((t1 - t0)) -lt 10000 ]; then
  ok "a waiter wakes on a commit after $((t1 - t0)) ms: $got"
else
  notok "a waiter wakes on a commit: got [$got] after $((t1 - t0)) ms"
fi

# the timeout: an empty answer (just the head) after about timeout_ms
h=$(head)
t0=$(now_ms)
got=$(sql -d $db -c "SELECT kind FROM syncular.wait_commits($h, 1500)" | tr '\n' ' ')
el=$(( $(now_ms) - t0 ))
if [ "$got" = "head " ] && [ $el -ge 1400 ] && [ $el -lt 10000 ]; then
  ok "the timeout returns only the head after $el ms (1500 asked)"
else
  notok "the timeout: got [$got] after $el ms (1500 asked)"
fi

# pg_cancel_backend ends the sleep with 57014
h=$(head)
t0=$(now_ms)
( if sql -d $db -c "SELECT kind FROM syncular.wait_commits($h, 60000)" > "$out/cancel" 2>&1; then
    echo "rc=0" >> "$out/cancel"; else echo "rc=1" >> "$out/cancel"; fi ) &
waiter=$!
for _ in $(seq 50); do
  n=$(sql -d postgres -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
                          WHERE query LIKE '%wait_commits(%60000)%' AND pid <> pg_backend_pid()")
  [ "$n" = 1 ] && break
  sleep 0.1
done
wait $waiter || true
el=$(( $(now_ms) - t0 ))
if grep -q "canceling statement due to user request" "$out/cancel" && grep -q "rc=1" "$out/cancel" && [ $el -lt 10000 ]; then
  ok "pg_cancel_backend ends a sleeping wait_commits after $el ms"
else
  notok "pg_cancel_backend: $(tr '\n' ' ' < "$out/cancel") after $el ms"
fi

# NOTIFY per mode: notify and both send it, ring (the default here) does not
for mode in notify both ring; do
  got=$(printf '%s\n' "SET syncular.commit_wakeup = '$mode';" "LISTEN syncular_commit;" \
          "SELECT bench.push('p1', 1);" "SELECT 1;" |
        "$BIN/psql" -X -q -A -t -h "$work" -p "$port" -U postgres -d $db 2>&1 |
        grep -c 'Asynchronous notification "syncular_commit" with payload "cDE:[0-9]*"' || true)
  want=1; [ $mode = ring ] && want=0
  if [ "$got" = "$want" ]; then ok "commit_wakeup = $mode: $got NOTIFY syncular_commit"; else notok "commit_wakeup = $mode: $got NOTIFY, expected $want"; fi
done

# auto keeps NOTIFY in a database whose syncular predates the ring (0.2.0: no wait_commits, and
# its gateways only LISTEN) and takes the ring once ALTER EXTENSION UPDATE brings wait_commits
old=syncular_t_wakeup_old
sql -d postgres -c "CREATE DATABASE $old"
sql -d $old >/dev/null <<'SQL'
CREATE EXTENSION syncular VERSION '0.2.0';
SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "todos", "primaryKey": "id",
  "columns": [{"name": "id", "type": "string", "nullable": false},
              {"name": "list_id", "type": "string", "nullable": false}],
  "scopes": ["list:{list_id}"]}]}'::jsonb, '[]'::jsonb, 'public');
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
SQL
old_push() {  # old_push <clientCommitId> -> NOTIFYs received by a listener in the pushing session
  printf '%s\n' "LISTEN syncular_commit;" \
    "SELECT r ->> 'status' FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[{\"clientCommitId\": \"$1\", \"operations\": [{\"table\": \"todos\", \"op\": \"upsert\", \"row\": {\"id\": \"$1\", \"list_id\": \"l1\"}}]}]')) r;" \
    "SELECT 1;" |
    "$BIN/psql" -X -q -A -t -h "$work" -p "$port" -U postgres -d $old 2>&1 |
    grep -c 'Asynchronous notification "syncular_commit"' || true
}
got="$(sql -d $old -c "SHOW syncular.commit_wakeup") $(old_push a)"
sql -d $old -c "ALTER EXTENSION syncular UPDATE"
got="$got | $(sql -d $old -c "SELECT extversion FROM pg_extension WHERE extname = 'syncular'") $(sql -d $old -c "SELECT syncular.commit_wakeup_mode()") $(old_push b)"
if [ "$got" = "auto 1 | 0.5.0 ring 0" ]; then
  ok "auto under syncular 0.2.0 keeps NOTIFY; after ALTER EXTENSION UPDATE the ring ($got)"
else
  notok "auto across the update: got [$got], expected [auto 1 | 0.5.0 ring 0]"
fi
sql -d postgres -c "DROP DATABASE $old"

# the realtime gateway tests in ring mode (the main run covers NOTIFY mode)
gwbin=${SYNCULAR_GATEWAY_BIN:-gateway/syncular-gateway-asan}
if [ -x "$gwbin" ]; then
  mode=$(sql -d $db -c "SELECT syncular.commit_wakeup_mode()")
  echo "# gateway realtime tests against the preloaded cluster (commit_wakeup_mode = $mode)"
  mkdir -p /tmp/syncular-wakeup-gw && chmod 777 /tmp/syncular-wakeup-gw
  PGHOST=$work PGPORT=$port PGUSER=postgres GW_SUITES=realtime SYNCULAR_GATEWAY_BIN=$gwbin \
    TMPDIR=/tmp/syncular-wakeup-gw /usr/bin/python3 test/gateway/run.py || status=1
else
  echo "skip - the realtime gateway tests in ring mode: $gwbin is not built (make gateway-asan)"
fi
exit $status
