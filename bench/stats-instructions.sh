#!/usr/bin/env bash
# The activity counters' cost in instructions, which (unlike time on a shared machine) does not
# drift between runs: the same batch of rounds (200 pull rounds, 200 one-op and 100 ten-op push
# rounds, requests built in plpgsql) runs under valgrind --tool=callgrind in single-user mode,
# once with shared_preload_libraries = 'syncular' (counters on) and once without, on copies of
# the same data directory.  Prints the instructions of each run, the difference, and on the
# counted run the instructions spent inside the counter code (src/stats.c, inclusive).
# Never fails on a figure.  Usage: bash bench/stats-instructions.sh   (needs valgrind; PG_CONFIG
# selects the PostgreSQL, syncular installed in it; a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 0; }
. scripts/cluster-work.sh bench-stats-ir
trap 'as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
port=$(bash scripts/free-port.sh)
as_pg "$BIN/initdb" -A trust -U postgres -D "$work/data" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/log" -w -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
sql() { "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres "$@"; }
sql -d postgres -c "CREATE DATABASE bench"
sql -d bench -f bench/setup.sql >/dev/null
# warm: plans cached in the catalog, partitions holding rows
sql -d bench -c "SELECT count(bench.pull('p16', 0)) FROM generate_series(1, 20)" \
             -c "SELECT count(bench.push('p' || (g % 15 + 1), 1)) FROM generate_series(1, 50) g" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
cat > "$work/batch.sql" <<'SQL'
SELECT count(bench.pull('p16', 0)) FROM generate_series(1, 200);
SELECT count(bench.push('p' || (g % 15 + 1), 1)) FROM generate_series(1, 200) g;
SELECT count(bench.push('p' || (g % 15 + 1), 10)) FROM generate_series(1, 100) g;
SQL
chmod 644 "$work/batch.sql"
declare -A ir
for side in off on; do
  pre=""; [ "$side" = on ] && pre=syncular
  as_pg cp -a "$work/data" "$work/data-$side"
  as_pg bash -c "valgrind --tool=callgrind --callgrind-out-file=$work/cg-$side.out $BIN/postgres --single \
    -D $work/data-$side -c shared_preload_libraries=$pre bench < $work/batch.sql > $work/cg-$side.log 2>&1"
  ir[$side]=$(sed -n 's/^summary: //p' "$work/cg-$side.out")
done
counted=$(callgrind_annotate --inclusive=yes "$work/cg-on.out" 2>/dev/null |
  awk '/=> .*src\/stats.c:sync_stats_/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
awk -v off="${ir[off]}" -v on="${ir[on]}" -v c="$counted" 'BEGIN {
  printf "instructions, 500 rounds: counters off %.0f, on %.0f, difference %.0f (%.3f%%)\n", off, on, on - off, 100 * (on - off) / off
  printf "inside the counter calls (src/stats.c): %.0f = %.0f per round (%.3f%% of the counted run)\n", c, c / 500, 100 * c / on }'
