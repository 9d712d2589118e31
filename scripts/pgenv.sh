#!/usr/bin/env bash
# Runs a command against a throwaway cluster served from a staged installation (the
# pg_virtualenv of this project):   bash scripts/pgenv.sh [-c name=value]... -- COMMAND [ARG]...
# The installation is $SYNCULAR_STAGE when set (made by scripts/stage.sh), otherwise one is
# staged from this tree into the run's folder.  The cluster runs as user postgres when started
# as root, listens on 127.0.0.1 and a unix socket in a private folder (fsync off), requires a
# password over TCP (scram-sha-256, as a real deployment) and is stopped by its postmaster PID
# and removed when COMMAND ends.  COMMAND sees PGHOST=127.0.0.1, PGPORT, PGUSER=postgres,
# PGPASSWORD, PGDATABASE=postgres, SYNCULAR_BIN (the staged bindir, first on PATH) and
# SYNCULAR_STAGE; its exit status is the script's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    -c) opts+=("-c" "$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "usage: scripts/pgenv.sh [-c name=value]... -- COMMAND [ARG]..." >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: scripts/pgenv.sh [-c name=value]... -- COMMAND [ARG]..." >&2; exit 2; }
. "$here/cluster-work.sh" pgenv
port=$(bash "$here/free-port.sh")
pgpid=""
cleanup() {
  if [ -n "$pgpid" ]; then
    kill -INT "$pgpid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pgpid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pgpid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$password" > "$work/pwfile"
chown postgres "$work/pwfile" 2>/dev/null || true
as_pg "$BIN/initdb" --auth-local=scram-sha-256 --auth-host=scram-sha-256 -U postgres \
  --pwfile="$work/pwfile" -D "$work/data" >/dev/null
as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 120 \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off ${opts[*]}" start >/dev/null ||
  { cat "$work/server.log" >&2; exit 1; }
pgpid=$(head -1 "$work/data/postmaster.pid")
status=0
env PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres PGPASSWORD="$password" PGDATABASE=postgres \
  SYNCULAR_BIN="$BIN" SYNCULAR_STAGE="$SYNCULAR_STAGE" PATH="$BIN:$PATH" "$@" || status=$?
exit $status
