#!/usr/bin/env bash
# Demo part 5: syncular-gateway in front of the database (runs inside pg_virtualenv).  Starts a
# gateway on 127.0.0.1, runs two clients (HTTP and WebSocket), stops it with SIGTERM (drain).
set -euo pipefail
demodir=${DEMO_DIR:-$(cd "$(dirname "$0")" && pwd)}
root=$(cd "$demodir/.." && pwd)
# the gateway of the staged installation (scripts/pgenv.sh), else this tree's build
bin=${SYNCULAR_BIN:+$SYNCULAR_BIN/syncular-gateway}
[ -x "$bin" ] || bin=$root/gateway/syncular-gateway
[ -x "$bin" ] || bin=$(command -v syncular-gateway || echo "$(pg_config --bindir)/syncular-gateway")
ir_file=$1
echo "════ part 5: syncular-gateway (HTTP + realtime WebSocket) ════"
createdb demo_gateway
psql -X -q -d demo_gateway -v ON_ERROR_STOP=1 -v ir="$(cat "$ir_file")" -f "$demodir/gateway.sql"
port=$(bash "$root/scripts/free-port.sh")
secret=demo-secret-$RANDOM$RANDOM
conninfo="dbname=demo_gateway${PGHOST:+ host=$PGHOST}${PGPORT:+ port=$PGPORT}${PGUSER:+ user=$PGUSER}"
log=$(mktemp)
echo "\$ syncular-gateway --db '$conninfo' --listen 127.0.0.1:$port --jwt-secret ... --partition demo"
"$bin" --db "$conninfo" --listen "127.0.0.1:$port" --jwt-secret "$secret" --partition demo 2>"$log" &
gw=$!
trap 'kill $gw 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  /usr/bin/python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/sync-api/readyz')" \
    >/dev/null 2>&1 && break
  sleep 0.1
done
/usr/bin/python3 -c "import urllib.request; print('  GET /sync-api/readyz ->', urllib.request.urlopen('http://127.0.0.1:$port/sync-api/readyz').read().decode())"
/usr/bin/python3 "$demodir/gateway_clients.py" "$port" "$secret" demo_gateway
kill -TERM $gw
wait $gw
echo "  gateway log:"
sed 's/^/    /' "$log"
