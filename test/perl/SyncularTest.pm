# Shared by the TAP tests of test/t (run by `make prove_installcheck`, see the Makefile): nodes
# of PostgreSQL::Test::Cluster served from the installation STAGED from this tree
# (scripts/stage.sh), never from what an earlier `make install` left in the system directories,
# and the check that proves it.
package SyncularTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(syncular_node assert_staged sql regress squash repo_file run_tap_lines);

# SYNCULAR_BIN is the staged bindir ($SYNCULAR_STAGE/usr/lib/postgresql/15/bin), set by the
# Makefile's prove_installcheck; the Cluster's install_path is its parent, so initdb, pg_ctl,
# psql, pg_dump ... come from there (PostgreSQL::Test::Cluster::installed_command).
my $bin = $ENV{SYNCULAR_BIN}
  or BAIL_OUT('SYNCULAR_BIN is not set: run the TAP tests with `make prove_installcheck`');
my $install = dirname($bin);

# The server log of every statement is noise here; notices would fill safe_psql's stderr.
$ENV{PGOPTIONS} = '-c client_min_messages=warning';

# syncular_node(name, init params..., conf => 'extra postgresql.conf lines'): a new node,
# initialized (not started).  The conf lines come after the Cluster's own (they win).
sub syncular_node
{
	my ($name, %params) = @_;
	my $conf = delete $params{conf};
	my $node = PostgreSQL::Test::Cluster->new($name, install_path => $install);
	$node->init(%params);
	$node->append_conf('postgresql.conf', $conf) if $conf;
	return $node;
}

# assert_staged(node, db): two assertions, on a started node with syncular created in db: the
# server's BINDIR (pg_config, computed from the running binary's own path) and the file of the
# syncular library mapped into the backend are the staged ones, and the extension's version is
# the tree's EXTVERSION.
sub assert_staged
{
	my ($node, $db) = @_;
	my ($extversion) = repo_file('Makefile') =~ /^EXTVERSION\s*=\s*(\S+)/m;
	my $r = sql($node, $db, q{
SELECT syncular.commit_wakeup_mode() IS NOT NULL;  -- loads the library
SELECT (SELECT setting FROM pg_config WHERE name = 'BINDIR') || ' '
       || (SELECT string_agg(DISTINCT substring(l from '(/\S*/syncular\.so)$'), ',')
             FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') l
            WHERE l ~ '/syncular\.so$') || ' '
       || (SELECT extversion FROM pg_extension WHERE extname = 'syncular')});
	$r =~ s/^t\n//;
	my ($bindir, $so, $version) = split / /, $r;
	is($bindir, $bin, $node->name . ': the server runs the staged binaries');
	is("$so $version", dirname($bin) . "/lib/syncular.so $extversion",
		$node->name . ': the backend loaded the staged syncular.so, extension version ' . $extversion);
}

# sql(node, db, text, var => value...): the unaligned, tuples-only result (psql -XAtq, the
# text on stdin, ON_ERROR_STOP: a failing statement fails the test), psql variables set with -v.
sub sql
{
	my ($node, $db, $text, %vars) = @_;
	my @v = map { ('-v', "$_=$vars{$_}") } sort keys %vars;
	return $node->safe_psql($db, $text, extra_params => \@v);
}

# regress(node, test...): one case: the pg_regress tests of test/t/regress (sql/NAME.sql against
# expected/NAME.out) run on the node; on a difference the diffs go to the TAP output and the
# results stay in tmp_check.
sub regress
{
	my ($node, @tests) = @_;
	my $out = "$PostgreSQL::Test::Utils::tmp_check/regress_" . $node->name;
	my $ok = PostgreSQL::Test::Utils::run_log(
		[
			$ENV{PG_REGRESS}, "--bindir=$bin", '--inputdir=test/t/regress',
			"--outputdir=$out", '--host=' . $node->host, '--port=' . $node->port, @tests
		]);
	diag(slurp_file("$out/regression.diffs")) if !$ok && -e "$out/regression.diffs";
	ok($ok, "pg_regress " . join(' ', @tests) . ' (test/t/regress)');
}

# squash(text): whitespace runs as one space (the shell's `echo $r`)
sub squash
{
	my ($s) = @_;
	$s =~ s/\s+/ /g;
	$s =~ s/^ | $//g;
	return $s;
}

# repo_file(path): a file of the tree (the tests run from its root)
sub repo_file
{
	return PostgreSQL::Test::Utils::slurp_file($_[0]);
}

# run_tap_lines(description, command...): runs a helper that prints TAP ("ok [N] - x", "not ok
# [N] - x", "skip - x") and re-reports each of its cases as a case of this test; the helper's
# exit status is one more case.  Its other output goes to this test's log.
sub run_tap_lines
{
	my ($what, @cmd) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^ok(?: \d+)? - (.*)/) { pass("$what: $1"); }
		elsif ($line =~ /^not ok(?: \d+)? - (.*)/) { fail("$what: $1"); }
		elsif ($line =~ /^skip - (.*)/) { SKIP: { skip("$what: $1", 1); } }
		else { note($line); }
	}
	diag($err) if $err ne '' && !$ok;
	ok($ok, "$what: exited with status 0");
}

1;
