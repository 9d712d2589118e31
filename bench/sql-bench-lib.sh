# Sourced by the SQL-write benches (bench/sql_writes.sh, bench/copy-breakdown.sh) after
# `db=<name>`: recreates database $db on the cluster of the PG* environment, makes a scratch
# folder $tmp (readable by the server, for COPY FROM a file; removed on exit), and defines
#   q <sql>         one statement, unaligned tuples only;
#   ms <sql...>     the statements in one session, printing the server time in ms of the LAST
#                   one (psql \timing);
#   median          the median of the numbers on stdin (separated by spaces or newlines).
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
q() { psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -c "$1"; }
ms() {
  { echo '\timing on'; printf '%s\n' "$@"; } | psql -X -q -d "$db" -v ON_ERROR_STOP=1 2>&1 \
    | awk '/^Time:/ {t=$2} END {print t}'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
