#!/usr/bin/env bash
# The backend's instructions per push round, which (unlike time on a shared machine) do not
# drift between runs: n pre-built 1-op push rounds (the bench.req requests of bench/cases.sh, the
# gateway's shape), each its own transaction, run under valgrind --tool=callgrind in single-user
# mode; the same rounds' rows written by the plain-SQL upsert of bench/cases.sh on a copy of the
# same data directory; and n `SELECT 1` rounds for what single-user mode itself costs.  Prints
# instructions per round for syncular and plain (each less the SELECT 1 round), their ratio, and
# the inclusive instructions per round of the push pipeline's own functions (callgrind_annotate).
# A round here is `SELECT syncular.handle(...)` of one PUSH_COMMIT, without a client round trip.
# Rounds of new rows (inserts) and of the same rows again (updates) are counted apart.
# Never fails on a figure.  Usage: bash bench/push-instructions.sh [rounds] [ops]   (needs
# valgrind; SYNCULAR_STAGE selects the staged build, as for scripts/pgenv.sh; a few minutes).
# PUSH_IR_KEEP=<dir> keeps the callgrind outputs there (cg-push-both.out: insert and update
# rounds, for callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
ops=${2:-1}
. bench/callgrind-cluster.sh bench-push-ir
sql -d bench -f bench/setup.sql >/dev/null
# a partition with a log (3,000 commits), so every keyed read has an index plan as in steady
# state (on a near-empty table the planner scans it, and a kept plan keeps scanning it); then
# requests for 3n rounds by one client on one partition: the first n warm the plans and the
# pages; the next n write (mostly) new rows ("insert" rounds); the last n write the rows of the
# insert rounds again ("update" rounds).  The plain baseline gets the same rows.
# random() seeded: the same rows, commit ids (bench.push_req) and so the same mix of inserts and
# updates in every run; unseeded, two runs of one build differed by up to 8k instructions per
# round (a spread of about 1% remains)
sql -d bench -c "SELECT setseed(0.25)" -c "SELECT count(bench.push('p1', 1)) FROM generate_series(1, 3000)" >/dev/null
sql -d bench -c "SELECT setseed(0.5)" -c "SELECT bench.fill($ops, 1, 1, $((3 * n)), 2)" \
             -c "UPDATE bench.req u SET rows = o.rows, req = bench.push_req(u.part, 'c0', o.rows)
                   FROM bench.req o WHERE u.k % 10000000 > $((2 * n)) AND o.k = u.k - $n" \
             -c "SELECT count(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k <= $n" \
             -c "SELECT count(bench.plain_req(q.k)) FROM bench.req q WHERE q.k > 10000000 AND q.k <= 10000000 + $n" \
             -c "VACUUM ANALYZE" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
rounds() {  # rounds <first> <last> <push|plain>
  for i in $(seq "$1" "$2"); do
    if [ "$3" = push ]; then echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = $i;"
    else echo "SELECT bench.plain_req($((10000000 + i)));"; fi
  done
}
for side in push plain; do
  rounds $((n + 1)) $((2 * n)) $side > "$work/$side-ins.sql"
  { cat "$work/$side-ins.sql"; rounds $((2 * n + 1)) $((3 * n)) $side; } > "$work/$side-both.sql"
done
for i in $(seq 1 "$n"); do echo "SELECT 1;"; done > "$work/none.sql"
# warm-up statements of the session (catalog caches, the plans of the first round) in every run
{ echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = 1;"
  echo "SELECT bench.plain_req(10000001);"; } > "$work/warm.sql"
chmod 644 "$work"/*.sql
declare -A ir
for side in none push-ins push-both plain-ins plain-both; do
  as_pg cp -a "$work/data" "$work/data-$side"
  as_pg bash -c "cat $work/warm.sql $work/$side.sql | valgrind --tool=callgrind --callgrind-out-file=$work/cg-$side.out \
    $BIN/postgres --single -D $work/data-$side -c autovacuum=off bench > $work/cg-$side.log 2>&1"
  ir[$side]=$(sed -n 's/^summary: //p' "$work/cg-$side.out")
  if grep -q ERROR "$work/cg-$side.log"; then grep -m3 ERROR "$work/cg-$side.log"; fi
  if [ -n "${PUSH_IR_KEEP:-}" ]; then mkdir -p "$PUSH_IR_KEEP"; cp "$work/cg-$side.out" "$PUSH_IR_KEEP/"; fi
done
awk -v n="$n" -v o="$ops" -v none="${ir[none]}" -v si="${ir[push-ins]}" -v sb="${ir[push-both]}" \
    -v bi="${ir[plain-ins]}" -v bb="${ir[plain-both]}" 'BEGIN {
  s = (si - none) / n; b = (bi - none) / n
  printf "instructions per %d-op round, new rows (%d rounds, less a SELECT 1 round): syncular %.0f, plain SQL %.0f, plain / syncular %.3f\n", o, n, s, b, b / s
  s = (sb - si) / n; b = (bb - bi) / n
  printf "instructions per %d-op round, the same rows again (updates): syncular %.0f, plain SQL %.0f, plain / syncular %.3f\n", o, s, b, b / s }'
echo "inclusive instructions per round (insert and update rounds, callgrind_annotate) of the push pipeline's functions:"
callgrind_annotate --inclusive=yes "$work/cg-push-both.out" 2>/dev/null |
  awk -v n="$n" '/src\/(push|storage|round|gate|scopes|schema|hooks|syncular|sql_api|storage_rows|wakeup|stats|leases)[a-z_]*\.c:[a-z_]+ / {
      f = $0; sub(/^.*src\//, "", f); sub(/ .*$/, "", f); gsub(",", "", $1)
      if (!(f in seen)) { seen[f] = 1; if ($1 / (2 * n) >= 2000) printf "  %9.0f  %s\n", $1 / (2 * n), f } }'
