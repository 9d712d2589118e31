#!/usr/bin/env bash
# Runs inside pg_virtualenv.  Each case is a pgbench script; tps of syncular vs the plain baseline.
set -euo pipefail
secs=$1
here=$(cd "$(dirname "$0")" && pwd)
createdb bench
psql -X -q -d bench -v ON_ERROR_STOP=1 -f "$here/setup.sql" >/dev/null
tmp=$(mktemp -d)
tps() {  # tps <clients> <script text>
  printf '%s\n' "$2" > "$tmp/s.sql"
  pgbench -n -T "$secs" -c "$1" -j "$1" -f "$tmp/s.sql" bench 2>/dev/null | awk '/^tps/ {print $3; exit}' || true
}
row() { awk -v n="$1" -v s="$2" -v b="$3" 'BEGIN { printf "%-44s %10.2f %10.2f %8.3f\n", n, s, b, (b > 0 ? s / b : 0) }'; }
printf '%-44s %10s %10s %8s\n' case syncular baseline ratio
for ops in 1 10; do
  for parts in 1 16; do
    s=$(tps 2 "\\set p random(1, $parts)
SELECT bench.push('p' || :p, $ops);")
    b=$(tps 2 "\\set p random(1, $parts)
SELECT bench.plain('p' || :p, $ops);")
    row "push ${ops}-op commits, ${parts} partition(s), tps" "$s" "$b"
  done
done
# incremental pull: a client 100 commits behind, vs reading the same changes with plain SQL
psql -X -q -d bench -c "SELECT bench.push('pull', 1) FROM generate_series(1, 2000)" >/dev/null
s=$(tps 2 "\\set c random(0, 1900)
SELECT bench.pull('pull', :c);")
b=$(tps 2 "\\set c random(0, 1900)
SELECT count(*) FROM (SELECT payload FROM syncular.sync_changes WHERE partition = 'pull' AND commit_seq > :c ORDER BY commit_seq LIMIT 100) x;")
row "incremental pull (100 changes), tps" "$s" "$b"
# bootstrap: 100k rows through handle() pages vs a plain scan of the same rows
# 100,000 distinct rows, then the bootstrap at once (statistics still stale, as right after a
# tenant's import)
psql -X -q -d bench -c "SELECT bench.push('boot', 500, bench.seq_rows(g * 500, 500)) FROM generate_series(0, 199) g" >/dev/null
n=$(psql -X -Atq -d bench -c "SELECT count(*) FROM items WHERE _sync_partition = 'boot'")
t0=$(date +%s.%N)
# one round: up to 50 pages of 50,000 rows, so the whole table comes back as inline SSG2 pages
psql -X -Atq -d bench <<'SQL' >/dev/null
SELECT length(syncular.handle(syncular.debug_encode(jsonb_build_object('magic','SSP2','wireVersion',3,'msgKind','request','frames', jsonb_build_array(
  jsonb_build_object('type','REQ_HEADER','clientId','boot-client','schemaVersion',1,'logEpoch',bench.epoch('boot')),
  jsonb_build_object('type','PULL_HEADER','limitCommits',1000,'limitSnapshotRows',50000,'maxSnapshotPages',50,'accept',1),
  jsonb_build_object('type','SUBSCRIPTION','id','s','table','items','scopes','{"list_id":["l1"]}'::jsonb,'cursor',-1)))),
  'boot', 'bench'));
SQL
t1=$(date +%s.%N)
psql -X -Atq -d bench -c "COPY (SELECT _sync_server_version, _sync_payload FROM items WHERE _sync_partition = 'boot' ORDER BY _sync_row_id COLLATE \"C\") TO STDOUT" >/dev/null
t2=$(date +%s.%N)
s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print 1 / (b - a) }'); b=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print 1 / (b - a) }')
row "bootstrap of $n rows (runs per second)" "$s" "$b"
# the gateway: POST /sync push rounds through syncular-gateway vs handle_http called directly
if [ -x "$here/../gateway/syncular-gateway" ]; then
  /usr/bin/python3 "$here/gateway.py" "$secs"
  /usr/bin/python3 "$here/gateway_realtime.py" 1000
fi
rm -rf "$tmp"
