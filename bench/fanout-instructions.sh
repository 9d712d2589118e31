#!/usr/bin/env bash
# The backend's instructions per realtime fanout call, which (unlike time on a shared machine) do
# not drift between runs, in the shape of bench/gateway_realtime_ack.py: n sockets of partition
# p1 (default 250, the gateway's --fanout-batch), each its own client (lat<i>, registered by a
# pull, its registration from realtime_connect), all at the head, and one new commit every one
# of them receives (n deltas, n live-grant resolver calls).  The connections go in as each
# gateway sends them: 0.6.0's one JSON text cast to jsonb (realtime_fanout), 0.7.0's three arrays
# (realtime_fanout_arrays, when the staged build has it).  Each case runs under valgrind
# --tool=callgrind in single-user mode, once with 1 call and once with calls + 1 (default 5 + 1)
# identical calls; instructions per call = the difference / calls, so the first call (catalog
# caches, loading the library, parsing the registrations into an empty cache) is left out.
# Never fails on a figure.  Usage: bash bench/fanout-instructions.sh [sockets] [calls]   (needs
# valgrind; SYNCULAR_STAGE selects the staged build, as for scripts/pgenv.sh; a few minutes).
# FANOUT_IR_KEEP=<dir> keeps the callgrind outputs there (cg-<case>-<calls>.out, for
# callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-250}
calls=${2:-5}
. bench/callgrind-cluster.sh bench-fanout-ir
sql -d bench -f test/gateway/fixture.sql >/dev/null
for _ in 1 2; do    # the epoch, then the registering pull of every client
  sql -d bench -c "SELECT count(syncular.handle(gwtest.pull('p1', 'lat' || i), 'p1', 'u1'))
                     FROM generate_series(0, $((n - 1))) i" >/dev/null
done
sql -d bench >/dev/null <<SQL
CREATE TABLE public.bench_conns AS
  SELECT i AS conn, (h ->> 'cursor')::bigint AS cursor, (h -> 'registration')::text AS registration
    FROM generate_series(0, $((n - 1))) i, syncular.realtime_connect('p1', 'u1', 'lat' || i) h;
SELECT count(syncular.handle(gwtest.push('p1', 'writer', 'c0', 'r0', 'x'), 'p1', 'u1'));
-- stored uncompressed (as a gateway's parameter arrives: no decompression in the count)
CREATE TABLE public.bench_args (conns_text text, ids bigint[], cursors bigint[], regs text[], seq bigint);
ALTER TABLE public.bench_args ALTER conns_text SET STORAGE EXTERNAL, ALTER ids SET STORAGE EXTERNAL,
  ALTER cursors SET STORAGE EXTERNAL, ALTER regs SET STORAGE EXTERNAL;
INSERT INTO public.bench_args
  SELECT '[' || string_agg(format('{"conn":%s,"cursor":%s,"registration":%s}', conn, cursor, registration),
                            ',' ORDER BY conn) || ']',
         array_agg(conn::bigint ORDER BY conn), array_agg(cursor ORDER BY conn),
         array_agg(registration ORDER BY conn), (SELECT max(commit_seq) FROM syncular.sync_commits)
    FROM public.bench_conns;
SQL
summary=$(sql -d bench -c "SELECT string_agg(cnt || ' ' || action, ', ') FROM (SELECT action, count(*) cnt
  FROM syncular.realtime_fanout('p1', (SELECT seq FROM bench_args), (SELECT conns_text::jsonb FROM bench_args))
  GROUP BY 1 ORDER BY 1) x")
arrays=$(sql -d bench -c "SELECT count(*) FROM pg_proc WHERE proname = 'realtime_fanout_arrays'")
as_pg "$BIN/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
# the JSON text is cast to jsonb when the statement runs (jsonb_in, as for a gateway's parameter)
declare -A stmt=(
  [jsonb]="SELECT count(*) FROM bench_args a, syncular.realtime_fanout('p1', a.seq, a.conns_text::jsonb) f;"
  [arrays]="SELECT count(*) FROM bench_args a, syncular.realtime_fanout_arrays('p1', a.seq, a.ids, a.cursors, a.regs) f;")
label() { [ "$1" = jsonb ] && echo "realtime_fanout (text cast to jsonb)" || echo "realtime_fanout_arrays"; }
echo "$n sockets ($summary), instructions per call (the mean of $calls after the first):"
for c in jsonb arrays; do
  [ "$c" = arrays ] && [ "$arrays" != 1 ] && continue
  for k in 1 $((calls + 1)); do
    for _ in $(seq 1 "$k"); do echo "${stmt[$c]}"; done > "$work/$c-$k.sql"
    chmod 644 "$work/$c-$k.sql"
    as_pg bash -c "valgrind --tool=callgrind --callgrind-out-file=$work/cg-$c-$k.out \
      $BIN/postgres --single -D $work/data -c autovacuum=off bench < $work/$c-$k.sql > $work/cg-$c-$k.log 2>&1"
    if grep -q ERROR "$work/cg-$c-$k.log"; then grep -m3 ERROR "$work/cg-$c-$k.log"; fi
    if [ -n "${FANOUT_IR_KEEP:-}" ]; then mkdir -p "$FANOUT_IR_KEEP"; cp "$work/cg-$c-$k.out" "$FANOUT_IR_KEEP/"; fi
  done
  one=$(sed -n 's/^summary: //p' "$work/cg-$c-1.out")
  many=$(sed -n 's/^summary: //p' "$work/cg-$c-$((calls + 1)).out")
  awk -v l="$(label $c)" -v a="$one" -v b="$many" -v k="$calls" -v n="$n" \
    'BEGIN { printf "  %-38s %12.0f  (%.0f per socket)\n", l, (b - a) / k, (b - a) / k / n }'
done
