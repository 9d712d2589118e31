# Sourced by bench/push-waits.sh and bench/push-statements.sh: (re)creates the database `bench`
# in the cluster of the PG* environment with bench/setup.sql; q SQL runs one statement there
# (unaligned, tuples only, stops on an error).
db=bench
q() { psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -c "$1"; }
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$(dirname "${BASH_SOURCE[0]}")/setup.sql" >/dev/null
