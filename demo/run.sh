#!/usr/bin/env bash
# Runs inside pg_virtualenv (PGHOST/PGPORT/PGUSER point at the throwaway cluster).
set -euo pipefail
demodir=${DEMO_DIR:-$(cd "$(dirname "$0")" && pwd)}
ir_file="${SYNCULAR_IR:-/nonexistent}/quickstart-todos.ir.json"
if [ ! -f "$ir_file" ]; then
  echo "(../shared/ir absent: using the project's own todos IR, demo/todos.ir.json)"
  ir_file="$demodir/todos.ir.json"
fi
echo "════ syncular demo: PostgreSQL $(psql -Atc 'show server_version' postgres) serving SSP2 rounds ════"
createdb demo_todos
psql -X -q -d demo_todos -v ON_ERROR_STOP=1 -v demodir="$demodir" -v ir="$(cat "$ir_file")" -f "$demodir/todos.sql"
if [ -f "$demodir/vectors.sql" ]; then
  createdb demo_notes
  psql -X -q -d demo_notes -v ON_ERROR_STOP=1 -v demodir="$demodir" -v vecdir="${SYNCULAR_VECTORS:-}" -f "$demodir/vectors.sql"
fi
# further parts, each in its own database: write rules (validators, constraints) and an
# upgrade with a backfill (RFC 0007), bootstrap segments (SPEC §5)
for part in rules upgrade segments; do
  if [ -f "$demodir/$part.sql" ]; then
    createdb "demo_$part"
    psql -X -q -d "demo_$part" -v ON_ERROR_STOP=1 -v demodir="$demodir" -v ir="$(cat "$ir_file")" -f "$demodir/$part.sql"
  fi
done
# what the server counted (syncular.stats; the cluster preloads the library, scripts/demo.sh)
psql -X -q -d demo_todos -v ON_ERROR_STOP=1 -f "$demodir/stats.sql"
# part 5: the gateway in front of the database, two clients over HTTP and WebSocket
if [ -f "$demodir/gateway.sh" ]; then
  bash "$demodir/gateway.sh" "$ir_file"
fi
echo "════ demo finished ════"
