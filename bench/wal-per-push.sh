#!/usr/bin/env bash
# WAL per push round, counted exactly: pg_waldump over the LSN range of n pre-built push rounds
# (bench/setup.sql's table, each round `SELECT syncular.handle(...)` in its own transaction, one
# client, one partition with a 3,000-commit log), records and bytes per round and the records by
# relation (heap and index of each catalog table, the transaction record, the rest).  Cases: a
# 1-op push of a new row, a 1-op push of a stored row (update), and a 100-op push (new rows,
# then the same rows again), whose figures are also given per change.  Runs against the cluster
# of the PG* environment as a superuser on the same machine (reads its pg_wal), in a database
# `bench_wal` it recreates; autovacuum off, a CHECKPOINT before each case (FPI = full-page
# images, the first write of each page after it).  WAL_BY_TYPE=1 also splits each relation's
# records by record type (HOT_UPDATE, LOCK, INSERT_LEAF, ...).  Never asserts.
# Usage: bash scripts/pgenv.sh -- bash bench/wal-per-push.sh [rounds-1op] [rounds-100op]
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-100}
n100=${2:-10}
db=bench_wal
waldump=${SYNCULAR_BIN:-/usr/lib/postgresql/15/bin}/pg_waldump
[ -x "$waldump" ] || waldump=/usr/lib/postgresql/15/bin/pg_waldump
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
q() { psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -c "$1"; }
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f bench/setup.sql >/dev/null
q "ALTER SYSTEM SET autovacuum = off" >/dev/null; q "SELECT pg_reload_conf()" >/dev/null
q "SELECT count(bench.push('p1', 1)) FROM generate_series(1, 3000)" >/dev/null
walpath="$(q 'SHOW data_directory')/pg_wal"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; q "ALTER SYSTEM RESET autovacuum" >/dev/null 2>&1 || true; q "SELECT pg_reload_conf()" >/dev/null 2>&1 || true' EXIT
# relfilenode -> name of every relation of the database (catalog tables and their indexes)
q "SELECT relfilenode || ' ' || CASE WHEN n.nspname IN ('syncular', 'public') THEN c.relname ELSE n.nspname || '.' || c.relname END
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE relfilenode <> 0" > "$tmp/rels"

# measure <label> <ops per round> <first key> <last key>: the rounds' WAL
measure() {
  local label=$1 ops=$2 first=$3 last=$4 rounds=$(( $4 - $3 + 1 ))
  q "CHECKPOINT" >/dev/null
  local l0 l1
  l0=$(q "SELECT pg_current_wal_insert_lsn()")
  for k in $(seq "$first" "$last"); do
    echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = $k;"
  done | psql -X -q -d "$db" -v ON_ERROR_STOP=1 >/dev/null
  l1=$(q "SELECT pg_current_wal_insert_lsn()")
  q "SELECT pg_switch_wal()" >/dev/null   # the last segment complete for pg_waldump
  "$waldump" -p "$walpath" -s "$l0" -e "$l1" 2>/dev/null > "$tmp/dump" || true
  awk -v label="$label" -v ops="$ops" -v n="$rounds" -v relfile="$tmp/rels" -v bytype="${WAL_BY_TYPE:-}" '
    BEGIN { while ((getline line < relfile) > 0) { split(line, a, " "); name[a[1]] = a[2] } }
    /^rmgr:/ {
      recs++
      # total length of the record (rec/tot): the field after the slash
      if (match($0, /len \(rec\/tot\): *[0-9]+\/ *[0-9]+/)) { s = substr($0, RSTART, RLENGTH); sub(/.*\/ */, "", s); bytes += s }
      if ($0 ~ /FPW|FPI/) fpi++
      rel = "other (" $2 ")"
      if ($2 == "Transaction") rel = "transaction record"
      if (match($0, /rel [0-9]+\/[0-9]+\/[0-9]+/)) { r = substr($0, RSTART + 4, RLENGTH - 4); split(r, p, "/"); rel = (p[3] in name) ? name[p[3]] : "other relation" }
      if ($2 == "Standby" || $2 == "XLOG") rel = "other (" $2 ")"
      if (bytype != "" && match($0, /desc: [A-Z_+0-9]+/)) rel = rel " " substr($0, RSTART + 6, RLENGTH - 6)
      by[rel]++
    }
    END {
      printf "%s: %.2f records, %.0f bytes per round (FPI records %d in %d rounds); per change %.2f records, %.0f bytes\n",
        label, recs / n, bytes / n, fpi, n, recs / n / ops, bytes / n / ops
      for (r in by) printf "    %7.2f  %s\n", by[r] / n, r | "sort -k2"
      close("sort -k2")
    }' "$tmp/dump"
}

# row ids never written before (bench.rows draws from 20,000 that the log's rows already use)
fresh_ids() {
  q "UPDATE bench.req SET rows = (SELECT jsonb_agg(jsonb_set(r, '{id}', to_jsonb('n' || k || '_' || o)))
                                    FROM jsonb_array_elements(rows) WITH ORDINALITY x(r, o))" >/dev/null
}
# bench.req: run 0 = warm-up + new rows, run 1 = the same rows again (updates).  1-op rounds first.
q "SELECT bench.fill(1, 1, 1, $((2 * n1)), 2)" >/dev/null
fresh_ids
# rows of run 1 := rows of run 0's second half (written as new rows below), so run 1 updates them
q "UPDATE bench.req u SET rows = o.rows, req = bench.push_req(u.part, 'c0', o.rows)
     FROM bench.req o WHERE u.k >= 10000000 AND o.k = u.k - 10000000 + $n1 AND u.k - 10000000 <= $n1" >/dev/null
q "UPDATE bench.req SET part = 'p1', req = bench.push_req('p1', 'c0', rows)" >/dev/null
# warm-up rounds (plans, pages)
for k in $(seq 1 "$n1"); do echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = $k;"; done \
  | psql -X -q -d "$db" -v ON_ERROR_STOP=1 >/dev/null
q "VACUUM ANALYZE" >/dev/null
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure "1-op push, new row" 1 $((n1 + 1)) $((2 * n1))
measure "1-op push, update of a stored row" 1 10000001 $((10000000 + n1))

q "SELECT bench.fill(100, 1, 1, $((2 * n100)), 2)" >/dev/null
fresh_ids
q "UPDATE bench.req u SET rows = o.rows
     FROM bench.req o WHERE u.k >= 10000000 AND o.k = u.k - 10000000 + $n100 AND u.k - 10000000 <= $n100" >/dev/null
q "UPDATE bench.req SET part = 'p1', req = bench.push_req('p1', 'c0', rows)" >/dev/null
for k in $(seq 1 "$n100"); do echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = $k;"; done \
  | psql -X -q -d "$db" -v ON_ERROR_STOP=1 >/dev/null
measure "100-op push, new rows" 100 $((n100 + 1)) $((2 * n100))
measure "100-op push, updates of stored rows" 100 10000001 $((10000000 + n100))
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
dropdb "$db"
