#!/usr/bin/env bash
# Runs against the cluster of the PG* environment (syncular installed), in a database `bench`
# it recreates.  Every case is pgbench -M prepared over pre-built request bytes (bench.req /
# bench.preq), the plain-SQL baseline right after each syncular run; each case runs `runs`
# times and the median tps is printed.  Never fails on a time.
# Usage: bash bench/cases.sh [runs] [scale]   (scale multiplies the transactions per run)
set -euo pipefail
runs=${1:-3}
scale=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
db=bench
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$here/setup.sql" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
q() { psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -c "$1"; }
# tps <clients> <transactions per client> <script text> [pgbench -D ...]
tps() {
  local c=$1 t=$2
  printf '%s\n' "$3" > "$tmp/s.sql"
  shift 3
  pgbench -n -M prepared -c "$c" -j "$c" -t "$t" "$@" -f "$tmp/s.sql" "$db" 2>"$tmp/err" \
    | awk '/^tps/ {print $3; exit}' || true
  if grep -q 'ERROR' "$tmp/err"; then head -3 "$tmp/err" >&2; fi
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
row() { awk -v n="$1" -v s="$2" -v b="$3" 'BEGIN { printf "| %s | %.1f | %.1f | %.3f |\n", n, s, b, (b > 0 ? s / b : 0) }'; }

key='\set n :n + 1
\set k :base + :client_id * 100000 + :n'
push_sql="$key
SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = :k;"
plain_sql="$key
INSERT INTO public.items_plain
  SELECT DISTINCT ON (r->>'id') q.part, r->>'id', r->>'list_id', r->>'title', (r->>'qty')::bigint,
         (r->>'done')::boolean
    FROM bench.req q, jsonb_array_elements(q.rows) r WHERE q.k = :k ORDER BY r->>'id'
ON CONFLICT (partition, id) DO UPDATE SET list_id = EXCLUDED.list_id, title = EXCLUDED.title,
  qty = EXCLUDED.qty, done = EXCLUDED.done;"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
only=${BENCH_ONLY:-all}   # all | wal | wakeup | boot | cpu | pull (the pull cases alone) | groupcommit | http
# group commit: 1-op pushes of one partition through the gateway from 1 and 4 clients, group
# commit off and on (docs/gateway.md "Group commit"); BENCH_ONLY=groupcommit runs it alone
group_commit() {
  echo
  echo "group commit through the gateway, 1-op pushes, one partition (fsync=$(q 'SHOW fsync')):"
  /usr/bin/python3 "$here/gateway_group_commit.py" "${secs:-5}" "$runs"
}
if [ "$only" = groupcommit ]; then group_commit; exit 0; fi
# the issue's HTTP cases (push 1 op, pull 100 changes, bootstrap page of 10k rows; 1, 4 and 16
# keep-alive clients, wrk) through the gateway, against the reference server's figures;
# BENCH_ONLY=http runs them alone
http_cases() {
  echo
  echo "HTTP cases through the gateway (fsync=$(q 'SHOW fsync')):"
  /usr/bin/python3 "$here/gateway_http.py" "${secs:-3}" "$runs"
}
if [ "$only" = http ]; then http_cases; exit 0; fi
if [ "$only" = all ] || [ "$only" = pull ]; then
echo "| case | syncular | plain SQL | ratio |"
echo "|---|---|---|---|"
fi
if [ "$only" = all ]; then
for ops in 1 10 100; do
  case $ops in 1) per=$((400 * scale));; 10) per=$((200 * scale));; 100) per=$((40 * scale));; esac
  for clients in 1 4; do
    for parts in 1 16; do
      q "SELECT bench.fill($ops, $clients, $parts, $per, $runs)" >/dev/null
      s=""; b=""
      for r in $(seq 0 $((runs - 1))); do
        s="$s $(tps "$clients" "$per" "$push_sql" -D n=0 -D base=$((r * 10000000)))"
        b="$b $(tps "$clients" "$per" "$plain_sql" -D n=0 -D base=$((r * 10000000)))"
      done
      row "push ${ops}-op commit, ${clients} client(s), ${parts} partition(s), tps" \
        "$(echo "$s" | median)" "$(echo "$b" | median)"
    done
  done
done
fi
if [ "$only" = all ] || [ "$only" = pull ]; then

# incremental pull: 300 commits of 10 changes; a client 100 or 1,000 changes behind, asking for
# that many (limitCommits counts changes, SPEC §3.6)
q "SELECT count(bench.push('pull', 10)) FROM generate_series(1, 300)" >/dev/null
q "ANALYZE"
maxc=$(q "SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'pull'")
for changes in 100 1000; do
  commits=$((changes / 10)); top=$((maxc - commits))
  q "INSERT INTO bench.preq SELECT $changes, c, bench.pull_req('pull', c, $changes) FROM generate_series(0, $top) c" >/dev/null
  per=$(( (changes == 100 ? 300 : 60) * scale ))
  s=""; b=""
  for r in $(seq 1 "$runs"); do
    s="$s $(tps 1 "$per" "\\set c random(0, $top)
SELECT length(syncular.handle(q.req, 'pull', 'bench')) FROM bench.preq q WHERE q.changes = $changes AND q.c = :c;")"
    b="$b $(tps 1 "$per" "\\set c random(0, $top)
SELECT count(*), sum(length(x.payload)) FROM (SELECT ch.payload FROM syncular.changes ch WHERE ch.partition = 'pull' AND ch.commit_seq > :c ORDER BY ch.commit_seq, ch.idx LIMIT $changes) x;")"
  done
  row "incremental pull, ${changes} changes, tps" "$(echo "$s" | median)" "$(echo "$b" | median)"
done
fi

# Commit wake-ups (docs/realtime.md "Commit wake-ups"): 1-op push commits into 16 partitions with
# NOTIFY syncular_commit (PostgreSQL 15 serializes notifying commits through their WAL flush) and
# with the shared-memory ring, interleaved in the same run; the plain baseline without and with
# one pg_notify per transaction.  The ring needs syncular in shared_preload_libraries (run.sh);
# without it both columns are NOTIFY.  Group commit only helps when commits flush: the settings
# are printed.  BENCH_ONLY=wakeup runs this section alone.
if [ "$only" = all ] || [ "$only" = wakeup ]; then
plain_notify_sql="$key
BEGIN;
${plain_sql#"$key"}
SELECT pg_notify('bench_plain', :k::text);
COMMIT;"
echo
echo "commit wake-ups, 1-op push commits, 16 partitions, tps (fsync=$(q 'SHOW fsync'), synchronous_commit=$(q 'SHOW synchronous_commit'), ring $(q "SELECT CASE WHEN syncular.commit_wakeup_mode() = 'notify' THEN 'NOT available (not preloaded)' ELSE 'available' END"))"
echo "| clients | push notify | push ring | ring / notify | plain SQL | plain + pg_notify | push ring / plain |"
echo "|---|---|---|---|---|---|---|"
for clients in 1 4 16; do
  per=$((200 * scale))
  q "SELECT bench.fill(1, $clients, 16, $per, $((2 * runs)))" >/dev/null
  n=""; g=""; b=""; bn=""
  for r in $(seq 0 $((runs - 1))); do
    # the two modes alternate which runs first (the partitions grow during the case)
    for m in $( [ $((r % 2)) = 0 ] && echo "notify ring" || echo "ring notify"); do
      q "ALTER DATABASE $db SET syncular.commit_wakeup = $m" >/dev/null
      if [ $m = notify ]; then n="$n $(tps "$clients" "$per" "$push_sql" -D n=0 -D base=$((r * 10000000)))"
      else g="$g $(tps "$clients" "$per" "$push_sql" -D n=0 -D base=$(((runs + r) * 10000000)))"; fi
    done
    b="$b $(tps "$clients" "$per" "$plain_sql" -D n=0 -D base=$((r * 10000000)))"
    bn="$bn $(tps "$clients" "$per" "$plain_notify_sql" -D n=0 -D base=$(((runs + r) * 10000000)))"
  done
  q "ALTER DATABASE $db RESET syncular.commit_wakeup" >/dev/null
  awk -v c="$clients" -v n="$(echo "$n" | median)" -v g="$(echo "$g" | median)" -v b="$(echo "$b" | median)" \
      -v bn="$(echo "$bn" | median)" 'BEGIN { printf "| %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f |\n",
      c, n, g, (n > 0 ? g / n : 0), b, bn, (b > 0 ? g / b : 0) }'
done
if [ "$only" = wakeup ]; then echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; fi
fi

# bootstrap: 100,000 distinct rows pushed into a new partition, then one round of up to 50 pages
# of 50,000 rows at once (statistics still stale, as right after a tenant's import), against a
# plain ordered read of the same rows (the synced table's primary key is in "C", so it is an
# index scan without a sort).  Both sides from a new psql, so each includes its connection and
# the transfer of its answer to the client; `runs` interleaved runs (one run of each swings
# from 0.6 to 1.3 on a 2-core VM): the median rows/s of each side, the median of the runs'
# ratios (each run's pair measured back to back), then each run's ratio (BENCH_ONLY=all, boot
# or pull).
if [ "$only" = all ] || [ "$only" = boot ] || [ "$only" = pull ]; then
q "SELECT bench.push('boot', 500, bench.seq_rows(g * 500, 500)) FROM generate_series(0, 199) g" >/dev/null
n=$(q "SELECT count(*) FROM items WHERE _sync_partition = 'boot'")
cat > "$tmp/boot.sql" <<'SQL'
SELECT length(syncular.handle(syncular.debug_encode(jsonb_build_object('magic','SSP2','wireVersion',3,'msgKind','request','frames', jsonb_build_array(
  jsonb_build_object('type','REQ_HEADER','clientId','boot-client','schemaVersion',1,'logEpoch',bench.epoch('boot')),
  jsonb_build_object('type','PULL_HEADER','limitCommits',1000,'limitSnapshotRows',50000,'maxSnapshotPages',50,'accept',1),
  jsonb_build_object('type','SUBSCRIPTION','id','s','table','items','scopes','{"list_id":["l1"]}'::jsonb,'cursor',-1)))),
  'boot', 'bench'));
SQL
bs=""; bp=""; each=""
for r in $(seq 1 "$runs"); do
  t0=$(date +%s.%N)
  psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -f "$tmp/boot.sql" >/dev/null
  t1=$(date +%s.%N)
  q "COPY (SELECT _sync_server_version, _sync_payload FROM items WHERE _sync_partition = 'boot' ORDER BY _sync_row_id COLLATE \"C\") TO STDOUT" >/dev/null
  t2=$(date +%s.%N)
  bs="$bs $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
  bp="$bp $(awk -v b="$t1" -v c="$t2" 'BEGIN { printf "%.6f", c - b }')"
  each="$each $(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.3f", (c - b) / (b - a) }')"
done
s=$(echo "$bs" | median); p=$(echo "$bp" | median); m=$(echo "$each" | median)
awk -v n="$n" -v s="$s" -v p="$p" -v m="$m" 'BEGIN { printf "| bootstrap of %d rows, rows/s | %.0f | %.0f | %.3f |\n", n, n / s, n / p, m }'
echo "each run's bootstrap ratio:$each"
fi

# CPU per round: the backend's own time on a CPU (/proc/self/schedstat, its first field, in
# nanoseconds: the scheduler's count, not clock ticks, which at 100 Hz resolve 400 one-op rounds
# to 25 us) over n rounds run one after another in one session, each its own transaction.  Far
# less sensitive to other load on the machine than tps; wall time is not measured here.
cpu() {  # cpu <n> <statement with :k> -> ms of backend CPU per round
  local n=$1 f="$tmp/cpu.sql"
  {
    echo "PREPARE r(bigint) AS $2;"
    echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS c0 \\gset"
    for i in $(seq 1 "$n"); do echo "EXECUTE r($i);"; done
    echo "SELECT round(((split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :c0) / 1e6 / $n)::numeric, 3);"
  } > "$f"
  psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -f "$f" | tail -1
}
if [ "$only" = all ] || [ "$only" = cpu ] || [ "$only" = pull ]; then
echo
echo "| backend CPU per round, 1 client, 1 partition | syncular ms | plain SQL ms | ratio |"
echo "|---|---|---|---|"
for ops in $( [ "$only" = pull ] || echo 1 10 100); do
  case $ops in 1) n=400;; 10) n=200;; 100) n=40;; esac
  q "SELECT bench.fill($ops, 1, 1, $n, 2)" >/dev/null
  s=$(cpu "$n" "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = \$1")
  b=$(cpu "$n" "INSERT INTO public.items_plain SELECT DISTINCT ON (r->>'id') q.part, r->>'id', r->>'list_id', r->>'title', (r->>'qty')::bigint, (r->>'done')::boolean FROM bench.req q, jsonb_array_elements(q.rows) r WHERE q.k = 10000000 + \$1 ORDER BY r->>'id' ON CONFLICT (partition, id) DO UPDATE SET list_id = EXCLUDED.list_id, title = EXCLUDED.title, qty = EXCLUDED.qty, done = EXCLUDED.done")
  awk -v o="$ops" -v s="$s" -v b="$b" 'BEGIN { printf "| push %d-op commit | %.3f | %.3f | %.3f |\n", o, s, b, (s > 0 ? b / s : 0) }'
done
if [ -n "${maxc:-}" ]; then
  for changes in 100 1000; do
    n=$(( changes == 100 ? 200 : 60 ))
    s=$(cpu "$n" "SELECT length(syncular.handle(q.req, 'pull', 'bench')) FROM bench.preq q WHERE q.changes = $changes AND q.c = \$1 % 150")
    b=$(cpu "$n" "SELECT count(*), sum(length(x.payload)) FROM (SELECT ch.payload FROM syncular.changes ch WHERE ch.partition = 'pull' AND ch.commit_seq > \$1 % 150 ORDER BY ch.commit_seq, ch.idx LIMIT $changes) x")
    awk -v c="$changes" -v s="$s" -v b="$b" 'BEGIN { printf "| incremental pull, %d changes | %.3f | %.3f | %.3f |\n", c, s, b, (s > 0 ? b / s : 0) }'
  done
fi
fi

if [ "$only" = pull ]; then echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; fi

# WAL per round (pg_stat_wal is cluster-wide: one client, autovacuum paused, a checkpoint first
# so every case starts with the same full-page-image state)
wal() { q "SELECT wal_records || ' ' || wal_fpi || ' ' || wal_bytes FROM pg_stat_wal"; }
q "ALTER SYSTEM SET autovacuum = off" >/dev/null; q "SELECT pg_reload_conf()" >/dev/null
echo
echo "| WAL per round, 1 client, 1 partition | syncular records | FPI | bytes | plain SQL records | FPI | bytes |"
echo "|---|---|---|---|---|---|---|"
for ops in 1 10 100; do
  n=200
  q "SELECT bench.fill($ops, 1, 1, $n, 2)" >/dev/null
  q "CHECKPOINT" >/dev/null; sleep 1.2
  w0=$(wal); tps 1 $n "$push_sql" -D n=0 -D base=0 >/dev/null; sleep 1.2; w1=$(wal)
  q "CHECKPOINT" >/dev/null; sleep 1.2
  w2=$(wal); tps 1 $n "$plain_sql" -D n=0 -D base=10000000 >/dev/null; sleep 1.2; w3=$(wal)
  echo "$w0 $w1 $w2 $w3" | awk -v o="$ops" -v n="$n" '{ printf "| %d-op commit | %.1f | %.1f | %.0f | %.1f | %.1f | %.0f |\n", o, ($4-$1)/n, ($5-$2)/n, ($6-$3)/n, ($10-$7)/n, ($11-$8)/n, ($12-$9)/n }'
done
q "ALTER SYSTEM RESET autovacuum" >/dev/null; q "SELECT pg_reload_conf()" >/dev/null

# profile: the round's statements by total time (needs pg_stat_statements preloaded)
if q "SHOW shared_preload_libraries" | grep -q pg_stat_statements; then
  q "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
  q "ALTER DATABASE $db SET pg_stat_statements.track = 'all'" >/dev/null
  q "SELECT bench.fill(1, 1, 1, 500, 1)" >/dev/null
  q "SELECT pg_stat_statements_reset()" >/dev/null
  tps 1 500 "$push_sql" -D n=0 -D base=0 >/dev/null
  echo
  echo "pg_stat_statements, 500 one-op push rounds (calls per round, ms per round, statement):"
  q "SELECT round(calls / 500.0, 2) || ' | ' || round((total_exec_time + total_plan_time)::numeric / 500, 4)
       || ' | ' || left(regexp_replace(query, '\s+', ' ', 'g'), 110)
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')
      ORDER BY total_exec_time DESC LIMIT 16"
fi
# the gateway: POST /sync push rounds through syncular-gateway vs handle_http called directly
if [ "$only" = all ] && [ -x "$here/../gateway/syncular-gateway" ]; then
  /usr/bin/python3 "$here/gateway.py" "${secs:-5}"
  /usr/bin/python3 "$here/gateway_realtime.py" 1000
  group_commit
  http_cases
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
