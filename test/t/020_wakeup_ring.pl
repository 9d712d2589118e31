# Commit wake-up ring test (src/wakeup.c, docs/realtime.md "Commit wake-ups"): the ring exists
# only when the library is in shared_preload_libraries, which the main test cluster deliberately
# does not set (sql/wakeup_not_preloaded checks that answer there).  A node of its own with
# shared_preload_libraries = 'syncular' runs the pg_regress test wakeup_ring (test/t/regress),
# then the blocking checks (a waiter wakes on a commit, the timeout, pg_cancel_backend), NOTIFY
# per mode, `auto` across ALTER EXTENSION UPDATE from 0.2.0, and the realtime gateway tests in
# ring mode (test/gateway/run.py, against the sanitizer build; a skip when it is not built), with
# pg_stat_statements preloaded for the test of the gateway's prepared statements.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncularTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = syncular_node('wakeup',
	conf => "shared_preload_libraries = 'syncular,pg_stat_statements'\npg_stat_statements.track_planning = on\n"
	  . "max_prepared_transactions = 2\nmax_connections = 60\n");
$node->start;
regress($node, 'wakeup_ring');

my $db = 'syncular_t_wakeup_run';
sql($node, 'postgres', "CREATE DATABASE $db");
sql($node, $db, repo_file('bench/setup.sql'));
sql($node, $db, q{SELECT bench.epoch('p1')});
assert_staged($node, $db);
my @psql = ($node->installed_command('psql'), '-X', '-q', '-A', '-t');
sub head { return sql($node, $db, 'SELECT position FROM syncular.wait_commits(NULL, 0)'); }
# bg(sql): a psql session running the statement in the background; finish with ->finish
sub bg
{
	my ($sql, $out) = @_;
	return IPC::Run::start([ @psql, '-d', $node->connstr($db), '-c', $sql ], '<', \undef, '>&', $out);
}

# a sleeping waiter wakes when a commit becomes visible, not when the timeout ends
my $h = head();
my $t0 = time;
my $got = '';
my $waiter = bg("SELECT kind || ' ' || coalesce(partition, '') || ' ' || coalesce(commit_seq::text, '')
                 FROM syncular.wait_commits($h, 20000)", \$got);
sleep 0.5;
sql($node, $db, q{SELECT bench.push('p1', 1)});
$waiter->finish;
my $el = int((time - $t0) * 1000);
$got = squash($got);
ok($got =~ /^commit p1 \d+ head\b/ && $el < 10000, "a waiter wakes on a commit after $el ms: $got");

# the timeout: an empty answer (just the head) after about timeout_ms
$h = head();
$t0 = time;
$got = sql($node, $db, "SELECT kind FROM syncular.wait_commits($h, 1500)");
$el = int((time - $t0) * 1000);
ok($got eq 'head' && $el >= 1400 && $el < 10000, "the timeout returns only the head after $el ms (1500 asked): $got");

# pg_cancel_backend ends the sleep with 57014
$h = head();
$t0 = time;
my $cancelled = '';
$waiter = bg("SELECT kind FROM syncular.wait_commits($h, 60000)", \$cancelled);
for (1 .. 50)
{
	last if sql($node, 'postgres', q{SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
 WHERE query LIKE '%wait_commits(%60000)%' AND pid <> pg_backend_pid()}) eq '1';
	sleep 0.1;
}
my $finished_ok = eval { $waiter->finish };
$el = int((time - $t0) * 1000);
ok($cancelled =~ /canceling statement due to user request/ && !$finished_ok && $el < 10000,
	"pg_cancel_backend ends a sleeping wait_commits after $el ms: " . squash($cancelled));

# NOTIFY per mode: notify and both send it, ring (the default here) does not
sub notifies    # notifies(db, statements): NOTIFYs syncular_commit a listener in the session receives
{
	my ($d, @stmts) = @_;
	my $out = '';
	IPC::Run::run([ @psql, '-d', $node->connstr($d) ], '<', \join("\n", 'LISTEN syncular_commit;', @stmts, 'SELECT 1;', ''),
		'>&', \$out);
	my $n = () = $out =~ /Asynchronous notification "syncular_commit" with payload "[^"]*"/g;
	return $n;
}
for my $mode (qw(notify both ring))
{
	my $want = $mode eq 'ring' ? 0 : 1;
	is(notifies($db, "SET syncular.commit_wakeup = '$mode';", q{SELECT bench.push('p1', 1);}), $want,
		"commit_wakeup = $mode: $want NOTIFY syncular_commit");
}

# auto keeps NOTIFY in a database whose syncular predates the ring (0.2.0: no wait_commits, and
# its gateways only LISTEN) and takes the ring once ALTER EXTENSION UPDATE brings wait_commits
my $old = 'syncular_t_wakeup_old';
sql($node, 'postgres', "CREATE DATABASE $old");
sql($node, $old, q{
CREATE EXTENSION syncular VERSION '0.2.0';
SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "todos", "primaryKey": "id",
  "columns": [{"name": "id", "type": "string", "nullable": false},
              {"name": "list_id", "type": "string", "nullable": false}],
  "scopes": ["list:{list_id}"]}]}'::jsonb, '[]'::jsonb, 'public');
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');});
sub old_push    # old_push(clientCommitId): NOTIFYs a listener in the pushing session receives
{
	my ($cc) = @_;
	return notifies($old, qq{SELECT r ->> 'status' FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1',
  '[{"clientCommitId": "$cc", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "$cc", "list_id": "l1"}}]}]')) r;});
}
my ($extversion) = repo_file('Makefile') =~ /^EXTVERSION\s*=\s*(\S+)/m;
$got = sql($node, $old, 'SHOW syncular.commit_wakeup') . ' ' . old_push('a');
sql($node, $old, 'ALTER EXTENSION syncular UPDATE');
$got .= ' | ' . sql($node, $old, q{SELECT extversion FROM pg_extension WHERE extname = 'syncular'})
  . ' ' . sql($node, $old, 'SELECT syncular.commit_wakeup_mode()') . ' ' . old_push('b');
is($got, "auto 1 | $extversion ring 0", 'auto under syncular 0.2.0 keeps NOTIFY; after ALTER EXTENSION UPDATE the ring');
sql($node, 'postgres', "DROP DATABASE $old");

# the realtime gateway tests in ring mode (the main run covers NOTIFY mode)
my $gwbin = $ENV{SYNCULAR_GATEWAY_BIN} // 'gateway/syncular-gateway-asan';
SKIP:
{
	skip("the realtime gateway tests in ring mode: $gwbin is not built (make gateway-asan)", 1) unless -x $gwbin;
	my $mode = sql($node, $db, 'SELECT syncular.commit_wakeup_mode()');
	is($mode, 'ring', 'the realtime gateway tests run against the ring (commit_wakeup_mode)');
	my $tmp = "$PostgreSQL::Test::Utils::tmp_check/gateway";
	mkdir $tmp;
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{GW_SUITES} = 'realtime';
	local $ENV{SYNCULAR_GATEWAY_BIN} = $gwbin;
	local $ENV{TMPDIR} = $tmp;
	run_tap_lines('gateway realtime, ring mode', '/usr/bin/python3', 'test/gateway/run.py');
}

done_testing();
