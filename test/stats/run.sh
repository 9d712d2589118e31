#!/usr/bin/env bash
# Counter test (docs/operations.md): the activity counters exist only when the library is in
# shared_preload_libraries, which the main test cluster deliberately does not set (the suite
# checks the "not preloaded" answer there).  This script starts a small cluster of its own with
# shared_preload_libraries = 'syncular' (unix socket in a private directory, TCP on 127.0.0.1
# only, a free port), runs the pg_regress tests of test/stats against it, and stops it by its
# data directory in a trap.  Needs syncular installed in the PostgreSQL of $PG_CONFIG.  As root,
# the cluster runs as user postgres.  Bounded: the caller (scripts/test.sh) runs it under timeout.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BIN=$("$PG_CONFIG" --bindir)
REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

work=$(mktemp -d /tmp/syncular-stats.XXXXXX)
chmod 755 "$work"
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$work"
  as_pg() { su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; }
else
  as_pg() { "$@"; }
fi
out=$(mktemp -d /tmp/syncular-stats-out.XXXXXX)
cleanup() {
  as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work" "$out"
}
trap cleanup EXIT

port=$(bash scripts/free-port.sh)
as_pg "$BIN/initdb" -A trust -U postgres -D "$work/data" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 60 \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off -c shared_preload_libraries=syncular" \
  start >/dev/null

tests=$(cd test/stats/sql && ls *.sql | sed 's/\.sql$//' | sort)
status=0
"$REGRESS" --bindir="$BIN" --inputdir=test/stats --outputdir="$out" \
  --host="$work" --port="$port" --user=postgres $tests || status=1
if [ $status -ne 0 ]; then
  mkdir -p test/stats/results && cp "$out"/results/*.out test/stats/results/ 2>/dev/null || true
  cat "$out/regression.diffs" 2>/dev/null || true
  echo "--- server log" >&2
  tail -30 "$work/server.log" >&2
fi
exit $status
