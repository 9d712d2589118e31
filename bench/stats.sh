#!/usr/bin/env bash
# The activity counters' cost on push throughput (docs/operations.md "Cost"): the same pgbench
# push scripts against one cluster of its own, restarted with and without
# shared_preload_libraries = 'syncular' (counters on / off; the same build), interleaved
# (off, on, on, off per round of cases) so that drift hits both sides alike.  Prints the tps of
# each side and on / off; never fails on a time.
# Usage: bash bench/stats.sh [seconds-per-run] [rounds]   (PG_CONFIG selects the PostgreSQL;
# syncular must be installed in it)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
rounds=${2:-2}
. scripts/cluster-work.sh bench-stats
port=$(bash scripts/free-port.sh)
as_pg "$BIN/initdb" -A trust -U postgres -D "$work/data" >/dev/null
trap 'as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
start() { # start on|off
  local pre=""
  [ "$1" = on ] && pre="syncular"
  as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/log" -w \
    -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c shared_preload_libraries=$pre" start >/dev/null
}
stop() { as_pg "$BIN/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null; }
sql() { "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres "$@"; }

start off
sql -d postgres -c "CREATE DATABASE bench"
sql -d bench -f bench/setup.sql >/dev/null
stop

tmp=$(mktemp -d)
tps() { # tps <script text>
  printf '%s\n' "$1" > "$tmp/s.sql"
  "$BIN/pgbench" -n -T "$secs" -c 2 -j 2 -h "$work" -p "$port" -U postgres -f "$tmp/s.sql" bench 2>/dev/null |
    awk '/^tps/ {print $3; exit}' || true
}
declare -A sum
cases=("1 16" "10 16")
for r in $(seq 1 "$rounds"); do
  for side in off on on off; do
    start "$side"
    [ "$(sql -d bench -c 'SELECT coalesce(bool_and(preloaded), true) FROM syncular.stats' 2>/dev/null)" = "$([ "$side" = on ] && echo t || echo f)" ] ||
      { echo "the counters are not $side" >&2; exit 1; }
    for c in "${cases[@]}"; do
      set -- $c
      t=$(tps "\\set p random(1, $2)
SELECT bench.push('p' || :p, $1);")
      sum["$c $side"]=$(awk -v a="${sum["$c $side"]:-0}" -v b="$t" 'BEGIN { print a + b }')
    done
    stop
  done
done
rm -rf "$tmp"
printf '%-40s %10s %10s %8s\n' "push case (mean of $((rounds * 2)) runs of ${secs}s)" "off" "on" "on/off"
for c in "${cases[@]}"; do
  set -- $c
  awk -v n="push ${1}-op commits, ${2} partitions, tps" -v a="${sum["$c off"]}" -v b="${sum["$c on"]}" -v k=$((rounds * 2)) \
    'BEGIN { printf "%-40s %10.1f %10.1f %8.3f\n", n, a / k, b / k, (a > 0 ? b / a : 0) }'
done
