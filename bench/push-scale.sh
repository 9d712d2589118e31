#!/usr/bin/env bash
# How 1-op pushes scale with concurrent clients: for each case "clients:partitions" (default
# 1:16 4:16 1:1 4:1, run in turn, `runs` times, interleaved), pgbench pushes `per` pre-built
# 1-op commits per client (bench.fill, partitions at random) and prints the tps, the backend
# CPU per push (the CPU of the exited backends: the postmaster's cutime + cstime before and
# after the run, clock ticks, so nothing else may connect meanwhile) and the load average; then
# the same rows as plain SQL upserts (one per transaction) with the same clients, the baseline
# of both figures.
# With PUSH_SCALE_SAMPLE=1 each case then runs once more while pg_stat_activity is sampled
# every 10 ms (wait_event_type / wait_event of the active pgbench backends, "CPU" = none,
# and the relation or lock type of each ungranted pg_locks entry); the sampler's own backend
# is not in the CPU figures.  Runs against the cluster of the PG* environment with syncular
# installed (scripts/pgenv.sh), in a database `bench` it recreates.  With pg_stat_statements
# preloaded and pg_stat_statements.track = all, also the reservations that fell back to the
# kept UPDATE of the partition row, per push (a writer that waited on the row and found it
# updated, storage.c).  Never fails on a figure.
# Usage: bash bench/push-scale.sh [per-client] [runs] [clients:partitions ...]
set -euo pipefail
per=${1:-1500}
runs=${2:-3}
shift $(($# < 2 ? $# : 2))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(1:16 4:16 1:1 4:1)
. "$(dirname "$0")/bench-db.sh"
q "SELECT count(bench.push('p' || (1 + g % 16), 1)) FROM generate_series(1, 2000) g" >/dev/null
q "CREATE UNLOGGED TABLE bench.waits (c text, t text, e text, rel text)"
q "ANALYZE"
pss=$(q "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_stat_statements'
         AND current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")
[ "$pss" = 0 ] || q "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
# the reservation's statement (the partition row update of a catalog from before 0.7.0, when its
# direct path fell back): 0 since 0.7.0, whose partition lock writes no row (src/storage_partition.c)
fallbacks() {
  [ "$pss" = 0 ] && { echo -; return; }
  q "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
      WHERE query LIKE 'UPDATE syncular.sync_partitions p SET max_commit_seq = p.max_commit_seq +%'"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '\set n :n + 1' '\set k :client_id * 100000 + :n' \
  "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = :k;" > "$tmp/s.sql"
# the plain baseline: the same rows, one upsert of a plain table per transaction (bench/cases.sh)
printf '%s\n' '\set n :n + 1' '\set k :client_id * 100000 + :n' \
  "INSERT INTO public.items_plain SELECT DISTINCT ON (r->>'id') q.part, r->>'id', r->>'list_id', r->>'title',
     (r->>'qty')::bigint, (r->>'done')::boolean FROM bench.req q, jsonb_array_elements(q.rows) r WHERE q.k = :k
   ORDER BY r->>'id' ON CONFLICT (partition, id) DO UPDATE SET list_id = EXCLUDED.list_id,
     title = EXCLUDED.title, qty = EXCLUDED.qty, done = EXCLUDED.done;" > "$tmp/p.sql"
pm=$(head -1 "$(q 'SHOW data_directory')/postmaster.pid")
hz=$(getconf CLK_TCK)
reaped() { awk '{print $16 + $17}' "/proc/$pm/stat"; }
bench() {  # clients [script]: prints "tps cpu-ticks"
  local c0 c1 t
  c0=$(reaped)
  t=$(pgbench -n -M prepared -c "$1" -j "$1" -t "$per" -D n=0 -f "${2:-$tmp/s.sql}" "$db" 2>"$tmp/err" |
    awk '/^tps/ {print $3; exit}' || true)
  if grep -q ERROR "$tmp/err"; then head -3 "$tmp/err" >&2; fi
  sleep 0.3   # the postmaster reaps the exited backends
  c1=$(reaped)
  echo "$t $((c1 - c0))"
}
sample() {  # case label: one run sampled every 10 ms (bench-db.sh)
  sample_waits "$1" 0.01 &
  local sampler=$!
  sleep 0.5
  bench "${1%%:*}" >/dev/null
  wait "$sampler"
}
echo "fsync=$(q 'SHOW fsync'), $per 1-op pushes per client, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | run | tps | backend CPU ms / push | reservation statements / push | plain SQL tps | plain CPU ms / upsert | load |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$runs"); do
  for cs in "${cases[@]}"; do
    q "SELECT bench.fill(1, ${cs%%:*}, ${cs##*:}, $per, 1)" >/dev/null
    f0=$(fallbacks)
    read -r t ticks <<<"$(bench "${cs%%:*}")"
    f1=$(fallbacks)
    read -r pt pticks <<<"$(bench "${cs%%:*}" "$tmp/p.sql")"
    awk -v c="$cs" -v r="$r" -v t="$t" -v k="$ticks" -v hz="$hz" -v n=$((${cs%%:*} * per)) \
      -v f0="$f0" -v f1="$f1" -v pt="$pt" -v pk="$pticks" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
      'BEGIN { printf "| %s | %d | %.0f | %.3f | %s | %.0f | %.3f | %s |\n", c, r, t, 1000.0 * k / hz / n,
               (f0 == "-" ? "-" : sprintf("%.3f", (f1 - f0) / n)), pt, 1000.0 * pk / hz / n, l }'
  done
done
if [ "${PUSH_SCALE_SAMPLE:-0}" = 1 ]; then
  for cs in "${cases[@]}"; do
    q "SELECT bench.fill(1, ${cs%%:*}, ${cs##*:}, $per, 1)" >/dev/null
    sample "$cs"
  done
  echo "wait events, share of the samples of active pushers (10 ms), load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  q "SELECT format('%-5s %6s%%  %s %s %s', c, round(100.0 * count(*) / sum(count(*)) OVER (PARTITION BY c), 1),
                   t, e, coalesce('(' || string_agg(DISTINCT rel, ',') || ')', ''))
       FROM bench.waits GROUP BY c, t, e ORDER BY c, count(*) DESC"
  q "SELECT c || ': ' || count(*) || ' samples' FROM bench.waits GROUP BY c ORDER BY c"
fi
