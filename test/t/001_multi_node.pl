# Multi-node test (docs/scaling.md): two clusters A and B hold four logical shard databases
# (syncular_s0, _s1 on A; _s2, _s3 on B) and the router database (syncular_router on A,
# extension syncular_router, shard map in the SQL/MED server "syncular").  Checks, in order:
#   1. 1,000 partitions pushed through the router land on every shard, each partition's commits
#      and rows on exactly the shard PL/Proxy maps it to;
#   1b. remote operations registered on every shard through the router; for four partitions
#      across the shards, operations_http and operations_watch_rerun through the router answer
#      exactly what the partition's shard answers (REMOTE.md §5, §6);
#   2. rounds through the router are byte-identical to rounds on the shard (pull, push replay,
#      handle_http), requests built with syncular.debug_encode;
#   3. syncular-gateway with --db on the router (test/t/multi_node_gateway.py): a realtime socket
#      on a partition of every shard gets the delta of a push through the router (the gateway
#      LISTENs on every shard database), and still does for the shards on A once B stops;
#      server B stopped: only the partitions of shards 2 and 3 answer 503 sync.schema_not_ready
#      {"shardUnavailable": true}; the others keep serving; cluster-wide calls fail as a whole;
#      B restarted: served again;
#   4. a hot standby of B (a base backup with streaming): pull-only rounds answer the primary's
#      bytes at the same LSN, pushes are refused with 503 sync.schema_not_ready {"hotStandby":
#      true}, also through a second router over the standby, and the client record catches up on
#      the primary;
#   5. shard 1 moved from A to B (pg_dump -Fc / pg_restore, router repointed) while the others
#      serve: its clients see the same bytes; restored from an older copy, rotate_log_epoch gives
#      its clients a clean epoch reset;
#   6. a bump with a backfill checkpoint through the router installs it on its partition's shard
#      only, whose partitions wait for the activation (routed claim/advance/activate);
#   7. ensure_schema refused by one shard is applied nowhere.
# Every SQL block of docs/scaling.md marked <!-- multi-node: NAME --> runs here, with the
# guide's hosts mapped to the local clusters.  Serves syncular and syncular_router from the
# installation staged from this tree, plproxy from the PostgreSQL copied into the staging.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncularTest;
use Test::More;

# B streams to its standby; every node gets room for the router's and the gateway's connections
my $conf = "max_connections = 60\nshared_buffers = 16MB\n";
my $A = syncular_node('a', conf => $conf);
my $B = syncular_node('b', allows_streaming => 1, conf => $conf);
$A->start;
$B->start;
my %node = (a => $A, b => $B);

# docblock(name, standby): the SQL block of docs/scaling.md marked <!-- multi-node: name -->,
# with db-a.internal (A), db-b.internal (B) and db-b-standby.internal (B's standby) mapped
my %hostport;
sub docblock
{
	my ($name) = @_;
	my ($blk) = repo_file('docs/scaling.md') =~ /^<!-- multi-node: \Q$name\E -->\n```sql\n(.*?)^```/ms;
	BAIL_OUT("docs/scaling.md has no SQL block marked multi-node: $name") unless defined $blk;
	$blk =~ s/host=db-a\.internal port=5432/$hostport{a}/g;
	$blk =~ s/host=db-b\.internal port=5432/$hostport{b}/g;
	$blk =~ s/host=db-b-standby\.internal port=5432/$hostport{s}/g;
	return $blk;
}
$hostport{$_} = 'host=' . $node{$_}->host . ' port=' . $node{$_}->port for qw(a b);

# ------------------------------------------------------------------ setup
my @shard = ($A, $A, $B, $B);
for my $k (0 .. 3)
{
	sql($shard[$k], 'postgres', "CREATE DATABASE syncular_s$k");
	sql($shard[$k], "syncular_s$k", docblock('shard'));
}
assert_staged($A, 'syncular_s0');
assert_staged($B, 'syncular_s2');
sql($A, 'postgres', 'CREATE DATABASE syncular_router');
sql($A, 'syncular_router', docblock('router'));
sql($A, 'postgres', 'CREATE ROLE sync_gateway LOGIN');
sql($A, 'syncular_router', docblock('gateway-grants'));
# the router's released version updates to this one, to the same routines as a fresh install
sql($A, 'postgres', 'CREATE DATABASE syncular_router_up');
sql($A, 'syncular_router_up',
	"CREATE EXTENSION syncular_router VERSION '0.2.0' CASCADE; ALTER EXTENSION syncular_router UPDATE");
my $routines = q{
SELECT extversion || ' ' || md5(string_agg(p.oid::regprocedure::text || p.prosrc
         || coalesce(obj_description(p.oid, 'pg_proc'), ''), ',' ORDER BY p.oid::regprocedure::text))
  FROM pg_proc p, pg_extension e
 WHERE p.pronamespace = 'syncular'::regnamespace AND e.extname = 'syncular_router' GROUP BY extversion};
is(sql($A, 'syncular_router_up', $routines), sql($A, 'syncular_router', $routines),
	'router: 0.2.0 updated by ALTER EXTENSION equals a fresh install');
sql($A, 'postgres', 'DROP DATABASE syncular_router_up');
is(sql($A, 'syncular_router', 'SELECT syncular.shard_count()'), 4, 'router: four logical shards');
is(sql($A, 'syncular_router', q{
SELECT count(*) FILTER (WHERE p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                                                           WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
       || ' ' || count(*) FILTER (WHERE obj_description(p.oid, 'pg_proc') IS NULL)
       || ' ' || count(*) FILTER (WHERE p.prosecdef AND p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}')
       || ' ' || count(*) FILTER (WHERE p.proname !~ '^_' AND NOT p.prosecdef AND p.proname !~ '^shard_')
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace}),
	'0 0 0 0',
	'router surface: no PUBLIC EXECUTE, every routine commented, definers pin search_path, serving functions are definers');

# every routed wrapper has its engine function's signature: names, types, defaults, result
# (they are generated from the engine's install script and router/routed.txt)
my @routed = map { /^(\w+)\s/ ? ($1) : () } grep { !/^#/ } slurp_file('router/routed.txt') =~ /^.*$/mg;
my $signatures = sprintf(q{
SELECT string_agg(p.proname || '(' || pg_get_function_arguments(p.oid) || ') ' || pg_get_function_result(p.oid),
                  E'\n' ORDER BY p.proname)
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace AND p.proname IN (%s)},
	join(', ', map { "'$_'" } @routed));
ok(@routed >= 25, 'router: routed.txt names the routed functions (' . scalar(@routed) . ')');
is(sql($A, 'syncular_router', $signatures), sql($A, 'syncular_s0', $signatures),
	'router: every routed wrapper has the signature of the engine function it runs');

my $IR_V1 = '{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [
  {"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false},
  {"name": "title", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"]}]}';
(my $IR_V2 = $IR_V1) =~ s/"version": 1/"version": 2/;
$IR_V2 =~ s/"nullable": true}\]/"nullable": true}, {"name": "notes", "type": "string", "nullable": true}]/;

my $r = sql($A, 'syncular_router', docblock('register'), ir => $IR_V1);
$r =~ s/^\{"shards": .*$/resolver/m;
is(squash($r), 'created resolver true 4|' . sql($A, 'syncular_router', q{SELECT hashtext('tenant-1') & 3}),
	'ensure_schema, set_scope_resolver, readiness on every shard through the router');

# ------------------------------------------------------------------ 1. 1,000 partitions
is(sql($A, 'syncular_router', q{
SELECT count(*) FROM generate_series(0, 999) i,
  LATERAL syncular.push('tenant-' || i, 'u1', 'c1', jsonb_build_array(jsonb_build_object(
    'clientCommitId', 'cc-' || i, 'operations', jsonb_build_array(jsonb_build_object(
      'table', 'todos', 'op', 'upsert',
      'row', jsonb_build_object('id', 't' || i, 'list_id', 'l1', 'title', 'todo ' || i)))))) r
 WHERE r -> 0 ->> 'status' = 'applied'}), 1000, '1,000 partitions pushed through the router');

my @all_parts;
for my $k (0 .. 3)
{
	my $parts = sql($shard[$k], "syncular_s$k",
		'SELECT string_agg(partition, \',\' ORDER BY partition) FROM syncular.sync_commits');
	my $rows = sql($shard[$k], "syncular_s$k",
		'SELECT string_agg(_sync_partition, \',\' ORDER BY _sync_partition) FROM public.todos');
	is($rows, $parts, "shard $k: its commits and its rows name the same partitions");
	my ($n, $wrong) = split / /, sql($A, 'syncular_router', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE syncular.shard_of(p) <> :k)
  FROM unnest(string_to_array(:'parts', ',')) p}, parts => $parts, k => $k);
	is($wrong, 0, "shard $k holds no partition routed elsewhere");
	cmp_ok($n, '>=', 150, "shard $k holds $n partitions, every one routed to it, commits and rows alike");
	push @all_parts, split /,/, $parts;
}
my %seen = map { $_ => 1 } @all_parts;
is(scalar(keys %seen) . ' ' . scalar(@all_parts), '1000 1000', 'each partition on exactly one shard');

# ------------------------------------------------------------------ 1b. remote operations through the router
# register_queries on every shard; operations_http and operations_watch_rerun routed to the
# partition's shard answer exactly what the shard answers (REMOTE.md §5, §6)
is(sql($A, 'syncular_router', <<'SQL'), 4, 'register_queries on every shard through the router');
SELECT jsonb_array_length(syncular.register_queries('{"queryIrVersion": 3, "queries": [{"name": "todosInList",
  "sql": "select id, title from todos where list_id = :listId order by id",
  "params": [{"name": "listId", "type": "string"}],
  "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}],
  "tables": ["todos"], "reactive": {"dependencies": [{"table": "todos",
    "scopes": [{"variable": "list_id", "pattern": "list:{list_id}", "params": ["listId"]}]}]}}]}') -> 'shards')
SQL
my $OPMSG = '{"t":"object","v":[["revision",{"t":"integer","v":"1"}],["kind",{"t":"string","v":"%s"}],%s'
  . '["clientId",{"t":"string","v":"ops-1"}],["operationId",{"t":"string","v":"todosInList"}],'
  . '["params",{"t":"object","v":[["listId",{"t":"string","v":"l1"}]]}]]}';
my $OPREQ = sprintf($OPMSG, 'query', '');
my $WATCH = '[{"w": 1, "seq": -1, "actorId": "u1", "message": '
  . sprintf($OPMSG, 'watch', '["watchId",{"t":"string","v":"w1"}],') . '}]';
my $OPQ = q{SELECT status || ' ' || content_type || ' ' || convert_from(body, 'UTF8')
              FROM syncular.operations_http(convert_to(:'req', 'UTF8'), :'p', 'u1')};
my $WQ = q{SELECT w || ' ' || max_commit_seq || ' ' || outcome || ' ' || convert_from(message, 'UTF8')
             FROM syncular.operations_watch_rerun(:'p', :'b')};
my %op_shards;
for my $n (7 .. 10)
{
	my $P = "tenant-$n";
	my $k = sql($A, 'syncular_router', q{SELECT syncular.shard_of(:'p')}, p => $P);
	$op_shards{$k} = 1;
	my $via = sql($A, 'syncular_router', $OPQ, req => $OPREQ, p => $P);
	is($via, sql($shard[$k], "syncular_s$k", $OPQ, req => $OPREQ, p => $P),
		"operations_http of $P through the router answers as shard $k does");
	like($via, qr/^200 .*"t$n"/, "operations_http of $P reads its row");
	$via = sql($A, 'syncular_router', $WQ, b => $WATCH, p => $P);
	is($via, sql($shard[$k], "syncular_s$k", $WQ, b => $WATCH, p => $P),
		"operations_watch_rerun of $P through the router answers as shard $k does");
	like($via, qr/^1 1 snapshot .*"t$n"/, "operations_watch_rerun of $P: the registration snapshot of its row");
}
cmp_ok(scalar(keys %op_shards), '>=', 2, 'the four partitions of the remote operation checks span several shards');

# ------------------------------------------------------------------ 2. byte-identical rounds
sub shard_of { return sql($A, 'syncular_router', q{SELECT syncular.shard_of(:'p')}, p => $_[0]); }

# mkreq(shard, partition, client, frames SQL expression, noepoch): request bytes (hex) built on
# the shard with syncular.debug_encode, with the partition's current epoch (unless noepoch)
sub mkreq
{
	my ($k, $part, $client, $frames, $noepoch) = @_;
	return sql($shard[$k], "syncular_s$k", qq{
SELECT encode(syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
  'frames', jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('type', 'REQ_HEADER',
      'clientId', :'client', 'schemaVersion', 1,
      'logEpoch', CASE WHEN :'noepoch' = '' THEN (SELECT r.log_epoch FROM syncular.sync_partition_registry r
                                                   WHERE r.partition = :'part') END))) || ($frames)::jsonb)), 'hex')},
		part => $part, client => $client, noepoch => ($noepoch // ''));
}
my $PULL = q{'[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1},
        {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}]'};
sub push_frames    # push_frames(clientCommitId, rowId, title)
{
	my ($cc, $row, $title) = @_;
	return qq{jsonb_build_array(jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', '$cc', 'operations',
    jsonb_build_array(jsonb_build_object('table', 'todos', 'rowId', '$row', 'op', 'upsert', 'payload',
      encode(syncular.encode_sparse_row('todos', jsonb_build_object('id', '$row', 'list_id', 'l1', 'title', '$title')), 'base64')))))};
}
sub handle    # handle(node, db, request hex, partition, actor): response hex
{
	my ($n, $db, $req, $p, $actor) = @_;
	return sql($n, $db, q{SELECT encode(syncular.handle(decode(:'req', 'hex'), :'p', :'actor'), 'hex')},
		req => $req, p => $p, actor => ($actor // 'u1'));
}
sub http    # http(node, db, request hex, partition): "status content_type body-hex"
{
	my ($n, $db, $req, $p) = @_;
	return sql($n, $db, q{SELECT status || ' ' || content_type || ' ' || encode(body, 'hex')
  FROM syncular.handle_http(decode(:'req', 'hex'), :'p', 'u1')}, req => $req, p => $p);
}
sub status { return (split / /, $_[0])[0]; }
sub render    # render(shard, response hex, jsonpath): a member of the rendered response
{
	my ($k, $resp, $path) = @_;
	return sql($shard[$k], "syncular_s$k",
		q{SELECT jsonb_path_query_first(syncular.debug_render(decode(:'resp', 'hex')), :'path'::jsonpath) #>> '{}'},
		resp => $resp, path => $path);
}

my $P = 'tenant-7';
my $k = shard_of($P);
my $req = mkreq($k, $P, 'cmp', $PULL);
my $via_router = handle($A, 'syncular_router', $req, $P);
my $direct = handle($shard[$k], "syncular_s$k", $req, $P);
ok($direct ne '' && $via_router eq $direct, 'pull round via the router: the same bytes as on the shard');
is(render($k, $direct, '$.frames[*] ? (@.type == "SUB_START").status'), 'active',
	"pull (bootstrap) through the router: same bytes as on shard $k");
$req = mkreq($k, $P, 'cmp', push_frames('cmp-1', 't-cmp', 'hello'));
my $first = handle($A, 'syncular_router', $req, $P);
is(render($k, $first, '$.frames[*] ? (@.type == "PUSH_RESULT").status'), 'applied', 'push through the router applied');
$direct = handle($shard[$k], "syncular_s$k", $req, $P);
$via_router = handle($A, 'syncular_router', $req, $P);
is($via_router, $direct, 'push replay: router and shard answer the same bytes');
is(render($k, $direct, '$.frames[*] ? (@.type == "PUSH_RESULT").status'), 'cached', 'push replay: cached');
is(http($A, 'syncular_router', $req, $P), http($shard[$k], "syncular_s$k", $req, $P),
	'handle_http through the router: same status, content type and body as on the shard');
# the SQL authenticator lives in the router (it answers the partition, so it runs before routing)
sql($A, 'syncular_router', q{
CREATE FUNCTION public.auth(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
  LANGUAGE sql STABLE SET search_path = pg_catalog AS $$
  SELECT CASE WHEN headers ->> 'x-api-key' = 'k1' THEN jsonb_build_object('actorId', 'u1', 'partition', query ->> 'p') END $$;
SELECT syncular.set_authenticator('public.auth(text,text,jsonb,jsonb)')});
sub authd    # authd(request hex, api key): "status content_type body-hex" of handle_http_authenticated
{
	return sql($A, 'syncular_router', q{SELECT status || ' ' || content_type || ' ' || encode(body, 'hex')
  FROM syncular.handle_http_authenticated(decode(:'req', 'hex'), 'POST', '/sync-api/sync',
                                          jsonb_build_object('x-api-key', :'key'), jsonb_build_object('p', :'p'))},
		req => $_[0], key => $_[1], p => $P);
}
is(authd($req, 'k1'), http($shard[$k], "syncular_s$k", $req, $P),
	"handle_http_authenticated through the router: the router's authenticator, then the shard's round");
$r = authd($req, 'wrong');
my ($st, undef, $body) = split / /, $r;
is("$st " . sql($A, 'syncular_router', q{SELECT convert_from(decode(:'b', 'hex'), 'UTF8')::jsonb ->> 'code'}, b => $body),
	'401 sync.auth_required', 'a refused request through the router: 401 sync.auth_required');
my $presence = q{SELECT syncular.presence_authorize(:'p', 'u1', 'cmp', ARRAY['list:l1', 'list:zz'])};
is(sql($A, 'syncular_router', $presence, p => $P), sql($shard[$k], "syncular_s$k", $presence, p => $P),
	"presence_authorize through the router: the shard's answer");
my ($ret, $out, $err) = $A->psql('syncular_router',
	qq{\\set VERBOSITY default\nSELECT syncular.handle(decode(:'req', 'hex'), 'tenant-7', '');},
	extra_params => ['-v', "req=$req"]);
like($err, qr/DETAIL:  \{"code": "sync\.invalid_request"\}/,
	"a shard's error comes through the router with its message and catalogue DETAIL");

# ------------------------------------------------------------------ 3. the gateway; server B stopped
# syncular-gateway with --db on the router: a socket on a partition of every shard gets its
# partition's delta (the gateway LISTENs on each shard database), also after B stops (the
# python step runs the stop command)
my $gateway = 'gateway/syncular-gateway';
SKIP:
{
	skip("the gateway in front of the router: $gateway is not built (make gateway)", 1) unless -x $gateway;
	my $stop = join ' ', map { "'$_'" } $B->installed_command('pg_ctl'), '-D', $B->data_dir, '-m', 'fast', '-w', 'stop';
	my $co = 'host=' . $A->host . ' port=' . $A->port;
	run_tap_lines('gateway on the router', '/usr/bin/python3', 'test/t/multi_node_gateway.py', $gateway,
		"$co dbname=syncular_router", "$co dbname=syncular_s0", $stop,
		$PostgreSQL::Test::Utils::tmp_check . '/gateway.log');
}
# B is down (stopped by the python step, or here when it did not run)
$B->stop('fast', fail_ok => 1);
my $bare = mkreq(0, 'tenant-0', 'probe',
	q{'[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]'}, 'none');
is(sql($A, 'syncular_router', q{
SELECT string_agg(x, ' ' ORDER BY x) FROM (
  SELECT format('%s:%s:%s', syncular.shard_of('tenant-' || i) >= 2, h.status,
                CASE WHEN h.status = 503 THEN convert_from(h.body, 'UTF8')::jsonb #>> '{details,shardUnavailable}'
                     ELSE 'ok' END) AS x
    FROM generate_series(0, 999) i, LATERAL syncular.handle_http(decode(:'bare', 'hex'), 'tenant-' || i, 'u1') h
   GROUP BY 1) g}, bare => $bare),
	'f:200:ok t:503:true', 'B stopped: partitions of shards 2-3 answer 503 shardUnavailable, shards 0-1 keep serving');
sub partition_on    # partition_on(shard, except): a partition of tenant-0..99 on that shard
{
	return sql($A, 'syncular_router', q{SELECT p FROM (SELECT 'tenant-' || i AS p FROM generate_series(0, 99) i) x
 WHERE syncular.shard_of(p) = :k AND p <> :'not' ORDER BY p LIMIT 1}, k => $_[0], not => ($_[1] // ''));
}
my $down = partition_on(2);
is(sql($A, 'syncular_router', q{SELECT convert_from(body, 'UTF8') FROM syncular.handle_http(decode(:'bare', 'hex'), :'p', 'u1')},
		bare => $bare, p => $down),
	'{"code":"sync.schema_not_ready","category":"internal","retryable":true,"recommendedAction":"retryLater","message":"server schema is not ready for this request","details":{"shardUnavailable":true}}',
	'503 body');
sub errs    # errs(db, SQL): "<SQLSTATE> <DETAIL>" of the error the statement raises
{
	return sql($A, $_[0], q{
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; det text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || det;
END $$;
SELECT pg_temp.err(:'q')}, q => $_[1]);
}
my $unavailable = '55000 {"code": "sync.schema_not_ready", "details": {"shardUnavailable": true}}';
is(errs('syncular_router', "SELECT syncular.handle(decode('$bare', 'hex'), '$down', 'u1')"), $unavailable,
	'handle() for a partition of a stopped shard raises the catalogue error');
like(slurp_file($A->logfile), qr/syncular_router: shard 2 unavailable for partition '\Q$down\E'/,
	"the router's server log names the shard, the partition and PL/Proxy's reason");
is(errs('syncular_router', 'SELECT syncular.readiness()'), $unavailable, 'readiness fails as a whole');
is(errs('syncular_router', "SELECT syncular.ensure_schema('$IR_V2', '[]', 'public')"), $unavailable,
	'ensure_schema fails as a whole');
for my $k (0, 1)
{
	is(sql($A, "syncular_s$k", 'SELECT schema_version FROM syncular.sync_schema_meta'), 1,
		"ensure_schema applied nowhere: shard $k still at version 1");
}
$B->start;
# the router's cached connections to B broke: PL/Proxy drops them on the next call (503 once)
my $st2;
for (1 .. 3)
{
	$st2 = status(http($A, 'syncular_router', $bare, $down));
	last if $st2 eq '200';
}
is($st2, 200, 'B restarted: its partitions are served again');

# ------------------------------------------------------------------ 4. hot standby of B
$B->backup('standby');
my $s = PostgreSQL::Test::Cluster->new('s', install_path => $B->install_path);
$s->init_from_backup($B, 'standby', has_streaming => 1);
$s->start;
$node{s} = $s;
$hostport{s} = 'host=' . $s->host . ' port=' . $s->port;
my $Q = partition_on(3);
sql($A, 'syncular_router', q{
SELECT syncular.push(:'q', 'u1', 'c1', '[{"clientCommitId": "standby-1", "operations": [{"table": "todos", "op": "upsert",
  "row": {"id": "s1", "list_id": "l1", "title": "after the base backup"}}]}]')}, q => $Q);
my $lsn = sql($B, 'syncular_s3', 'SELECT pg_current_wal_lsn()');
$s->poll_query_until('syncular_s3', "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")
  or diag('the standby did not replay the primary LSN in time');
is(sql($s, 'syncular_s3', q{SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn}, lsn => $lsn),
	't', "standby replayed the primary's LSN");
$req = mkreq(3, $Q, 'replica-client', $PULL);
my $on_standby = handle($s, 'syncular_s3', $req, $Q);
my $on_primary = handle($B, 'syncular_s3', $req, $Q);
ok($on_standby ne '' && $on_standby eq $on_primary, "pull on the standby: the primary's bytes");
is(render(3, $on_standby, '$.frames[*] ? (@.type == "SUB_START").status') . ' '
	  . render(3, $on_standby, '$.frames[*] ? (@.type == "SUB_END").nextCursor'),
	'active ' . sql($B, 'syncular_s3', q{SELECT max_commit_seq FROM syncular.partitions WHERE partition = :'q'}, q => $Q),
	"pull-only round on the standby: the primary's bytes at the same LSN, with the replayed commit");
my $cursor = render(3, $on_standby, '$.frames[*] ? (@.type == "SUB_END").nextCursor');
# a client that only ever reached the standby has no record anywhere yet
$req = mkreq(3, $Q, 'standby-only', $PULL);
$r = handle($s, 'syncular_s3', $req, $Q);
is(render(3, $r, '$.frames[*] ? (@.type == "SUB_START").status') . ' '
	  . sql($B, 'syncular_s3', q{SELECT count(*) FROM syncular.sync_clients WHERE client_id = 'standby-only'}),
	'active 0', 'standby round of a new client served, no client record written (primary has none)');
my $preq = mkreq(3, $Q, 'standby-only', push_frames('sb-1', 't-sb', 'blocked'));
is(sql($s, 'syncular_s3', q{SELECT status || ' ' || (convert_from(body, 'UTF8')::jsonb #>> '{code}') || ' '
       || (convert_from(body, 'UTF8')::jsonb #>> '{details,hotStandby}')
  FROM syncular.handle_http(decode(:'req', 'hex'), :'q', 'u1')}, req => $preq, q => $Q),
	'503 sync.schema_not_ready true', 'push on the standby: 503 sync.schema_not_ready {hotStandby}');
# the client next reaches the primary with the cursor the standby gave it
my $inc = mkreq(3, $Q, 'standby-only', qq{'[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1},
        {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": $cursor}]'});
handle($B, 'syncular_s3', $inc, $Q);
is(sql($B, 'syncular_s3', q{SELECT cursor FROM syncular.sync_clients WHERE client_id = 'standby-only'}), $cursor,
	'the client record catches up on the primary (cursor from the standby round)');
# a read-only router over the standby (docs/scaling.md "replicas"): the same pull bytes, pushes refused
sql($A, 'postgres', 'CREATE DATABASE syncular_router_ro');
sql($A, 'syncular_router_ro', docblock('replicas'));
$r = handle($A, 'syncular_router_ro', $req, $Q);
ok($r ne '' && $r eq handle($s, 'syncular_s3', $req, $Q),
	"pull-only round through a router over the standby: the standby's bytes");
is(sql($A, 'syncular_router_ro', q{SELECT status || ' ' || (convert_from(body, 'UTF8')::jsonb #>> '{details,hotStandby}')
  FROM syncular.handle_http(decode(:'req', 'hex'), :'q', 'u1')}, req => $preq, q => $Q),
	'503 true', 'push through the replica router: 503 hotStandby');
$s->stop;

# ------------------------------------------------------------------ 5. move shard 1 from A to B
my $M = partition_on(1);
my $O = partition_on(0);
my $mreq = mkreq(1, $M, 'mover', $PULL);
my $before = handle($A, 'syncular_router', $mreq, $M);
# (1) pause shard 1: the router sends its partitions nowhere (they answer 503, retryable); a
# router session opened before the change sees it on its next call (PL/Proxy reloads the map)
my $pause = $PostgreSQL::Test::Utils::tmp_check . '/pause.sql';
PostgreSQL::Test::Utils::append_to_file($pause, docblock('pause'));
my $psql = $A->installed_command('psql');
$r = sql($A, 'syncular_router', qq{
SELECT status FROM syncular.handle_http(decode(:'bare', 'hex'), :'m', 'u1');
\\! "$psql" -X -q -v ON_ERROR_STOP=1 -h "@{[$A->host]}" -p @{[$A->port]} -d syncular_router -f "$pause"
SELECT status FROM syncular.handle_http(decode(:'bare', 'hex'), :'m', 'u1');}, bare => $bare, m => $M);
is(squash($r), '200 503', 'pause: a router session open across the change answers 200, then 503');
# (2) end the sessions still on the shard (in-flight rounds finish or roll back)
sql($A, 'postgres', docblock('terminate'));
is(status(http($A, 'syncular_router', $bare, $M)) . ' ' . status(http($A, 'syncular_router', $bare, $O)), '503 200',
	"during the move: shard 1's partitions answer 503, shard 0 serves");
# (3) copy: pg_dump -Fc of the one database, restored on B
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/s1.dump';
$A->command_ok([ 'pg_dump', '-Fc', '-h', $A->host, '-p', $A->port, '-d', 'syncular_s1', '-f', $dump ],
	'shard 1 dumped with pg_dump -Fc');
sql($B, 'postgres', 'CREATE DATABASE syncular_s1');
$B->command_ok([ 'pg_restore', '-h', $B->host, '-p', $B->port, '-d', 'syncular_s1', '--exit-on-error', $dump ],
	'shard 1 restored on B with pg_restore');
# (4) repoint the router; (5) retire the old copy
sql($A, 'syncular_router', docblock('repoint'));
sql($A, 'postgres', 'DROP DATABASE syncular_s1');
$shard[1] = $B;
my $after = handle($A, 'syncular_router', $mreq, $M);
ok($after ne '' && $after eq $before, 'shard 1 moved to B: its clients get the same bytes (same epoch, same commits)');
my $seq_before = sql($B, 'syncular_s1', q{SELECT max_commit_seq FROM syncular.partitions WHERE partition = :'m'}, m => $M);
$r = handle($A, 'syncular_router', mkreq(1, $M, 'mover', push_frames('mv-1', 't-mv', 'moved')), $M);
is(render(1, $r, '$.frames[*] ? (@.type == "PUSH_RESULT").commitSeq'), $seq_before + 1,
	"a push after the move continues the partition's log");

# restored from an older copy (the dump predates commit mv-1): the clients that saw mv-1 must
# not read a log that forgot it, so the operator rotates every partition's epoch before serving
my $seen = mkreq(1, $M, 'mover', $PULL);
sql($A, 'postgres', 'CREATE DATABASE syncular_s1_old');
$A->command_ok([ 'pg_restore', '-h', $A->host, '-p', $A->port, '-d', 'syncular_s1_old', '--exit-on-error', $dump ],
	'the older copy of shard 1 restored on A');
sql($A, 'syncular_s1_old', docblock('rotate'));
sql($A, 'syncular_router', q{
SELECT format('ALTER SERVER syncular OPTIONS (SET p1 %L)', :'hp' || ' dbname=syncular_s1_old') \gexec},
	hp => $hostport{a});
$r = handle($A, 'syncular_router', $seen, $M);
is(render(1, $r, '$.frames[0].resetRequired') . ' ' . render(1, $r, '$.frames.size()'), 'true 1',
	'restored from an older copy + rotate_log_epoch: the client gets a clean epoch reset');
# the restored database has the extension's DDL guard (CREATE EXTENSION of the restore makes its
# event triggers; pg_dump does not dump them), and the restore itself passed it
is(sql($A, 'syncular_s1_old', q{SELECT string_agg(evtname, ' ' ORDER BY evtname) FROM pg_event_trigger}),
	'syncular_guard_alter syncular_guard_drop', 'the restored shard has the DDL guard event triggers');
like(errs('syncular_s1_old', 'ALTER TABLE public.todos DROP COLUMN title'),
	qr/^55000 .*"reason": "ddl_outside_ensure_schema"/, 'the restored shard refuses DDL on a synced table');
# the older copy serves shard 1 from now on (on A)
my @serving = ([ $A, 'syncular_s0' ], [ $A, 'syncular_s1_old' ], [ $B, 'syncular_s2' ], [ $B, 'syncular_s3' ]);

# ------------------------------------------------------------------ 6. a bump with a checkpoint
my $C = partition_on(2);
my $C2 = partition_on(2, $C);
is(sql($A, 'syncular_router', q{
SELECT syncular.ensure_schema(:'ir'::jsonb, jsonb_build_array(jsonb_build_object('partition', :'c', 'name', 'notes_v2',
                              'schemaVersion', 2)), 'public') ->> 'action'}, ir => $IR_V2, c => $C),
	'migrated', 'v2 with a checkpoint through the router');
is(join(' ', map { sql(@{ $serving[$_] }, 'SELECT count(*) FROM syncular.sync_backfill_checkpoints') } (0, 2, 3, 1)),
	'0 1 0 0', "the checkpoint is installed on its partition's shard only (shards 0 2 3 1)");
is(join(' ', map { status(http($A, 'syncular_router', $bare, $_)) } ($C, $C2, $O)), '503 503 200',
	"during the backfill: shard 2's partitions refused (503), shard 0 serves");
$r = sql($A, 'syncular_router', q{
SELECT (syncular.claim_checkpoint(:'c', 'notes_v2', 2) ->> 'ownerEpoch') AS e \gset
SELECT syncular.source_coverage_seq(:'c', ARRAY['todos']) AS w \gset
SELECT syncular.advance_checkpoint(:'c', 'notes_v2', :e, :w, 0);
SELECT syncular.activate_checkpoint(:'c', 'notes_v2', :e, :w, ARRAY['todos']);}, c => $C);
is(squash($r), 't activated', 'claim, advance and activate through the router');
is(join(' ', map { status(http($A, 'syncular_router', $bare, $_)) } ($C, $C2, $O)), '200 200 200',
	'activated: shard 2 serves again');

# ------------------------------------------------------------------ 7. one shard refuses
(my $IR_V3 = $IR_V2) =~ s/"version": 2/"version": 3/;
$IR_V3 =~ s/("name": "notes", "type": "string", "nullable": true\})/$1, {"name": "tags", "type": "string", "nullable": true}/;
(my $IR_V3_OTHER = $IR_V3) =~ s/"tags"/"other"/;
sql($B, 'syncular_s3', q{SELECT syncular.ensure_schema(:'ir'::jsonb, '[]', 'public') ->> 'action'}, ir => $IR_V3_OTHER);
$r = errs('syncular_router', "SELECT syncular.ensure_schema('$IR_V3', '[]', 'public')");
$r =~ s/"details".*//;
is($r, '55000 {"code": "sync.storage.stored_layout_mismatch", ', "ensure_schema refused by shard 3: the shard's catalogue error");
for my $k (0, 2)
{
	is(sql(@{ $serving[$k] }, q{SELECT schema_version || ' ' || (SELECT count(*) FROM pg_attribute
 WHERE attrelid = 'public.todos'::regclass AND attname = 'tags') FROM syncular.sync_schema_meta}),
		'2 0', "refused everywhere: shard $k still at version 2, no column tags");
}
is(sql($A, 'syncular_s1_old', 'SELECT schema_version FROM syncular.sync_schema_meta'), 2,
	'refused everywhere: the moved shard 1 too');

done_testing();
