# Sourced (from the repository root) by the scripts that start throwaway clusters of their own
# (test/scale, test/stats, bench/router.sh, bench/stats*.sh):  . scripts/cluster-work.sh <name>
# Sets BIN (the bindir of $PG_CONFIG), work (a new folder /tmp/syncular-<name>.XXXXXX the server
# user can use) and as_pg CMD... (runs CMD as postgres when started as root: PostgreSQL refuses
# to run as root).  The caller stops its servers and removes $work in its own EXIT trap.
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BIN=$("$PG_CONFIG" --bindir)
work=$(mktemp -d "/tmp/syncular-$1.XXXXXX")
chmod 755 "$work"
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$work"
  as_pg() { su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; }
else
  as_pg() { "$@"; }
fi
