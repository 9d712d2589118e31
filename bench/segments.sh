#!/usr/bin/env bash
# Bootstrap of 100,000 rows through syncular.handle() on each lane (SPEC §5), next to a plain COPY
# of the same rows in the same run: rows lane inline (accept bit 0), rows lane external (bit 1:
# pages stored and referenced; first client builds, second client reuses), the image lane (bit 2:
# one SQLite image; build, reuse), and the direct download of what was stored.  Prints rows/s;
# never fails on a time.
#
# Usage (after `make install`, with the libpq environment of a scratch cluster, as a superuser):
#   bash bench/segments.sh [rows]
# It creates and drops the database bench_segments.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
db=bench_segments
psql_() { psql -X -v ON_ERROR_STOP=1 -q -d "$db" "$@"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS '"$db"'" >/dev/null 2>&1 || true' EXIT
psql_ >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "items", "primaryKey": "id",
  "columns": [{"name": "id", "type": "string", "nullable": false},
              {"name": "list_id", "type": "string", "nullable": false},
              {"name": "title", "type": "string", "nullable": false},
              {"name": "qty", "type": "integer", "nullable": false},
              {"name": "done", "type": "boolean", "nullable": false}],
  "scopes": ["list:{list_id}"]}]}'::jsonb);
CREATE FUNCTION public.allow_all(a text, p text, c text) RETURNS jsonb
  LANGUAGE sql IMMUTABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.allow_all(text,text,text)');
CREATE SCHEMA bench;
CREATE FUNCTION bench.epoch(client text) RETURNS text LANGUAGE sql AS $$
  SELECT syncular._producer_epoch('boot', 'bench', client) $$;
CREATE FUNCTION bench.push(first int, n int) RETURNS int LANGUAGE sql AS $$
  SELECT length(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'writer', 'schemaVersion', 1,
                         'logEpoch', bench.epoch('writer')),
      jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', 'c' || first, 'operations',
        (SELECT jsonb_agg(jsonb_build_object('table', 'items', 'rowId', 'r' || lpad(g::text, 7, '0'),
                  'op', 'upsert', 'payload', encode(syncular.encode_sparse_row('items', jsonb_build_object(
                    'id', 'r' || lpad(g::text, 7, '0'), 'list_id', 'l1', 'title', md5(g::text),
                    'qty', g % 100, 'done', false)), 'base64')))
           FROM generate_series(first, first + n - 1) g))))), 'boot', 'bench')) $$;
-- one bootstrap round of client `client` with `accept`: the response bytes
CREATE FUNCTION bench.boot(client text, accept int) RETURNS bytea LANGUAGE sql AS $$
  SELECT syncular.handle(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
    'msgKind', 'request', 'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1,
                         'logEpoch', bench.epoch(client)),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 1000, 'limitSnapshotRows', 50000,
                         'maxSnapshotPages', 50, 'accept', accept),
      jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's', 'table', 'items',
                         'scopes', '{"list_id": ["l1"]}'::jsonb, 'cursor', -1)))), 'boot', 'bench') $$;
-- the segments a response references, downloaded (identity) through the direct endpoint
CREATE FUNCTION bench.download(resp bytea) RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(length(d.body)) FROM jsonb_array_elements(syncular.debug_render(resp)->'frames') f,
    LATERAL syncular.segment_download(f->>'segmentId', 'boot', 'bench', '{"list_id": ["l1"]}') d
   WHERE f->>'type' = 'SEGMENT_REF' $$;
SQL
# 500-row commits, each its own transaction; statistics after the first ones (as after autovacuum)
for g in $(seq 0 500 $((n - 1))); do
  echo "SELECT bench.push($g, 500);"
  if [ "$g" = 5000 ]; then echo "ANALYZE;"; fi
done | psql_ >/dev/null
psql_ -c "ANALYZE" >/dev/null

# seconds of one statement (its own time, from \timing), in a session warmed by one inline
# bootstrap of another client first: a gateway's pooled connection has its plans and the compiled
# schema cached already
t() {
  psql_ -c '\timing on' -c "SELECT length(bench.boot('warm-' || md5(random()::text), 1))" -c "$1" |
    awk '/^Time:/ { print $2 / 1000 }' | tail -1
}
rate() { awk -v n="$n" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
row() { printf '| %s | %s | %s |\n' "$1" "$(printf '%.3f' "$2")" "$(rate "$2")"; }

echo "| case ($n rows) | seconds | rows/s |"
echo "|---|---|---|"
row "plain COPY of the same rows (payload bytes, C order)" \
  "$(t "COPY (SELECT _sync_server_version, _sync_payload FROM items WHERE _sync_partition = 'boot' ORDER BY _sync_row_id COLLATE \"C\") TO '/dev/null'")"
row "rows lane, inline (accept 1)" "$(t "SELECT length(bench.boot('c-inline', 1))")"
row "rows lane, external, first client: build + store (accept 2)" "$(t "SELECT length(bench.boot('c-ext-1', 2))")"
row "rows lane, external, second client: reuse (accept 2)" "$(t "SELECT length(bench.boot('c-ext-2', 2))")"
row "rows lane, external: download of the stored pages (identity)" "$(t "SELECT bench.download(bench.boot('c-ext-3', 2))")"
row "image lane, first client: build + store (accept 5)" "$(t "SELECT length(bench.boot('c-img-1', 5))")"
row "image lane, second client: reuse (accept 5)" "$(t "SELECT length(bench.boot('c-img-2', 5))")"
row "image lane: download of the image (identity)" "$(t "SELECT bench.download(bench.boot('c-img-3', 5))")"
psql_ -At -c "SELECT 'stored: ' || string_agg(format('%s x %s (%s bytes)', n, m, b), ', ')
                FROM (SELECT CASE media_type WHEN 1 THEN 'rows' ELSE 'sqlite' END m, count(*) n, sum(byte_length) b
                        FROM syncular.sync_segments GROUP BY 1) x"
