#!/usr/bin/env bash
# The statements a 1-op push round runs: pg_stat_statements (track = all, so the statements of
# the engine's SPI calls, triggers and resolver count too) over `n` rounds of new rows and `n`
# rounds writing the same rows again, one client, one partition with a 2,000-commit log.
# Prints calls per round by statement (the timed SELECT itself left out) and their sum.  Runs
# against the cluster of the PG* environment with pg_stat_statements preloaded and syncular
# installed (scripts/pgenv.sh -c shared_preload_libraries=pg_stat_statements -c
# pg_stat_statements.track=all), in a database `bench` it recreates.  Usage: [n]
set -euo pipefail
n=${1:-200}
. "$(dirname "$0")/bench-db.sh"
q "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
q "SELECT count(bench.push('p1', 1)) FROM generate_series(1, 2000)" >/dev/null
# rounds 1..n warm up; n+1..2n new rows; 2n+1..3n the rows of n+1..2n again
q "SELECT bench.fill(1, 1, 1, $((3 * n)), 1)" >/dev/null
q "UPDATE bench.req u SET rows = o.rows, req = bench.push_req(u.part, 'c0', o.rows)
     FROM bench.req o WHERE u.k > $((2 * n)) AND o.k = u.k - $n" >/dev/null
q "ANALYZE"
run() { for i in $(seq "$1" "$2"); do echo "SELECT length(syncular.handle(q.req, q.part, 'bench')) FROM bench.req q WHERE q.k = $i;"; done |
        psql -X -q -d "$db" >/dev/null; }
run 1 "$n"
for phase in "new rows:$((n + 1)):$((2 * n))" "updates:$((2 * n + 1)):$((3 * n))"; do
  IFS=: read -r name a b <<< "$phase"
  q "SELECT pg_stat_statements_reset()" >/dev/null
  run "$a" "$b"
  echo "$name: statements per round $(q "SELECT round(sum(calls)::numeric / $n, 2) FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db') AND query NOT LIKE '%pg_stat_statements%'
      AND query NOT LIKE 'SELECT length(syncular.handle%'")"
  q "SELECT format('  %6s  %s', round(calls::numeric / $n, 2), left(regexp_replace(query, '\s+', ' ', 'g'), 110))
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')
        AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE 'SELECT length(syncular.handle%'
      ORDER BY calls DESC, query"
done
