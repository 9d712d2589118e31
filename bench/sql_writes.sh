#!/usr/bin/env bash
# Ordinary SQL writes to a synced table (docs/writing-with-sql.md) against the same statement on
# a plain table with the same columns, in the same run: COPY of 100,000 rows, a 100,000-row
# UPDATE, single-row UPDATEs each in its own transaction (pgbench), the pull of the commit the
# COPY made against one ordered read of its changes (binary, and JSON through syncular.pull), and
# one commit of up to 10,000 rows through the JSON producer syncular.push against one INSERT of
# them.  Runs against the cluster of the PG*
# environment (syncular installed) in a database `bench_sql` it recreates; each case runs `runs`
# times (fresh partitions) and the median is printed.  Never fails on a time.
# Usage: bash bench/sql_writes.sh [runs] [rows]
set -euo pipefail
runs=${1:-3}
rows=${2:-100000}
db=bench_sql
. "$(dirname "$0")/sql-bench-lib.sh"
# row <case> <syncular> <plain> <unit>: ratio = plain time / syncular time (or tps ratio)
row() { awk -v n="$1" -v s="$2" -v b="$3" -v u="$4" 'BEGIN {
  r = (u == "tps") ? (b > 0 ? s / b : 0) : (s > 0 ? b / s : 0);
  printf "| %s | %.1f | %.1f | %s | %.3f |\n", n, s, b, u, r }'; }

psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$(dirname "$0")/sql_writes_schema.sql" >/dev/null
# the COPY input: id, list_id (100 lists), title, qty, done
psql -X -Atq -d "$db" -c "COPY (SELECT 'r' || i, 'l' || (i % 100), 'title of row ' || i, i, i % 2 = 0
  FROM generate_series(1, $rows) i) TO STDOUT" > "$tmp/rows.tsv"
chmod 644 "$tmp/rows.tsv"

# warm-up (library load, compiled schema, kept plans), untimed
q "SET syncular.partition = 'warm'; INSERT INTO public.items (id, list_id) VALUES ('w', 'l0');
   UPDATE public.items SET qty = 1 WHERE _sync_partition = 'warm';" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | syncular | plain SQL | unit | ratio (plain time / syncular time, or tps ratio) |"
echo "|---|---|---|---|---|"
cs=""; cb=""; us=""; ub=""; ps=""; pb=""; js=""; jp=""; jb=""
jrows=$(( rows < 10000 ? rows : 10000 ))
for r in $(seq 1 "$runs"); do
  p="copy$r"
  cs="$cs $(ms "SET syncular.partition = '$p';" "COPY public.items (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';")"
  cb="$cb $(ms "ALTER TABLE public.items_plain ALTER COLUMN partition SET DEFAULT '$p';" \
              "COPY public.items_plain (id, list_id, title, qty, done) FROM '$tmp/rows.tsv';")"
  seq=$(q "SELECT max_commit_seq FROM syncular.partitions WHERE partition = '$p'")
  # the commit as a client pulls it: SSP2 request bytes built before the clock, syncular.handle
  ps="$ps $(ms "SELECT syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
      'msgKind', 'request', 'frames', jsonb_build_array(
        jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'puller', 'schemaVersion', 1,
          'logEpoch', syncular._producer_epoch('$p', 'bench', 'puller')),
        jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 1, 'limitSnapshotRows', 0,
          'maxSnapshotPages', 0, 'accept', 1),
        jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's', 'table', 'items', 'cursor', $((seq - 1)),
          'scopes', jsonb_build_object('list_id', (SELECT jsonb_agg('l' || i) FROM generate_series(0, 99) i))))))
      AS req \\gset" "SELECT length(syncular.handle(:'req'::bytea, '$p', 'bench'));")"
  js="$js $(ms "SELECT length(syncular.pull('$p', 'bench', 'json-puller', jsonb_build_array(jsonb_build_object(
      'id', 's', 'table', 'items', 'cursor', $((seq - 1)), 'scopes', jsonb_build_object('list_id',
      (SELECT jsonb_agg('l' || i) FROM generate_series(0, 99) i)))))::text);")"
  pb="$pb $(ms "SELECT count(*), sum(length(payload)) FROM (SELECT payload FROM syncular.changes
      WHERE partition = '$p' AND commit_seq = $seq ORDER BY idx) x;")"
  # the JSON producer: one commit of the same rows' first $jrows through syncular.push, against
  # one INSERT of them into the plain table
  jp="$jp $(ms "SET syncular.max_operations_per_request = $jrows;" "SELECT length(syncular.push('json$r', 'bench',
      'json-pusher', jsonb_build_array(jsonb_build_object('clientCommitId', 'j', 'operations', (SELECT
      jsonb_agg(jsonb_build_object('table', 'items', 'row', jsonb_build_object('id', 'r' || i, 'list_id',
      'l' || (i % 100), 'title', 'title of row ' || i, 'qty', i, 'done', i % 2 = 0))) FROM generate_series(1, $jrows) i))))::text);")"
  jb="$jb $(ms "INSERT INTO public.items_plain (partition, id, list_id, title, qty, done) SELECT 'json$r', 'r' || i,
      'l' || (i % 100), 'title of row ' || i, i, i % 2 = 0 FROM generate_series(1, $jrows) i;")"
  us="$us $(ms "UPDATE public.items SET qty = qty + 1 WHERE _sync_partition = '$p';")"
  ub="$ub $(ms "UPDATE public.items_plain SET qty = qty + 1 WHERE partition = '$p';")"
done
row "COPY FROM of $rows rows, one statement" "$(echo "$cs" | median)" "$(echo "$cb" | median)" ms
row "UPDATE of $rows rows, one statement" "$(echo "$us" | median)" "$(echo "$ub" | median)" ms
row "pull of the COPY's commit ($rows changes, syncular.handle) / ordered read of its changes" \
  "$(echo "$ps" | median)" "$(echo "$pb" | median)" ms
row "the same pull through syncular.pull (JSON rows) / ordered read" \
  "$(echo "$js" | median)" "$(echo "$pb" | median)" ms
row "syncular.push of one commit of $jrows operations (JSON rows) / INSERT of the rows" \
  "$(echo "$jp" | median)" "$(echo "$jb" | median)" ms

# single-row UPDATEs, each its own transaction (1 client, pgbench -M prepared)
printf '%s\n' "\\set i random(1, $rows)" \
  "UPDATE public.items SET qty = qty + 1 WHERE _sync_partition = 'copy1' AND _sync_row_id = 'r' || :i;" > "$tmp/s.sql"
printf '%s\n' "\\set i random(1, $rows)" \
  "UPDATE public.items_plain SET qty = qty + 1 WHERE partition = 'copy1' AND id = 'r' || :i;" > "$tmp/b.sql"
ss=""; sb=""
for r in $(seq 1 "$runs"); do
  ss="$ss $(pgbench -n -M prepared -c 1 -t 2000 -f "$tmp/s.sql" "$db" 2>/dev/null | awk '/^tps/ {print $3; exit}')"
  sb="$sb $(pgbench -n -M prepared -c 1 -t 2000 -f "$tmp/b.sql" "$db" 2>/dev/null | awk '/^tps/ {print $3; exit}')"
done
row "single-row UPDATE, own transaction, 1 client" "$(echo "$ss" | median)" "$(echo "$sb" | median)" tps
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
