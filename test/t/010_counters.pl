# Counter test (docs/operations.md): the activity counters exist only when the library is in
# shared_preload_libraries, which the main test cluster deliberately does not set (its
# stats_not_preloaded test checks the "not preloaded" answer there).  A node of its own with
# shared_preload_libraries = 'syncular' runs the pg_regress test stats_counters (test/t/regress),
# then four concurrent pgbench clients whose every round must be counted exactly once.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncularTest;
use Test::More;

my $node = syncular_node('stats', conf => "shared_preload_libraries = 'syncular'\n");
$node->start;
sql($node, 'postgres', 'CREATE DATABASE syncular_t_stats_staged');
sql($node, 'syncular_t_stats_staged', 'CREATE EXTENSION syncular');
assert_staged($node, 'syncular_t_stats_staged');

regress($node, 'stats_counters');

# Concurrency: four pgbench clients push 100 one-operation commits each into 16 partitions (one
# round per transaction, log epochs acquired beforehand by bench/setup.sql); every round and
# commit is counted exactly once, whatever the interleaving.
my $db = 'syncular_t_stats_conc';
sql($node, 'postgres', "CREATE DATABASE $db");
sql($node, $db, repo_file('bench/setup.sql'));
sql($node, $db, 'SELECT syncular.stats_reset()');
my $script = "$PostgreSQL::Test::Utils::tmp_check/push.sql";
PostgreSQL::Test::Utils::append_to_file($script, "\\set p random(1, 16)\nSELECT bench.push('p' || :p, 1);\n");
$node->command_ok([ 'pgbench', '-n', '-t', '100', '-c', '4', '-j', '4', '-h', $node->host, '-p', $node->port,
		'-f', $script, $db ], 'pgbench: 4 clients x 100 push rounds');
is(sql($node, $db, q{
SELECT rounds_ok || ' ' || rounds_refused || ' ' || push_commits_applied || ' ' || push_operations
  || ' ' || (SELECT sum(x) FROM unnest(push_time_buckets) x) || ' ' || (SELECT push_operations FROM syncular.stats_tables t WHERE t.dbid = s.dbid)
  FROM syncular.stats s WHERE datname = current_database()}),
	'400 0 400 400 400 400',
	"4 concurrent clients x 100 push rounds: rounds, commits, operations, push phases and the table's operations all 400");

done_testing();
