#!/usr/bin/env bash
# Runs every test suite, each against servers of its own started from ONE installation staged
# from this tree (scripts/stage.sh; never what an earlier `make install` left in the system
# directories): the setup's upgrade guard (test/setup), the SQL sources (`make sql-check`: the
# released scripts built byte-identical, the development delta complete), the standalone codec conformance suite,
# the codec fuzz smoke, installability (test/install), pg_regress and the isolation specs
# (`make installcheck`), pgTAP (`pg_prove`), the Yjs merge check, the gateway end to end, every
# SQL block of the docs (check-docs.sh), the call-cycle and storage-layer checks
# (scripts/check-cycles.py, scripts/check-storage-sql.py), and the
# TAP tests on PostgreSQL::Test::Cluster (test/t: the multi-node test with two clusters and a
# standby, about two minutes; the counter test and the wake-up ring test, preloaded nodes).
# Every suite runs even when an earlier one fails.  Each suite's output goes to a log (the
# folder is printed); the console gets one line per suite and, for a failing suite, what
# failed.  The last line counts every case of every suite (scripts/tally.awk):
#   N passed, M failed, K skipped
# and the exit status is 1 when M > 0.  Golden vectors are read from ../shared/vectors when
# present (SYNCULAR_VECTORS overrides); without them the parts that need them skip and say so.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh || exit 1

. scripts/shared-env.sh

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG SYNCULAR_STAGE
SYNCULAR_STAGE=$(mktemp -d /tmp/syncular-stage.XXXXXX)
logs=$(mktemp -d /tmp/syncular-test-logs.XXXXXX)
chmod 755 "$logs"
tap_copy=
trap 'rm -rf "$SYNCULAR_STAGE" ${syncular_stage:+"$syncular_stage"} ${tap_copy:+"$tap_copy"}' EXIT
echo "==> staging the installation of this tree in $SYNCULAR_STAGE (suite logs: $logs)"
bash scripts/stage.sh "$SYNCULAR_STAGE" || exit 1

total_p=0 total_f=0 total_s=0
# suite NAME COMMAND...: runs COMMAND with its output in $logs/NAME.log, counts its cases and
# prints them; a command that fails without a failing case counted is one failed case.
suite() {
  local name=$1 log="$logs/$1.log" start rc counts p f s
  shift
  start=$(date +%s)
  printf '==> %-22s ' "$name"
  "$@" > "$log" 2>&1
  rc=$?
  counts=$(awk -f scripts/tally.awk "$log")
  read -r p f s <<< "$counts"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "not ok - $name: exited with status $rc and no failing case of its own" >> "$log"
  fi
  printf '%4d passed, %d failed, %d skipped  (%ss)\n' "$p" "$f" "$s" "$(( $(date +%s) - start ))"
  grep -E '^skip - |# SKIP|# skip|: no manifest, skipped$' "$log" | sed 's/^/    /'
  if [ "$f" -gt 0 ]; then
    echo "    --- $name failed; from $log:"
    { grep -E '^not ok|FAILED|failed' "$log"; tail -n 40 "$log"; } | awk '!seen[$0]++' | sed 's/^/    /'
  fi
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
}
pgenv() { bash scripts/pgenv.sh -- "$@"; }

suite setup-guard bash test/setup/run.sh

# the scripts built from the SQL sources: released ones byte-identical (upgrade/released.sha256)
suite sql-sources make -s sql-check PG_CONFIG="$PG_CONFIG"

suite codec make -s -C test/codec check VECTORS="$SYNCULAR_VECTORS"

# no call cycle between files of src/ (with src/codec/), none but the listed known ones in gateway/;
# no file of src/ outside the storage layer names a sync_* catalog table in a string literal
layers() {
  local rc=0
  python3 scripts/check-cycles.py scripts/cycles-allowed.txt || rc=1
  python3 scripts/check-storage-sql.py || rc=1
  return $rc
}
suite cycles layers

# The codec fuzz smoke needs clang with libFuzzer.
fuzz() {
  local probe rc=0
  probe=$(mktemp -d)
  if command -v clang >/dev/null &&
     echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' |
       clang -x c -fsanitize=fuzzer,address,undefined -o "$probe/probe" - 2>/dev/null; then
    make -s -C test/fuzz run FUZZ_SECONDS="${FUZZ_SECONDS:-10}" WORK="$probe/work" || rc=1
  else
    echo "skip - codec fuzz smoke: clang with libFuzzer is not installed"
  fi
  rm -rf "$probe"
  return $rc
}
suite fuzz-smoke fuzz

suite install pgenv bash test/install/run.sh

# pg_regress and the isolation specs as two runs, so a failing test does not hide the specs;
# regression.diffs goes into the log
regress() {
  make -s installcheck PG_CONFIG="$PG_CONFIG" ISOLATION= && return 0
  cat regression.diffs 2>/dev/null
  return 1
}
isolation() {
  make -s installcheck PG_CONFIG="$PG_CONFIG" REGRESS= && return 0
  cat output_iso/regression.diffs 2>/dev/null
  return 1
}
suite pg_regress pgenv bash -c "$(declare -f regress); regress"
if grep -q 'skipping codec_vectors$' results/codec_vectors.out 2>/dev/null; then
  # the test passed by skipping: count it as a skip, not a pass
  echo "    skip - pg_regress codec_vectors: golden vectors absent (no ../shared/vectors beside this clone)"
  total_p=$((total_p - 1)); total_s=$((total_s + 1))
fi
suite isolation pgenv bash -c "$(declare -f isolation); isolation"

# the golden pull and push response corpora (md5 per response, recorded from 0.5.0)
suite corpus pgenv bash test/corpus/check.sh

suite pgtap pgenv bash -c 'createdb syncular_tap && PGDATABASE=syncular_tap pg_prove -v --ext .sql -r test/pgtap'

# The yjs-doc merger is also checked against the Yjs library (npm `yjs`, test/crdt/package.json)
# when node is installed; npm installs the pinned package once if it is missing.
if command -v node >/dev/null && command -v npm >/dev/null && [ ! -d test/crdt/node_modules/yjs ]; then
  (cd test/crdt && npm ci --no-audit --no-fund >/dev/null 2>&1) || true
fi
yjs() {
  if command -v node >/dev/null && [ -d test/crdt/node_modules/yjs ]; then
    createdb syncular_crdt && psql -X -q -d syncular_crdt -c 'CREATE EXTENSION syncular' &&
      PGDATABASE=syncular_crdt node test/crdt/yjs_merge.test.mjs
  else
    echo 'skip - yjs-doc merger against the Yjs library: needs node and test/crdt/node_modules/yjs (cd test/crdt && npm ci)'
  fi
}
suite yjs-merge pgenv bash -c "$(declare -f yjs); yjs"

suite gateway pgenv make -s gateway-check PG_CONFIG="$PG_CONFIG"

suite docs pgenv bash scripts/check-docs.sh

# The TAP tests on PostgreSQL::Test::Cluster (test/t/*.pl, `make prove_installcheck`), one suite
# each: nodes of their own served from the staged installation.  They run as user postgres when
# this runs as root, and that user must read the tree: a clone in a folder it cannot enter (a
# mktemp -d is mode 700) runs them from a readable copy in /tmp (built files and their times kept,
# so nothing is rebuilt there).
tap_root=$root
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -r "$root/test/perl/SyncularTest.pm"; then
  tap_copy=$(mktemp -d /tmp/syncular-tap.XXXXXX)
  chmod 755 "$tap_copy"
  tar -C "$root" --exclude=./.git --exclude=./tmp_check -cf - . | tar -C "$tap_copy" -xf -
  chmod -R a+rX "$tap_copy"
  tap_root=$tap_copy
  echo "==> (user postgres cannot read $root: the TAP tests run from a copy in $tap_copy)"
fi
tap() {
  timeout "$1" make -s -C "$tap_root" prove_installcheck PG_CONFIG="$PG_CONFIG" PROVE_FLAGS=-v \
    PROVE_TESTS="$2"
}
suite multi-node tap 400 test/t/001_multi_node.pl
suite counters tap 180 test/t/010_counters.pl
suite wakeup-ring tap 400 test/t/020_wakeup_ring.pl

echo "==> summary (logs: $logs)"
sed -n 's/^# vectors: /codec vectors: /p' "$logs/codec.log"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
