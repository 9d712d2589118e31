#!/usr/bin/env bash
# Counter test (docs/operations.md): the activity counters exist only when the library is in
# shared_preload_libraries, which the main test cluster deliberately does not set (the suite
# checks the "not preloaded" answer there).  This script starts a small cluster of its own with
# shared_preload_libraries = 'syncular' (unix socket in a private directory, TCP on 127.0.0.1
# only, a free port), runs the pg_regress tests of test/stats against it, checks that concurrent
# rounds are each counted once (pgbench), and stops the server by its data directory in a trap.
# Serves the installation staged from this tree (scripts/cluster-work.sh).  As root, the cluster runs as user
# postgres.  Bounded: the caller (scripts/test.sh) runs it under timeout.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/cluster-work.sh stats
REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

out=$(mktemp -d /tmp/syncular-stats-out.XXXXXX)
cleanup() {
  as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work" "$out"
}
trap cleanup EXIT

port=$(bash scripts/free-port.sh)
start_cluster "$port" -c shared_preload_libraries=syncular

tests=$(cd test/stats/sql && ls *.sql | sed 's/\.sql$//' | sort)
status=0
"$REGRESS" --bindir="$BIN" --inputdir=test/stats --outputdir="$out" \
  --host="$work" --port="$port" --user=postgres $tests || status=1
if [ $status -ne 0 ]; then
  mkdir -p test/stats/results && cp "$out"/results/*.out test/stats/results/ 2>/dev/null || true
  cat "$out/regression.diffs" 2>/dev/null || true
  echo "--- server log" >&2
  tail -30 "$work/server.log" >&2
fi

# Concurrency: four pgbench clients push 100 one-operation commits each into 16 partitions (one
# round per transaction, log epochs acquired beforehand by bench/setup.sql); every round and
# commit is counted exactly once, whatever the interleaving.
sql() { "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres "$@"; }
sql -d postgres -c "CREATE DATABASE syncular_t_stats_conc"
sql -d syncular_t_stats_conc -f bench/setup.sql >/dev/null
sql -d syncular_t_stats_conc -c "SELECT syncular.stats_reset()" >/dev/null
printf '%s\n' '\set p random(1, 16)' "SELECT bench.push('p' || :p, 1);" > "$work/push.sql"
"$BIN/pgbench" -n -t 100 -c 4 -j 4 -h "$work" -p "$port" -U postgres -f "$work/push.sql" syncular_t_stats_conc >/dev/null
got=$(sql -d syncular_t_stats_conc -c "SELECT rounds_ok || ' ' || rounds_refused || ' ' || push_commits_applied || ' ' || push_operations
  || ' ' || (SELECT sum(x) FROM unnest(push_time_buckets) x) || ' ' || (SELECT push_operations FROM syncular.stats_tables t WHERE t.dbid = s.dbid)
  FROM syncular.stats s WHERE datname = current_database()")
if [ "$got" = "400 0 400 400 400 400" ]; then
  echo "ok - 4 concurrent clients x 100 push rounds: rounds, commits, operations, push phases and the table's operations all 400"
else
  echo "not ok - 4 concurrent clients x 100 push rounds: got [$got], expected [400 0 400 400 400 400]"
  status=1
fi
exit $status
