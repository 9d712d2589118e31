# Sourced by bench/push-instructions.sh and bench/sql-write-instructions.sh (from the top of the
# tree, with its name as $1): a throwaway cluster from the staged build (scripts/cluster-work.sh),
# stopped and removed on exit, autovacuum off, with an empty database `bench`; sql ARGS... runs
# psql there as postgres (unaligned, tuples only, stops on an error).  Without valgrind the
# sourcing script ends here with a message and status 0 (a bench never fails for a tool).
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 0; }
. scripts/cluster-work.sh "$1"
trap 'as_pg "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
port=$(bash scripts/free-port.sh)
start_cluster "$port" -c autovacuum=off
sql() { "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres "$@"; }
sql -d postgres -c "CREATE DATABASE bench"
