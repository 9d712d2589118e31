# Sourced (from the repository root) by the scripts that start throwaway clusters of their own
# (scripts/pgenv.sh, scripts/test-packages.sh, bench/router.sh, bench/stats*.sh; the TAP tests of test/t use
# PostgreSQL::Test::Cluster instead):
#   . scripts/cluster-work.sh <name>
# Sets work (a new folder /tmp/syncular-<name>.XXXXXX the server user can use), BIN (the bindir
# of the staged installation $SYNCULAR_STAGE, made by scripts/stage.sh; when unset, this tree is
# staged into $work/stage: servers never load what an earlier `make install` left in the system
# directories; SYNCULAR_STAGE=/ is the system installation itself, which only the package test
# scripts/test-packages.sh uses, with the packages installed) and as_pg CMD... (runs CMD as
# postgres when started as root: PostgreSQL refuses to run as root).  The caller stops its servers and removes $work in its own EXIT trap;
# start_cluster (below) makes and starts the one-cluster case.
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
work=$(mktemp -d "/tmp/syncular-$1.XXXXXX")
chmod 755 "$work"
if [ -z "${SYNCULAR_STAGE:-}" ]; then
  SYNCULAR_STAGE=$work/stage
  bash "$(dirname "${BASH_SOURCE[0]}")/stage.sh" "$SYNCULAR_STAGE"
fi
export SYNCULAR_STAGE
BIN=${SYNCULAR_STAGE%/}$("$PG_CONFIG" --bindir)
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$work"
  # from / : the caller's folder (a mode-700 clone) is not the server user's to enter
  as_pg() { (cd / && su postgres -s /bin/bash -c "$(printf '%q ' "$@")"); }
else
  as_pg() { "$@"; }
fi
# start_cluster <port> [-c name=value ...]: initdb $work/data (unless done) and start it on a unix
# socket in $work and 127.0.0.1:<port> (fsync off: throwaway), server log $work/server.log; it
# may be called again with another port when the first was taken in the meantime.
start_cluster() {
  local port=$1
  shift
  [ -d "$work/data" ] || as_pg "$BIN/initdb" -A trust -U postgres -D "$work/data" >/dev/null
  as_pg "$BIN/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 60 \
    -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off $*" start >/dev/null ||
    { echo "--- $work/server.log" >&2; cat "$work/server.log" >&2; return 1; }
}
