#!/usr/bin/env bash
# The backend's instructions per ordinary SQL write on a synced table (docs/writing-with-sql.md),
# which (unlike time on a shared machine) do not drift between runs: the cases of
# bench/sql_writes.sh, each on the synced table `items` and on the plain table with the same
# columns, run under valgrind --tool=callgrind in single-user mode, each from a copy of the same
# data directory:
#   single-row UPDATE, each statement its own transaction (n statements, less n `SELECT 1`);
#   COPY FROM of `bulk` rows into a fresh partition (less the same warm-up alone);
#   UPDATE of those `bulk` rows, one statement (less the COPY run).
# Prints instructions per statement for syncular and plain and their ratio, then the inclusive
# instructions per single-row UPDATE of the capture's own functions (callgrind_annotate).
# Never fails on a figure.  Usage: bash bench/sql-write-instructions.sh [n] [bulk]
# (needs valgrind; SYNCULAR_STAGE selects the staged build, as for scripts/pgenv.sh;
# SQLW_RUNS="copy-sync ..." runs only those runs, SQLW_KEEP=<dir> keeps their callgrind files)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
bulk=${2:-10000}
. bench/callgrind-cluster.sh bench-sqlw-ir
sql -d bench -f bench/sql_writes_schema.sql >/dev/null
# the rows: 20,000 stored in partition p (the single-row case updates them), and the bulk input
rows=20000
sql -d bench -c "COPY (SELECT 'r' || i, 'l' || (i % 100), 'title of row ' || i, i, i % 2 = 0
  FROM generate_series(1, $rows) i) TO STDOUT" > "$work/rows.tsv"
sql -d bench -c "COPY (SELECT 'b' || i, 'l' || (i % 100), 'title of row ' || i, i, i % 2 = 0
  FROM generate_series(1, $bulk) i) TO STDOUT" > "$work/bulk.tsv"
chmod 644 "$work"/*.tsv
sql -d bench -c "SET syncular.partition = 'p'" -c "COPY public.items (id, list_id, title, qty, done) FROM '$work/rows.tsv'" \
  -c "ALTER TABLE public.items_plain ALTER COLUMN partition SET DEFAULT 'p'" \
  -c "COPY public.items_plain (id, list_id, title, qty, done) FROM '$work/rows.tsv'" \
  -c "VACUUM ANALYZE" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
# single-row UPDATEs of rows drawn by a fixed rule (the same rows on both sides, every run)
for side in sync plain; do
  for i in $(seq 1 "$n"); do
    k=$(( (i * 7919) % rows + 1 ))
    if [ $side = sync ]; then
      echo "UPDATE public.items SET qty = qty + 1 WHERE _sync_partition = 'p' AND _sync_row_id = 'r$k';"
    else
      echo "UPDATE public.items_plain SET qty = qty + 1 WHERE partition = 'p' AND id = 'r$k';"
    fi
  done > "$work/one-$side.sql"
done
for i in $(seq 1 "$n"); do echo "SELECT 1;"; done > "$work/none.sql"
echo "SET syncular.partition = 'bulk';" > "$work/pre-sync.sql"
echo "ALTER TABLE public.items_plain ALTER COLUMN partition SET DEFAULT 'bulk';" > "$work/pre-plain.sql"
echo "COPY public.items (id, list_id, title, qty, done) FROM '$work/bulk.tsv';" > "$work/copy-sync.sql"
echo "COPY public.items_plain (id, list_id, title, qty, done) FROM '$work/bulk.tsv';" > "$work/copy-plain.sql"
echo "UPDATE public.items SET qty = qty + 1 WHERE _sync_partition = 'bulk';" > "$work/upd-sync.sql"
echo "UPDATE public.items_plain SET qty = qty + 1 WHERE partition = 'bulk';" > "$work/upd-plain.sql"
# warm-up of every run (catalog caches, the capture's kept plans): one write of each kind
{ echo "SET syncular.partition = 'warm';"
  echo "INSERT INTO public.items (id, list_id) VALUES ('w', 'l0');"
  echo "UPDATE public.items SET qty = 1 WHERE _sync_partition = 'warm';"
  echo "UPDATE public.items SET qty = qty + 1 WHERE _sync_partition = 'p' AND _sync_row_id = 'r1';"
  echo "INSERT INTO public.items_plain (partition, id, list_id) VALUES ('warm', 'w', 'l0');"
  echo "UPDATE public.items_plain SET qty = qty + 1 WHERE partition = 'p' AND id = 'r1';"; } > "$work/warm.sql"
chmod 644 "$work"/*.sql
declare -A parts=(
  [none]="none.sql" [one-sync]="one-sync.sql" [one-plain]="one-plain.sql"
  [pre-sync]="pre-sync.sql" [pre-plain]="pre-plain.sql"
  [copy-sync]="pre-sync.sql copy-sync.sql" [copy-plain]="pre-plain.sql copy-plain.sql"
  [upd-sync]="pre-sync.sql copy-sync.sql upd-sync.sql" [upd-plain]="pre-plain.sql copy-plain.sql upd-plain.sql")
declare -A ir
for run in ${SQLW_RUNS:-none one-sync one-plain pre-sync pre-plain copy-sync copy-plain upd-sync upd-plain}; do
  as_pg cp -a "$work/data" "$work/data-$run"
  files="$work/warm.sql"
  for f in ${parts[$run]}; do files="$files $work/$f"; done
  as_pg bash -c "cat $files | valgrind --tool=callgrind --callgrind-out-file=$work/cg-$run.out \
    $BIN/postgres --single -D $work/data-$run -c autovacuum=off bench > $work/cg-$run.log 2>&1"
  ir[$run]=$(sed -n 's/^summary: //p' "$work/cg-$run.out")
  if grep -q ERROR "$work/cg-$run.log"; then grep -m3 ERROR "$work/cg-$run.log"; fi
  as_pg rm -rf "$work/data-$run"
  if [ -n "${SQLW_KEEP:-}" ]; then mkdir -p "$SQLW_KEEP"; cp "$work/cg-$run.out" "$SQLW_KEEP/"; fi
done
awk -v n="$n" -v b="$bulk" -v none="${ir[none]:-0}" -v os="${ir[one-sync]:-0}" -v op="${ir[one-plain]:-0}" \
    -v ps="${ir[pre-sync]:-0}" -v pp="${ir[pre-plain]:-0}" -v cs="${ir[copy-sync]:-0}" -v cp="${ir[copy-plain]:-0}" \
    -v us="${ir[upd-sync]:-0}" -v up="${ir[upd-plain]:-0}" 'BEGIN {
  s = (os - none) / n; p = (op - none) / n
  printf "single-row UPDATE, own transaction (%d statements, less a SELECT 1 each): syncular %.0f, plain %.0f, plain / syncular %.3f\n", n, s, p, p / s
  s = cs - ps; p = cp - pp
  printf "COPY FROM of %d rows: syncular %.0f (%.0f per row), plain %.0f (%.0f per row), plain / syncular %.3f\n", b, s, s / b, p, p / b, p / s
  s = us - cs; p = up - cp
  printf "UPDATE of %d rows: syncular %.0f (%.0f per row), plain %.0f (%.0f per row), plain / syncular %.3f\n", b, s, s / b, p, p / b, p / s }'
echo "inclusive instructions per single-row UPDATE of the capture's functions (callgrind_annotate, less nothing):"
callgrind_annotate --inclusive=yes "$work/cg-one-sync.out" 2>/dev/null |
  awk -v n="$n" '/src\/(capture|storage|gate|schema|wakeup)[a-z_]*\.c:[a-z_]+ / {
      f = $0; sub(/^.*src\//, "", f); sub(/ .*$/, "", f); gsub(",", "", $1)
      if (!(f in seen)) { seen[f] = 1; if ($1 / n >= 2000) printf "  %9.0f  %s\n", $1 / n, f } }'
