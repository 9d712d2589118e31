#!/usr/bin/env bash
# Multi-node test (docs/scaling.md): two local clusters A and B (unix socket + 127.0.0.1 only,
# free ports) hold four logical shard databases (syncular_s0, _s1 on A; _s2, _s3 on B) and the
# router database (syncular_router on A, extension syncular_router, shard map in the SQL/MED
# server "syncular").  Checks, in order:
#   1. 1,000 partitions pushed through the router land on every shard, each partition's commits
#      and rows on exactly the shard PL/Proxy maps it to;
#   2. rounds through the router are byte-identical to rounds on the shard (pull, push replay,
#      handle_http), requests built with syncular.debug_encode;
#   1b. remote operations registered on every shard; operations_http and operations_watch_rerun
#      through the router answer exactly what the partition's shard answers;
#   3. syncular-gateway with --db on the router: a realtime socket on a partition of every shard
#      gets the delta of a push through the router (the gateway LISTENs on every shard database),
#      and still does for the shards on A once B stops;
#      server B stopped: only the partitions of shards 2 and 3 answer 503 sync.schema_not_ready
#      {"shardUnavailable": true}; the others keep serving; cluster-wide calls fail as a whole;
#      B restarted: served again;
#   4. a hot standby of B (pg_basebackup -R): pull-only rounds answer the primary's bytes at the
#      same LSN, pushes are refused with 503 sync.schema_not_ready {"hotStandby": true}, also
#      through a second router over the standby, and the client record catches up on the primary;
#   5. shard 1 moved from A to B (pg_dump -Fc / pg_restore, router repointed) while the others
#      serve: its clients see the same bytes; restored from an older copy, rotate_log_epoch gives
#      its clients a clean epoch reset;
#   6. a bump with a backfill checkpoint through the router installs it on its partition's shard
#      only, whose partitions wait for the activation (routed claim/advance/activate);
#   7. ensure_schema refused by one shard is applied nowhere.
# Serves syncular and syncular_router from the installation staged from this tree
# (scripts/cluster-work.sh) and plproxy from the PostgreSQL of $PG_CONFIG.  Runs the
# clusters as user postgres when started as root.  Everything is removed at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/cluster-work.sh scale
started=$(date +%s)

running=()
cleanup() {
  for d in "${running[@]}"; do
    as_pg "$BIN/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "not ok - $*" >&2
  for l in "$work"/*.log; do echo "--- $l" >&2; tail -20 "$l" >&2; done
  exit 1
}
ok() { echo "ok - $*"; }
check() { # check "<description>" <got> <expected>
  [ "$2" = "$3" ] || fail "$1: got [$2], expected [$3]"
  ok "$1"
}

port_a=$(bash scripts/free-port.sh)
port_b=$(bash scripts/free-port.sh)
port_s=$(bash scripts/free-port.sh)
[ "$port_a" != "$port_b" ] && [ "$port_s" != "$port_a" ] && [ "$port_s" != "$port_b" ] || fail "free ports collided"

start() { # start <name> <port>: initdb (first time) and start a cluster
  local d=$work/$1
  [ -d "$d" ] || as_pg "$BIN/initdb" -A trust -U postgres -D "$d" >/dev/null
  running+=("$d")
  if ! as_pg "$BIN/pg_ctl" -D "$d" -l "$work/$1.log" -w -t 180 \
      -o "-p $2 -k $work -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null; then
    fail "cluster $1 did not start on port $2"
  fi
}
stop() { as_pg "$BIN/pg_ctl" -D "$work/$1" -m fast -w stop >/dev/null; }

# sql <port> <db> [psql -v args...] < SQL: one unaligned, tuples-only result
sql() {
  local port=$1 db=$2
  shift 2
  PGOPTIONS="-c client_min_messages=warning" "$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d "$db" "$@"
}

start a "$port_a"
start b "$port_b"

# docblock <name>: the SQL block of docs/scaling.md marked <!-- test/scale: name -->, with the
# guide's servers db-a.internal (A), db-b.internal (B) and db-b-standby.internal (B's standby) mapped to the local clusters
docblock() {
  local b
  b=$(awk -v m="<!-- test/scale: $1 -->" '$0 == m {f = 1; next} f && /^```sql/ {g = 1; next} g && /^```/ {exit} g {print}' docs/scaling.md)
  [ -n "$b" ] || fail "docs/scaling.md has no SQL block marked test/scale: $1"
  echo "$b" | sed "s/host=db-a.internal port=5432/host=127.0.0.1 port=$port_a/g; s/host=db-b.internal port=5432/host=127.0.0.1 port=$port_b/g;
                   s/host=db-b-standby.internal port=5432/host=127.0.0.1 port=$port_s/g"
}

# ------------------------------------------------------------------ setup
shard_port=("$port_a" "$port_a" "$port_b" "$port_b")
for k in 0 1 2 3; do
  sql "${shard_port[$k]}" postgres -c "CREATE DATABASE syncular_s$k"
  docblock shard | sql "${shard_port[$k]}" "syncular_s$k"
done
sql "$port_a" postgres -c "CREATE DATABASE syncular_router"
docblock router | sql "$port_a" syncular_router
sql "$port_a" postgres -c "CREATE ROLE sync_gateway LOGIN"
docblock gateway-grants | sql "$port_a" syncular_router
# the router's released version updates to this one, to the same routines as a fresh install
sql "$port_a" postgres -c "CREATE DATABASE syncular_router_up"
sql "$port_a" syncular_router_up -c "CREATE EXTENSION syncular_router VERSION '0.2.0' CASCADE" \
  -c "ALTER EXTENSION syncular_router UPDATE"
routines="SELECT extversion || ' ' || md5(string_agg(p.oid::regprocedure::text || p.prosrc
            || coalesce(obj_description(p.oid, 'pg_proc'), ''), ',' ORDER BY p.oid::regprocedure::text))
          FROM pg_proc p, pg_extension e
         WHERE p.pronamespace = 'syncular'::regnamespace AND e.extname = 'syncular_router' GROUP BY extversion"
check "router: 0.2.0 updated by ALTER EXTENSION equals a fresh install" \
  "$(sql "$port_a" syncular_router_up -c "$routines")" "$(sql "$port_a" syncular_router -c "$routines")"
sql "$port_a" postgres -c "DROP DATABASE syncular_router_up"
check "router: four logical shards" "$(sql "$port_a" syncular_router -c 'SELECT syncular.shard_count()')" 4
r=$(sql "$port_a" syncular_router <<'SQL'
SELECT count(*) FILTER (WHERE p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                                                           WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
       || ' ' || count(*) FILTER (WHERE obj_description(p.oid, 'pg_proc') IS NULL)
       || ' ' || count(*) FILTER (WHERE p.prosecdef AND p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}')
       || ' ' || count(*) FILTER (WHERE p.proname !~ '^_' AND NOT p.prosecdef AND p.proname !~ '^shard_')
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace;
SQL
)
check "router surface: no PUBLIC EXECUTE, every routine commented, definers pin search_path, serving functions are definers" "$r" "0 0 0 0"

IR_V1='{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [
  {"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false},
  {"name": "title", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"]}]}'
IR_V2=$(echo "$IR_V1" | sed 's/"version": 1/"version": 2/; s/"nullable": true}\]/"nullable": true}, {"name": "notes", "type": "string", "nullable": true}]/')

r=$(docblock register | sql "$port_a" syncular_router -v ir="$IR_V1" | sed 's/^{"shards": .*/resolver/')
check "ensure_schema, set_scope_resolver, readiness on every shard through the router" "$(echo $r)" \
  "created resolver true 4|$(sql "$port_a" syncular_router <<< "SELECT hashtext('tenant-1') & 3")"

# ------------------------------------------------------------------ 1. 1,000 partitions
r=$(sql "$port_a" syncular_router <<'SQL'
SELECT count(*) FROM generate_series(0, 999) i,
  LATERAL syncular.push('tenant-' || i, 'u1', 'c1', jsonb_build_array(jsonb_build_object(
    'clientCommitId', 'cc-' || i, 'operations', jsonb_build_array(jsonb_build_object(
      'table', 'todos', 'op', 'upsert',
      'row', jsonb_build_object('id', 't' || i, 'list_id', 'l1', 'title', 'todo ' || i)))))) r
 WHERE r -> 0 ->> 'status' = 'applied';
SQL
)
check "1,000 partitions pushed through the router" "$r" 1000

all_parts=""
for k in 0 1 2 3; do
  parts=$(sql "${shard_port[$k]}" "syncular_s$k" -c \
    "SELECT string_agg(partition, ',' ORDER BY partition) FROM syncular.sync_commits")
  rows=$(sql "${shard_port[$k]}" "syncular_s$k" -c \
    "SELECT string_agg(_sync_partition, ',' ORDER BY _sync_partition) FROM public.todos")
  [ "$parts" = "$rows" ] || fail "shard $k: commits and rows name different partitions"
  r=$(sql "$port_a" syncular_router -v parts="$parts" -v k="$k" <<'SQL'
SELECT count(*) || ' ' || count(*) FILTER (WHERE syncular.shard_of(p) <> :k)
  FROM unnest(string_to_array(:'parts', ',')) p;
SQL
)
  n=${r% *}; wrong=${r#* }
  [ "$wrong" = 0 ] || fail "shard $k holds $wrong partitions routed elsewhere"
  [ "$n" -ge 150 ] || fail "shard $k holds only $n of 1000 partitions"
  ok "shard $k holds $n partitions, every one routed to it, commits and rows alike"
  all_parts="$all_parts,$parts"
done
check "each partition on exactly one shard" \
  "$(echo "${all_parts#,}" | tr ',' '\n' | sort | uniq | wc -l) $(echo "${all_parts#,}" | tr ',' '\n' | wc -l)" "1000 1000"

# ------------------------------------------------------------------ 1b. remote operations through the router
# register_queries on every shard; operations_http and operations_watch_rerun routed to the
# partition's shard answer exactly what the shard answers (REMOTE.md §5, §6)
r=$(sql "$port_a" syncular_router <<'SQL'
SELECT jsonb_array_length(syncular.register_queries('{"queryIrVersion": 3, "queries": [{"name": "todosInList",
  "sql": "select id, title from todos where list_id = :listId order by id",
  "params": [{"name": "listId", "type": "string"}],
  "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}],
  "tables": ["todos"], "reactive": {"dependencies": [{"table": "todos",
    "scopes": [{"variable": "list_id", "pattern": "list:{list_id}", "params": ["listId"]}]}]}}]}') -> 'shards');
SQL
)
check "register_queries on every shard through the router" "$r" 4
OPREQ='{"t":"object","v":[["revision",{"t":"integer","v":"1"}],["kind",{"t":"string","v":"query"}],["clientId",{"t":"string","v":"ops-1"}],["operationId",{"t":"string","v":"todosInList"}],["params",{"t":"object","v":[["listId",{"t":"string","v":"l1"}]]}]]}'
WATCH='[{"w": 1, "seq": -1, "actorId": "u1", "message": {"t":"object","v":[["revision",{"t":"integer","v":"1"}],["kind",{"t":"string","v":"watch"}],["watchId",{"t":"string","v":"w1"}],["clientId",{"t":"string","v":"ops-1"}],["operationId",{"t":"string","v":"todosInList"}],["params",{"t":"object","v":[["listId",{"t":"string","v":"l1"}]]}]]}}]'
for P in tenant-7 tenant-8 tenant-9 tenant-10; do
  k=$(sql "$port_a" syncular_router -v p="$P" <<< "SELECT syncular.shard_of(:'p')")
  opq="SELECT status || ' ' || content_type || ' ' || convert_from(body, 'UTF8') FROM syncular.operations_http(convert_to(:'req', 'UTF8'), :'p', 'u1')"
  via=$(sql "$port_a" syncular_router -v req="$OPREQ" -v p="$P" <<< "$opq")
  direct=$(sql "${shard_port[$k]}" "syncular_s$k" -v req="$OPREQ" -v p="$P" <<< "$opq")
  [ "$via" = "$direct" ] || fail "operations_http of $P through the router: [$via], on shard $k: [$direct]"
  case "$via" in *"\"t${P#tenant-}\""*) ;; *) fail "operations_http of $P does not read its row: $via" ;; esac
  wq="SELECT w || ' ' || max_commit_seq || ' ' || outcome || ' ' || convert_from(message, 'UTF8') FROM syncular.operations_watch_rerun(:'p', :'b')"
  via=$(sql "$port_a" syncular_router -v b="$WATCH" -v p="$P" <<< "$wq")
  direct=$(sql "${shard_port[$k]}" "syncular_s$k" -v b="$WATCH" -v p="$P" <<< "$wq")
  [ "$via" = "$direct" ] || fail "operations_watch_rerun of $P through the router: [$via], on shard $k: [$direct]"
  case "$via" in "1 1 snapshot "*) ;; *) fail "operations_watch_rerun of $P: $via" ;; esac
  ok "operations_http and operations_watch_rerun of $P through the router answer as shard $k does"
done

# ------------------------------------------------------------------ 2. byte-identical rounds
shard_of() { sql "$port_a" syncular_router -v p="$1" <<< "SELECT syncular.shard_of(:'p')"; }
# mkreq <shard> <partition> <client> <frames SQL expression>: request bytes (hex) built on the
# shard with syncular.debug_encode, with the partition's current epoch (none: 'none' as 5th arg)
mkreq() {
  local k=$1
  sql "${shard_port[$k]}" "syncular_s$k" -v part="$2" -v client="$3" -v noepoch="${5:-}" <<SQL
SELECT encode(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
  'frames', jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('type', 'REQ_HEADER',
      'clientId', :'client', 'schemaVersion', 1,
      'logEpoch', CASE WHEN :'noepoch' = '' THEN (SELECT r.log_epoch FROM syncular.sync_partition_registry r
                                                   WHERE r.partition = :'part') END))) || ($4)::jsonb)), 'hex');
SQL
}
PULL="'[{\"type\": \"PULL_HEADER\", \"limitCommits\": 0, \"limitSnapshotRows\": 0, \"maxSnapshotPages\": 0, \"accept\": 1},
        {\"type\": \"SUBSCRIPTION\", \"id\": \"s1\", \"table\": \"todos\", \"scopes\": {\"list_id\": [\"l1\"]}, \"cursor\": -1}]'"
push_frames() { # push_frames <clientCommitId> <rowId> <title>
  echo "jsonb_build_array(jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', '$1', 'operations',
    jsonb_build_array(jsonb_build_object('table', 'todos', 'rowId', '$2', 'op', 'upsert', 'payload',
      encode(syncular.encode_sparse_row('todos', jsonb_build_object('id', '$2', 'list_id', 'l1', 'title', '$3')), 'base64')))))"
}
# handle <port> <db> <request hex> <partition> [actor]: response hex
handle() {
  sql "$1" "$2" -v req="$3" -v p="$4" -v actor="${5:-u1}" <<< \
    "SELECT encode(syncular.handle(decode(:'req', 'hex'), :'p', :'actor'), 'hex')"
}
http() { # http <port> <db> <request hex> <partition>: "status content_type body-hex"
  sql "$1" "$2" -v req="$3" -v p="$4" <<< \
    "SELECT status || ' ' || content_type || ' ' || encode(body, 'hex') FROM syncular.handle_http(decode(:'req', 'hex'), :'p', 'u1')"
}
render() { # render <shard> <response hex> <jsonpath>: a member of the rendered response
  sql "${shard_port[$1]}" "syncular_s$1" -v resp="$2" -v path="$3" <<< \
    "SELECT jsonb_path_query_first(syncular.debug_render(decode(:'resp', 'hex')), :'path'::jsonpath) #>> '{}'"
}

P=tenant-7; k=$(shard_of $P)
req=$(mkreq "$k" $P cmp "$PULL")
via_router=$(handle "$port_a" syncular_router "$req" $P)
direct=$(handle "${shard_port[$k]}" "syncular_s$k" "$req" $P)
[ -n "$direct" ] && [ "$via_router" = "$direct" ] || fail "pull round via the router differs from the shard's"
check "pull (bootstrap) through the router: same bytes as on shard $k" \
  "$(render "$k" "$direct" '$.frames[*] ? (@.type == "SUB_START").status')" active
req=$(mkreq "$k" $P cmp "$(push_frames cmp-1 t-cmp hello)")
first=$(handle "$port_a" syncular_router "$req" $P)
check "push through the router applied" "$(render "$k" "$first" '$.frames[*] ? (@.type == "PUSH_RESULT").status')" applied
direct=$(handle "${shard_port[$k]}" "syncular_s$k" "$req" $P)
via_router=$(handle "$port_a" syncular_router "$req" $P)
[ "$via_router" = "$direct" ] || fail "push replay via the router differs from the shard's"
check "push replay: router and shard answer the same bytes" \
  "$(render "$k" "$direct" '$.frames[*] ? (@.type == "PUSH_RESULT").status')" cached
[ "$(http "$port_a" syncular_router "$req" $P)" = "$(http "${shard_port[$k]}" "syncular_s$k" "$req" $P)" ] \
  || fail "handle_http via the router differs from the shard's"
ok "handle_http through the router: same status, content type and body as on the shard"
# the SQL authenticator lives in the router (it answers the partition, so it runs before routing)
sql "$port_a" syncular_router >/dev/null <<'SQL'
CREATE FUNCTION public.auth(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
  LANGUAGE sql STABLE SET search_path = pg_catalog AS $$
  SELECT CASE WHEN headers ->> 'x-api-key' = 'k1' THEN jsonb_build_object('actorId', 'u1', 'partition', query ->> 'p') END $$;
SELECT syncular.set_authenticator('public.auth(text,text,jsonb,jsonb)');
SQL
authd() { # authd <request hex> <api key>: "status content_type body-hex" of the router's handle_http_authenticated
  sql "$port_a" syncular_router -v req="$1" -v key="$2" -v p="$P" <<< \
    "SELECT status || ' ' || content_type || ' ' || encode(body, 'hex') FROM syncular.handle_http_authenticated(decode(:'req', 'hex'), 'POST', '/sync-api/sync', jsonb_build_object('x-api-key', :'key'), jsonb_build_object('p', :'p'))"
}
[ "$(authd "$req" k1)" = "$(http "${shard_port[$k]}" "syncular_s$k" "$req" $P)" ] \
  || fail "handle_http_authenticated via the router differs from the shard's handle_http"
ok "handle_http_authenticated through the router: the router's authenticator, then the shard's round"
r=$(authd "$req" wrong)
check "a refused request through the router: 401 sync.auth_required" \
  "${r%% *} $(sql "$port_a" syncular_router <<< "SELECT convert_from(decode('${r##* }', 'hex'), 'UTF8')::jsonb ->> 'code'")" \
  "401 sync.auth_required"
check "presence_authorize through the router: the shard's answer" \
  "$(sql "$port_a" syncular_router -v p="$P" <<< "SELECT syncular.presence_authorize(:'p', 'u1', 'cmp', ARRAY['list:l1', 'list:zz'])")" \
  "$(sql "${shard_port[$k]}" "syncular_s$k" -v p="$P" <<< "SELECT syncular.presence_authorize(:'p', 'u1', 'cmp', ARRAY['list:l1', 'list:zz'])")"
r=$(sql "$port_a" syncular_router -v req="$req" <<'SQL' 2>&1 || true
\set VERBOSITY default
SELECT syncular.handle(decode(:'req', 'hex'), 'tenant-7', '');
SQL
)
echo "$r" | grep -q 'DETAIL:  {"code": "sync.invalid_request"}' || fail "a shard's error through the router: $r"
ok "a shard's error comes through the router with its message and catalogue DETAIL"

# ------------------------------------------------------------------ 3. the gateway; server B stopped
# syncular-gateway with --db on the router: a socket on a partition of every shard gets its
# partition's delta (the gateway LISTENs on each shard database), also after B stops (the python
# step stops it: STOP_CMD)
make -s gateway PG_CONFIG="$PG_CONFIG" >/dev/null
export -f as_pg stop
export BIN work
/usr/bin/python3 test/scale/gateway.py gateway/syncular-gateway \
  "host=$work port=$port_a user=postgres dbname=syncular_router" \
  "host=$work port=$port_a user=postgres dbname=syncular_s0" "stop b" "$work/gateway.log" \
  || fail "the gateway in front of the router"
bare=$(mkreq 0 tenant-0 probe "'[{\"type\": \"PULL_HEADER\", \"limitCommits\": 0, \"limitSnapshotRows\": 0, \"maxSnapshotPages\": 0, \"accept\": 1}]'" none)
r=$(sql "$port_a" syncular_router -v bare="$bare" <<'SQL'
SELECT string_agg(x, ' ' ORDER BY x) FROM (
  SELECT format('%s:%s:%s', syncular.shard_of('tenant-' || i) >= 2, h.status,
                CASE WHEN h.status = 503 THEN convert_from(h.body, 'UTF8')::jsonb #>> '{details,shardUnavailable}'
                     ELSE 'ok' END) AS x
    FROM generate_series(0, 999) i, LATERAL syncular.handle_http(decode(:'bare', 'hex'), 'tenant-' || i, 'u1') h
   GROUP BY 1) g;
SQL
)
check "B stopped: partitions of shards 2-3 answer 503 shardUnavailable, shards 0-1 keep serving" \
  "$r" "f:200:ok t:503:true"
down=$(sql "$port_a" syncular_router <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 2 LIMIT 1")
body=$(sql "$port_a" syncular_router -v bare="$bare" -v p="$down" <<< \
  "SELECT convert_from(body, 'UTF8') FROM syncular.handle_http(decode(:'bare', 'hex'), :'p', 'u1')")
check "503 body" "$body" '{"code":"sync.schema_not_ready","category":"internal","retryable":true,"recommendedAction":"retryLater","message":"server schema is not ready for this request","details":{"shardUnavailable":true}}'
errs() { # errs <SQL>: "<SQLSTATE> <DETAIL>" of the error the router raises
  sql "$port_a" syncular_router -v q="$1" <<'SQL'
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; det text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || det;
END $$;
SELECT pg_temp.err(:'q');
SQL
}
check "handle() for a partition of a stopped shard raises the catalogue error" \
  "$(errs "SELECT syncular.handle(decode('$bare', 'hex'), '$down', 'u1')")" \
  '55000 {"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}'
grep -q "syncular_router: shard 2 unavailable for partition '$down'" "$work/a.log" \
  || fail "the router's log does not say which shard failed"
ok "the router's server log names the shard, the partition and PL/Proxy's reason"
check "readiness fails as a whole" "$(errs "SELECT syncular.readiness()")" \
  '55000 {"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}'
check "ensure_schema fails as a whole" "$(errs "SELECT syncular.ensure_schema('$IR_V2', '[]', 'public')")" \
  '55000 {"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}'
for k in 0 1; do
  check "ensure_schema applied nowhere: shard $k still at version 1" \
    "$(sql "$port_a" "syncular_s$k" -c 'SELECT schema_version FROM syncular.sync_schema_meta')" 1
done
start b "$port_b"
# the router's cached connections to B broke: PL/Proxy drops them on the next call (503 once)
for _ in 1 2 3; do
  r=$(http "$port_a" syncular_router "$bare" "$down"); r=${r%% *}
  [ "$r" = 200 ] && break
done
check "B restarted: its partitions are served again" "$r" 200

# ------------------------------------------------------------------ 4. hot standby of B
as_pg "$BIN/pg_basebackup" -h "$work" -p "$port_b" -U postgres -D "$work/s" -R -X stream -c fast
start s "$port_s"
Q=$(sql "$port_a" syncular_router <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 3 LIMIT 1")
sql "$port_a" syncular_router -v q="$Q" <<'SQL' >/dev/null
SELECT syncular.push(:'q', 'u1', 'c1', '[{"clientCommitId": "standby-1", "operations": [{"table": "todos", "op": "upsert",
  "row": {"id": "s1", "list_id": "l1", "title": "after the base backup"}}]}]');
SQL
lsn=$(sql "$port_b" syncular_s3 -c "SELECT pg_current_wal_lsn()")
for _ in $(seq 1 100); do
  [ "$(sql "$port_s" syncular_s3 -v lsn="$lsn" <<< "SELECT pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn")" = t ] && break
  sleep 0.1
done
check "standby replayed the primary's LSN" \
  "$(sql "$port_s" syncular_s3 -v lsn="$lsn" <<< "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn")" t
req=$(mkreq 3 "$Q" replica-client "$PULL")
on_standby=$(handle "$port_s" syncular_s3 "$req" "$Q")
on_primary=$(handle "$port_b" syncular_s3 "$req" "$Q")
[ -n "$on_standby" ] && [ "$on_standby" = "$on_primary" ] || fail "pull on the standby differs from the primary's"
check "pull-only round on the standby: the primary's bytes at the same LSN, with the replayed commit" \
  "$(render 3 "$on_standby" '$.frames[*] ? (@.type == "SUB_START").status') $(render 3 "$on_standby" '$.frames[*] ? (@.type == "SUB_END").nextCursor')" \
  "active $(sql "$port_b" syncular_s3 -v q="$Q" <<< "SELECT max_commit_seq FROM syncular.sync_partitions WHERE partition = :'q'")"
cursor=$(render 3 "$on_standby" '$.frames[*] ? (@.type == "SUB_END").nextCursor')
# a client that only ever reached the standby has no record anywhere yet
req=$(mkreq 3 "$Q" standby-only "$PULL")
r=$(handle "$port_s" syncular_s3 "$req" "$Q")
check "standby round of a new client served, no client record written (primary has none)" \
  "$(render 3 "$r" '$.frames[*] ? (@.type == "SUB_START").status') $(sql "$port_b" syncular_s3 <<< "SELECT count(*) FROM syncular.sync_clients WHERE client_id = 'standby-only'")" \
  "active 0"
preq=$(mkreq 3 "$Q" standby-only "$(push_frames sb-1 t-sb blocked)")
check "push on the standby: 503 sync.schema_not_ready {hotStandby}" \
  "$(sql "$port_s" syncular_s3 -v req="$preq" -v q="$Q" <<< \
     "SELECT status || ' ' || (convert_from(body, 'UTF8')::jsonb #>> '{code}') || ' ' || (convert_from(body, 'UTF8')::jsonb #>> '{details,hotStandby}') FROM syncular.handle_http(decode(:'req', 'hex'), :'q', 'u1')")" \
  "503 sync.schema_not_ready true"
# the client next reaches the primary with the cursor the standby gave it
inc=$(mkreq 3 "$Q" standby-only "'[{\"type\": \"PULL_HEADER\", \"limitCommits\": 0, \"limitSnapshotRows\": 0, \"maxSnapshotPages\": 0, \"accept\": 1},
        {\"type\": \"SUBSCRIPTION\", \"id\": \"s1\", \"table\": \"todos\", \"scopes\": {\"list_id\": [\"l1\"]}, \"cursor\": $cursor}]'")
handle "$port_b" syncular_s3 "$inc" "$Q" >/dev/null
check "the client record catches up on the primary (cursor from the standby round)" \
  "$(sql "$port_b" syncular_s3 <<< "SELECT cursor FROM syncular.sync_clients WHERE client_id = 'standby-only'")" "$cursor"
# a read-only router over the standby (docs/scaling.md "replicas"): the same pull bytes, pushes refused
sql "$port_a" postgres -c "CREATE DATABASE syncular_router_ro"
docblock replicas | sql "$port_a" syncular_router_ro
r=$(handle "$port_a" syncular_router_ro "$req" "$Q")
[ -n "$r" ] && [ "$r" = "$(handle "$port_s" syncular_s3 "$req" "$Q")" ] || fail "pull through the replica router differs from the standby's"
ok "pull-only round through a router over the standby: the standby's bytes"
check "push through the replica router: 503 hotStandby" \
  "$(sql "$port_a" syncular_router_ro -v req="$preq" -v q="$Q" <<< \
     "SELECT status || ' ' || (convert_from(body, 'UTF8')::jsonb #>> '{details,hotStandby}') FROM syncular.handle_http(decode(:'req', 'hex'), :'q', 'u1')")" \
  "503 true"
stop s

# ------------------------------------------------------------------ 5. move shard 1 from A to B
M=$(sql "$port_a" syncular_router <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 1 LIMIT 1")
O=$(sql "$port_a" syncular_router <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 0 LIMIT 1")
mreq=$(mkreq 1 "$M" mover "$PULL")
before=$(handle "$port_a" syncular_router "$mreq" "$M")
# (1) pause shard 1: the router sends its partitions nowhere (they answer 503, retryable); a
# router session opened before the change sees it on its next call (PL/Proxy reloads the map)
docblock pause > "$work/pause.sql"
r=$(sql "$port_a" syncular_router -v bare="$bare" -v m="$M" <<SQL
SELECT status FROM syncular.handle_http(decode(:'bare', 'hex'), :'m', 'u1');
\\! PGOPTIONS="-c client_min_messages=warning" "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$port_a" -U postgres -d syncular_router -f "$work/pause.sql"
SELECT status FROM syncular.handle_http(decode(:'bare', 'hex'), :'m', 'u1');
SQL
)
check "pause: a router session open across the change answers 200, then 503" "$(echo $r)" "200 503"
# (2) end the sessions still on the shard (in-flight rounds finish or roll back)
docblock terminate | sql "$port_a" postgres >/dev/null
check "during the move: shard 1's partitions answer 503, shard 0 serves" \
  "$(r1=$(http "$port_a" syncular_router "$bare" "$M"); r0=$(http "$port_a" syncular_router "$bare" "$O"); echo "${r1%% *} ${r0%% *}")" "503 200"
# (3) copy: pg_dump -Fc of the one database, restored on B
"$BIN/pg_dump" -Fc -h "$work" -p "$port_a" -U postgres -d syncular_s1 -f "$work/s1.dump"
sql "$port_b" postgres -c "CREATE DATABASE syncular_s1"
"$BIN/pg_restore" -h "$work" -p "$port_b" -U postgres -d syncular_s1 --exit-on-error "$work/s1.dump"
# (4) repoint the router; (5) retire the old copy
docblock repoint | sql "$port_a" syncular_router
sql "$port_a" postgres -c "DROP DATABASE syncular_s1"
shard_port[1]=$port_b
after=$(handle "$port_a" syncular_router "$mreq" "$M")
[ -n "$after" ] && [ "$after" = "$before" ] || fail "a moved tenant's round changed"
ok "shard 1 moved to B: its clients get the same bytes (same epoch, same commits)"
seq_before=$(sql "$port_b" syncular_s1 -v m="$M" <<< "SELECT max_commit_seq FROM syncular.sync_partitions WHERE partition = :'m'")
r=$(handle "$port_a" syncular_router "$(mkreq 1 "$M" mover "$(push_frames mv-1 t-mv moved)")" "$M")
check "a push after the move continues the partition's log" \
  "$(render 1 "$r" '$.frames[*] ? (@.type == "PUSH_RESULT").commitSeq')" "$((seq_before + 1))"

# restored from an older copy (the dump predates commit mv-1): the clients that saw mv-1 must
# not read a log that forgot it, so the operator rotates every partition's epoch before serving
seen=$(mkreq 1 "$M" mover "$PULL")
sql "$port_a" postgres -c "CREATE DATABASE syncular_s1_old"
"$BIN/pg_restore" -h "$work" -p "$port_a" -U postgres -d syncular_s1_old --exit-on-error "$work/s1.dump"
docblock rotate | sql "$port_a" syncular_s1_old >/dev/null
sql "$port_a" syncular_router -v pa="$port_a" <<'SQL'
SELECT format('ALTER SERVER syncular OPTIONS (SET p1 %L)', 'host=127.0.0.1 port=' || :'pa' || ' dbname=syncular_s1_old') \gexec
SQL
r=$(handle "$port_a" syncular_router "$seen" "$M")
check "restored from an older copy + rotate_log_epoch: the client gets a clean epoch reset" \
  "$(render 1 "$r" '$.frames[0].resetRequired') $(render 1 "$r" '$.frames.size()')" "true 1"

# ------------------------------------------------------------------ 6. a bump with a checkpoint
C=$(sql "$port_a" syncular_router <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 2 LIMIT 1")
C2=$(sql "$port_a" syncular_router -v c="$C" <<< "SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x WHERE syncular.shard_of(p) = 2 AND p <> :'c' LIMIT 1")
r=$(sql "$port_a" syncular_router -v ir="$IR_V2" -v c="$C" <<< \
  "SELECT syncular.ensure_schema(:'ir'::jsonb, jsonb_build_array(jsonb_build_object('partition', :'c', 'name', 'notes_v2', 'schemaVersion', 2)), 'public') ->> 'action'")
check "v2 with a checkpoint through the router" "$r" migrated
n=""
for k in 0 2 3; do n="$n $(sql "${shard_port[$k]}" "syncular_s$k" <<< "SELECT count(*) FROM syncular.sync_backfill_checkpoints")"; done
n="$n $(sql "$port_a" syncular_s1_old <<< "SELECT count(*) FROM syncular.sync_backfill_checkpoints")"
check "the checkpoint is installed on its partition's shard only (shards 0 2 3 1)" "$n" " 0 1 0 0"
r=$(for p in "$C" "$C2" "$O"; do x=$(http "$port_a" syncular_router "$bare" "$p"); echo -n "${x%% *} "; done)
check "during the backfill: shard 2's partitions refused (503), shard 0 serves" "$r" "503 503 200 "
r=$(sql "$port_a" syncular_router -v c="$C" <<'SQL'
SELECT (syncular.claim_checkpoint(:'c', 'notes_v2', 2) ->> 'ownerEpoch') AS e \gset
SELECT syncular.source_coverage_seq(:'c', ARRAY['todos']) AS w \gset
SELECT syncular.advance_checkpoint(:'c', 'notes_v2', :e, :w, 0);
SELECT syncular.activate_checkpoint(:'c', 'notes_v2', :e, :w, ARRAY['todos']);
SQL
)
check "claim, advance and activate through the router" "$(echo $r)" "t activated"
r=$(for p in "$C" "$C2" "$O"; do x=$(http "$port_a" syncular_router "$bare" "$p"); echo -n "${x%% *} "; done)
check "activated: shard 2 serves again" "$r" "200 200 200 "

# ------------------------------------------------------------------ 7. one shard refuses
IR_V3=$(echo "$IR_V2" | sed 's/"version": 2/"version": 3/; s/"name": "notes", "type": "string", "nullable": true}/&, {"name": "tags", "type": "string", "nullable": true}/')
IR_V3_OTHER=$(echo "$IR_V3" | sed 's/"tags"/"other"/')
sql "$port_b" syncular_s3 -v ir="$IR_V3_OTHER" <<< "SELECT syncular.ensure_schema(:'ir'::jsonb, '[]', 'public') ->> 'action'" >/dev/null
r=$(errs "SELECT syncular.ensure_schema('$IR_V3', '[]', 'public')")
check "ensure_schema refused by shard 3: the shard's catalogue error" \
  "$(echo "$r" | sed 's/"details".*//')" '55000 {"code": "sync.storage.stored_layout_mismatch", '
for k in 0 2; do
  check "refused everywhere: shard $k still at version 2, no column tags" \
    "$(sql "${shard_port[$k]}" "syncular_s$k" -c "SELECT schema_version || ' ' || (SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.todos'::regclass AND attname = 'tags') FROM syncular.sync_schema_meta")" "2 0"
done
check "refused everywhere: the moved shard 1 too" \
  "$(sql "$port_a" syncular_s1_old -c 'SELECT schema_version FROM syncular.sync_schema_meta')" 2

echo "scale test passed in $(( $(date +%s) - started )) s"
