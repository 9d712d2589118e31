#!/usr/bin/env bash
# The router hop's cost: the same pgbench scripts against a shard database directly and through
# a router database (extension syncular_router, PL/Proxy over 127.0.0.1) in one run, on a
# throwaway cluster of its own, one pgbench client (so 1/tps is a round's latency), each side run
# twice (router, direct, direct, router) for seconds-per-case each.  Prints tps,
# the ratio router / direct and the hop's added latency per round; never fails on a time.
# Usage: bash bench/router.sh [seconds-per-case]   (PG_CONFIG selects the PostgreSQL; syncular,
# syncular_router and plproxy must be installed in it: `make install`, scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
. scripts/cluster-work.sh bench-router
port=$(bash scripts/free-port.sh)
as_pg "$BIN/initdb" -A trust -U postgres -D "$work/data" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
trap 'as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
sql() { local db=$1; shift; "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d "$db" "$@"; }

sql postgres -c "CREATE DATABASE shard0" -c "CREATE DATABASE router"
sql shard0 <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION syncular;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [
  {"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false},
  {"name": "title", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"]}]}', '[]', 'public');
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
-- 100 rows in each of 16 partitions, then statistics (a warm, analyzed database)
SELECT syncular.push('p' || p, 'u1', 'setup', jsonb_build_array(jsonb_build_object('clientCommitId', 'setup-' || p,
  'operations', (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'op', 'upsert',
                   'row', jsonb_build_object('id', 'r' || i, 'list_id', 'l1', 'title', 'row ' || i)))
                   FROM generate_series(1, 100) i))))
  FROM generate_series(1, 16) p;
ANALYZE;
SQL
sql router -v port="$port" <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION syncular_router CASCADE;
SELECT format('CREATE SERVER syncular FOREIGN DATA WRAPPER plproxy OPTIONS (p0 %L)',
              'host=127.0.0.1 port=' || :'port' || ' dbname=shard0') \gexec
CREATE USER MAPPING FOR PUBLIC SERVER syncular;
SQL
# request bytes (hex) built on the shard: a bootstrap pull of partition p1 (100 rows), and the
# smallest round (epoch acquisition: a bare pull header)
boot=$(sql shard0 <<'SQL'
SELECT encode(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
  'frames', jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'bench-reader', 'schemaVersion', 1,
                       'logEpoch', (SELECT log_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1')),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0, 'maxSnapshotPages', 0, 'accept', 1),
    jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'todos', 'scopes', '{"list_id": ["l1"]}'::jsonb,
                       'cursor', -1)))), 'hex');
SQL
)
bare=$(sql shard0 <<'SQL'
SELECT encode(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
  'frames', jsonb_build_array(jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'bench-bare', 'schemaVersion', 1),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0, 'maxSnapshotPages', 0, 'accept', 1)))), 'hex');
SQL
)

tps() {  # tps <db> <script text>
  printf '%s\n' "$2" > "$work/s.sql"
  "$BIN/pgbench" -n -T "$secs" -c 1 -j 1 -h "$work" -p "$port" -U postgres -f "$work/s.sql" "$1" 2>/dev/null \
    | awk '/^tps/ {print $3; exit}' || true
}
row() {
  awk -v n="$1" -v r="$2" -v d="$3" 'BEGIN { printf "%-48s %9.1f %9.1f %7.3f %9.3f\n", n, r, d,
    (d > 0 ? r / d : 0), (r > 0 && d > 0 ? 1000 / r - 1000 / d : 0) }'
}
case_() { # case_ <name> <script>: the same script through the router and directly, in the
  # order router, direct, direct, router (a drift during the case, such as autovacuum, weighs on
  # both sides alike); each side's tps is the mean of its two runs
  local r1 d1 d2 r2
  r1=$(tps router "$2"); d1=$(tps shard0 "$2"); d2=$(tps shard0 "$2"); r2=$(tps router "$2")
  row "$1" "$(awk -v a="$r1" -v b="$r2" 'BEGIN { print (a + b) / 2 }')" \
           "$(awk -v a="$d1" -v b="$d2" 'BEGIN { print (a + b) / 2 }')"
}
printf '%-48s %9s %9s %7s %9s\n' case router direct ratio "+ms/round"
case_ "push 1-op commit (syncular.push), 16 partitions" "\\set p random(1, 16)
\\set r random(1, 100)
SELECT syncular.push('p' || :p, 'u1', 'bench-' || :client_id, jsonb_build_array(jsonb_build_object(
  'clientCommitId', gen_random_uuid()::text, 'operations', jsonb_build_array(jsonb_build_object(
    'table', 'todos', 'op', 'upsert', 'row', jsonb_build_object('id', 'r' || :r, 'list_id', 'l1', 'title', 'bench'))))));"
case_ "pull bootstrap 100 rows (handle bytes)" "SELECT length(syncular.handle(decode('$boot', 'hex'), 'p1', 'u1'));"
case_ "pull 100 rows (syncular.pull JSON)" "\\set p random(1, 16)
SELECT syncular.pull('p' || :p, 'u1', 'bench-json', '[{\"id\": \"s1\", \"table\": \"todos\", \"scopes\": {\"list_id\": [\"l1\"]}}]');"
case_ "smallest round (epoch acquisition)" "\\set p random(1, 16)
SELECT length(syncular.handle(decode('$bare', 'hex'), 'p' || :p, 'u1'));"

# per-commit figures for capacity arithmetic (docs/scaling.md): WAL bytes per 1-op commit
# (one commit per transaction, direct) and a push round's latency with one client, which in
# the function form is how long the partition row lock is held
l0=$(sql shard0 -c "SELECT pg_current_wal_lsn()")
printf '%s\n' "\\set r random(1, 100)
SELECT syncular.push('wal', 'u1', 'wal', jsonb_build_array(jsonb_build_object(
  'clientCommitId', gen_random_uuid()::text, 'operations', jsonb_build_array(jsonb_build_object(
    'table', 'todos', 'op', 'upsert', 'row', jsonb_build_object('id', 'r' || :r, 'list_id', 'l1', 'title', 'bench'))))));" > "$work/w.sql"
lat=$("$BIN/pgbench" -n -t 1000 -c 1 -j 1 -h "$work" -p "$port" -U postgres -f "$work/w.sql" shard0 2>/dev/null \
  | awk '/^latency average/ {print $4; exit}')
wal=$(sql shard0 -v l0="$l0" <<< "SELECT round((pg_current_wal_lsn() - :'l0'::pg_lsn) / 1000)")
printf '%-48s %9s\n' "WAL bytes per 1-op commit (direct)" "$wal" "push round latency, 1 client, ms (direct)" "$lat"
