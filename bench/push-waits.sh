#!/usr/bin/env bash
# What concurrent 1-op pushes wait on: pg_stat_activity sampled every 3 ms (wait_event_type /
# wait_event of every active pgbench backend; "CPU" = running, no wait event) while `clients`
# pgbench clients each push `per` 1-op commits (pre-built requests, bench.fill, partitions at
# random among `parts`; with `disjoint`, each client its own parts / clients partitions, so no
# two clients ever want the same partition lock and every lock wait left is shared state).  Prints the tps, the share of samples per wait event, the relations
# named by waits on heavyweight locks, and the MultiXacts the run created.  Runs against the
# cluster of the PG* environment with syncular installed (scripts/pgenv.sh), in a database
# `bench` it recreates.  Never fails on a figure.
# Usage: bash bench/push-waits.sh [clients] [parts] [per-client] [random|disjoint]
set -euo pipefail
clients=${1:-4}
parts=${2:-16}
per=${3:-1500}
spread=${4:-random}
. "$(dirname "$0")/bench-db.sh"
# 2,000 warm-up commits over the partitions (every keyed read has an index plan), then ANALYZE
q "SELECT count(bench.push('p' || (1 + g % $parts), 1)) FROM generate_series(1, 2000) g" >/dev/null
q "SELECT bench.fill(1, $clients, $parts, $per, 1)" >/dev/null
if [ "$spread" = disjoint ]; then
  # client c (k / 100000) gets partitions c * (parts / clients) + 1 .. (c + 1) * (parts / clients)
  q "UPDATE bench.req u SET part = x.part, req = bench.push_req(x.part, 'c' || x.c, u.rows)
       FROM (SELECT k, k / 100000 AS c, 'p' || ((k / 100000) * ($parts / $clients) + 1 +
                    (k % 100000) % GREATEST($parts / $clients, 1)) AS part FROM bench.req) x
      WHERE u.k = x.k" >/dev/null
fi
q "CREATE UNLOGGED TABLE bench.waits (c text, t text, e text, rel text)"
q "ANALYZE"
q "CHECKPOINT"
mx0=$(q "SELECT next_multixact_id FROM pg_control_checkpoint()")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '\set n :n + 1' '\set k :client_id * 100000 + :n' \
  "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = :k;" > "$tmp/s.sql"
sample_waits all 0.003 &
sampler=$!
sleep 0.5
tps=$(pgbench -n -M prepared -c "$clients" -j "$clients" -t "$per" -D n=0 -f "$tmp/s.sql" "$db" 2>"$tmp/err" |
  awk '/^tps/ {print $3; exit}' || true)
if grep -q ERROR "$tmp/err"; then head -3 "$tmp/err" >&2; fi
wait "$sampler"
q "CHECKPOINT"
mx1=$(q "SELECT next_multixact_id FROM pg_control_checkpoint()")
echo "clients $clients, partitions $parts ($spread), $per 1-op pushes each: tps $tps, load $(cut -d' ' -f1-3 /proc/loadavg), MultiXacts $((mx1 - mx0))"
# the relations only for heavyweight-lock waits (pg_locks is read a moment after the activity)
q "SELECT format('%6s%%  %s %s %s', round(100.0 * count(*) / sum(count(*)) OVER (), 1), t, e,
                 CASE WHEN t = 'Lock' THEN coalesce('(' || string_agg(DISTINCT rel, ',') || ')', '') ELSE '' END)
     FROM bench.waits GROUP BY t, e ORDER BY count(*) DESC"
echo "samples: $(q "SELECT count(*) FROM bench.waits")"
