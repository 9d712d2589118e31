#!/usr/bin/env bash
# Where the time of a COPY into a synced table goes (docs/writing-with-sql.md "Cost"): the same
# 100,000 rows (bench/sql_writes.sh's input) copied, in one run, into
#   plain      the plain table with the app's columns (bench/sql_writes_schema.sql's items_plain);
#   plain+trg  the same with a no-op PL/pgSQL BEFORE ROW INSERT trigger: COPY's row-at-a-time
#              insert path (COPY batches inserts only into a table without BEFORE/INSTEAD OF
#              row triggers), plus the trigger calls;
#   wide       a table with the synced table's columns and key (the payload, scopes and versions
#              of rows the capture wrote before), no trigger: the width alone, batched;
#   rows       the synced table with the capture's row trigger and without its statement
#              trigger (disabled for the measurement under syncular.allow_synced_table_ddl): the
#              rows as the capture stores them, nothing logged;
#   rows+order `rows` with one more index on the synced table, in the bootstrap's order
#              (_sync_partition, list_id COLLATE "C", _sync_row_id; SPEC §3.7: a scope value's
#              rows in row-id order), created before and dropped after: the least any layout
#              pays that keeps that order per row, whatever the commit log costs on top;
#   synced     the synced table as it ships: the rows and their commit (changes, scope index,
#              row-scope entries);
# and, after `rows`, the row-scope entries of those rows written by one INSERT ... SELECT in the
# log statement's order (what a log that kept only the row-scope index would still pay).
# Prints the median ms of each and its ratio to plain (plain time / its time).  Runs against the
# cluster of the PG* environment (syncular installed) in a database `bench_copy` it recreates.
# Never fails on a time.   Usage: bash bench/copy-breakdown.sh [runs] [rows]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
rows=${2:-100000}
db=bench_copy
. bench/sql-bench-lib.sh

psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f bench/sql_writes_schema.sql >/dev/null
psql -X -q -d "$db" -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE TABLE public.plain_trg (LIKE public.items_plain INCLUDING ALL);
CREATE FUNCTION public.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER noop BEFORE INSERT ON public.plain_trg FOR EACH ROW EXECUTE FUNCTION public.noop();
CREATE TABLE public.wide (LIKE public.items INCLUDING ALL);
SQL
q "COPY (SELECT 'r' || i, 'l' || (i % 100), 'title of row ' || i, i, i % 2 = 0
      FROM generate_series(1, $rows) i) TO STDOUT" > "$tmp/rows.tsv"
# the wide input: the rows as the capture stores them (written once, untimed)
q "SET syncular.partition = 'src'; COPY public.items (id, list_id, title, qty, done) FROM STDIN" < "$tmp/rows.tsv"
q "COPY (SELECT * FROM public.items WHERE _sync_partition = 'src') TO STDOUT" > "$tmp/wide.tsv"
chmod 644 "$tmp"/*.tsv
# rows_ms <partition>: ms of the COPY into the synced table with only the capture's row trigger
# (its statement trigger disabled for the COPY, enabled again after)
rows_ms() {
  ms "SET syncular.allow_synced_table_ddl = on;" \
    "ALTER TABLE public.items DISABLE TRIGGER syncular_capture_insert;" "SET syncular.partition = '$1';" \
    "COPY public.items (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';"
  q "SET syncular.allow_synced_table_ddl = on; ALTER TABLE public.items ENABLE TRIGGER syncular_capture_insert" >/dev/null
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
plain=""; trg=""; wide=""; rowsonly=""; roworder=""; scopes=""; synced=""
for r in $(seq 1 "$runs"); do
  plain="$plain $(ms "ALTER TABLE public.items_plain ALTER COLUMN partition SET DEFAULT 'p$r';" \
    "COPY public.items_plain (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';")"
  trg="$trg $(ms "ALTER TABLE public.plain_trg ALTER COLUMN partition SET DEFAULT 'p$r';" \
    "COPY public.plain_trg (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';")"
  q "TRUNCATE public.wide" >/dev/null
  wide="$wide $(ms "COPY public.wide FROM '$tmp/wide.tsv';")"
  rowsonly="$rowsonly $(rows_ms "rows$r")"
  q "SET syncular.allow_synced_table_ddl = on;
     CREATE INDEX items_order ON public.items (_sync_partition, list_id COLLATE \"C\", _sync_row_id)" >/dev/null
  roworder="$roworder $(rows_ms "order$r")"
  q "SET syncular.allow_synced_table_ddl = on; DROP INDEX public.items_order" >/dev/null
  scopes="$scopes $(ms "INSERT INTO syncular.sync_row_scopes (partition, tbl, var, value, row_id)
    SELECT _sync_partition, 'items', 'list_id', _sync_scopes ->> 'list_id', _sync_row_id FROM public.items
     WHERE _sync_partition = 'rows$r' ORDER BY 4, 5;")"
  synced="$synced $(ms "SET syncular.partition = 'synced$r';" \
    "COPY public.items (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';")"
done
p=$(echo "$plain" | median)
echo "| $rows rows into | ms (median of $runs) | plain / it |"
echo "|---|---|---|"
for c in "plain:$plain" "plain+trg:$trg" "wide:$wide" "rows:$rowsonly" "rows+order:$roworder" "row-scope entries alone:$scopes" "synced:$synced"; do
  name=${c%%:*}; m=$(echo "${c#*:}" | median)
  awk -v n="$name" -v m="$m" -v p="$p" 'BEGIN { printf "| %s | %.1f | %.3f |\n", n, m, (m > 0 ? p / m : 0) }'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
