#!/usr/bin/env bash
# Runs every test: the standalone codec conformance suite, pg_regress and isolation specs
# (`make installcheck`), pgTAP (`pg_prove`) and every SQL block of the docs (check-docs.sh),
# against a throwaway cluster (scripts/pgenv.sh), then the multi-node test (test/scale/run.sh:
# clusters of its own, about a minute) and the counter test (test/stats/run.sh: a preloaded
# cluster of its own, seconds) and the wake-up ring test (test/wakeup/run.sh: the same, plus the
# realtime gateway tests in ring mode); ends with a summary that counts the skips.
# Golden vectors are read from ../shared/vectors when present (SYNCULAR_VECTORS overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh

. scripts/shared-env.sh

# Every server of this run (each suite's clusters, the gateway's database) loads the extension,
# the router and the gateway from one installation staged from this tree (scripts/stage.sh),
# never from what an earlier `make install` left in the system directories.
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export SYNCULAR_STAGE
SYNCULAR_STAGE=$(mktemp -d /tmp/syncular-stage.XXXXXX)
trap 'rm -rf "$SYNCULAR_STAGE" ${syncular_stage:+"$syncular_stage"}' EXIT
echo "==> staging the installation of this tree in $SYNCULAR_STAGE"
PG_CONFIG=$PG_CONFIG bash scripts/stage.sh "$SYNCULAR_STAGE"

# every part that is skipped says so on a line of its own, collected here for the summary
skip_log=$(mktemp /tmp/syncular-skips.XXXXXX)
chmod a+rw "$skip_log"

echo "==> codec conformance (standalone)"
codec_log=$(mktemp /tmp/syncular-codec.XXXXXX)
make -s -C test/codec check VECTORS="$SYNCULAR_VECTORS" | tee "$codec_log"

# The yjs-doc merger is also checked against the Yjs library (npm `yjs`, test/crdt/package.json)
# when node is installed; npm installs the pinned package once if it is missing.
if command -v node >/dev/null && command -v npm >/dev/null && [ ! -d test/crdt/node_modules/yjs ]; then
  (cd test/crdt && npm ci --no-audit --no-fund >/dev/null 2>&1) || true
fi

echo "==> codec fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-10}s per target)"
fuzz_probe=$(mktemp -d)
if command -v clang >/dev/null &&
   echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' |
     clang -x c -fsanitize=fuzzer,address,undefined -o "$fuzz_probe/probe" - 2>/dev/null; then
  make -s -C test/fuzz run FUZZ_SECONDS="${FUZZ_SECONDS:-10}" WORK="$fuzz_probe/work"
else
  echo "skip - codec fuzz smoke: clang with libFuzzer is not installed" | tee -a "$skip_log"
fi
rm -rf "$fuzz_probe"

echo "==> pg_regress, isolation, pgTAP, the Yjs merge test, the gateway and the doc blocks on a throwaway cluster"
docs_log=$(mktemp /tmp/syncular-docs.XXXXXX)
chmod a+rw "$docs_log"
bash scripts/pgenv.sh -- bash -c "
  set -e
  status=0
  make -s installcheck PG_CONFIG=$PG_CONFIG || status=1
  if [ \$status -ne 0 ]; then
    for f in regression.diffs output_iso/regression.diffs; do [ -f \$f ] && cat \$f; done
  fi
  createdb syncular_tap
  PGDATABASE=syncular_tap pg_prove --ext .sql -r test/pgtap || status=1
  if command -v node >/dev/null && [ -d test/crdt/node_modules/yjs ]; then
    createdb syncular_crdt && psql -X -q -d syncular_crdt -c 'CREATE EXTENSION syncular' &&
      PGDATABASE=syncular_crdt node test/crdt/yjs_merge.test.mjs || status=1
  else
    echo 'skip - yjs-doc merger against the Yjs library: needs node and test/crdt/node_modules/yjs (cd test/crdt && npm ci)' | tee -a $skip_log
  fi
  echo '==> syncular-gateway end to end (sanitizer build, gateways on 127.0.0.1)'
  make -s gateway-check PG_CONFIG=$PG_CONFIG || status=1
  echo '==> every sql block of README.md and docs/*.md (scripts/check-docs.sh)'
  bash scripts/check-docs.sh > $docs_log || status=1
  grep -v ': ok\$' $docs_log || true
  exit \$status
"

echo "==> multi-node: PL/Proxy router over four shards on two clusters, hot standby, shard move"
PG_CONFIG=$PG_CONFIG timeout 300 bash test/scale/run.sh

echo "==> activity counters: pg_regress in a cluster of its own with shared_preload_libraries = syncular"
PG_CONFIG=$PG_CONFIG timeout 180 bash test/stats/run.sh

echo "==> commit wake-up ring: pg_regress, blocking checks and the realtime gateway tests in ring mode (shared_preload_libraries = syncular)"
wake_log=$(mktemp /tmp/syncular-wakeup-log.XXXXXX)
PG_CONFIG=$PG_CONFIG timeout 300 bash test/wakeup/run.sh | tee "$wake_log"
grep '^skip' "$wake_log" >> "$skip_log" || true
rm -f "$wake_log"

# The closing lines: what ran and what was skipped (a skip is never reported as a pass).
echo "==> summary"
sed -n 's/^# vectors: /codec vectors: /p' "$codec_log"
skips=$(grep -c -e ': no manifest, skipped$' -e '^1\.\.0 # SKIP' "$codec_log" || true)
if grep -qx 'golden vectors not found (no ../shared/vectors beside this clone, SYNCULAR_VECTORS unset); skipping codec_vectors' results/codec_vectors.out 2>/dev/null; then
  echo "pg_regress codec_vectors: SKIPPED (golden vectors absent)"
  skips=$((skips + 1))
fi
docs_skipped=$(sed -n 's/^doc blocks: .*, \([0-9]*\) skipped, .*/\1/p' "$docs_log")
sed -n 's/^doc blocks: /doc blocks: /p' "$docs_log"
if [ "${docs_skipped:-0}" -gt 0 ]; then skips=$((skips + 1)); fi
cat "$skip_log"
skips=$((skips + $(wc -l < "$skip_log")))
rm -f "$codec_log" "$docs_log" "$skip_log"
echo "all suites passed; $skips skipped part(s) listed above"
