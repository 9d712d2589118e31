#!/usr/bin/env bash
# Runs every test: the standalone codec conformance suite, pg_regress and isolation specs
# (`make installcheck`) and pgTAP (`pg_prove`), against a throwaway cluster made by pg_virtualenv.
# Golden vectors are read from ../shared/vectors when present (SYNCULAR_VECTORS overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh

. scripts/shared-env.sh

echo "==> codec conformance (standalone)"
make -s -C test/codec check VECTORS="$SYNCULAR_VECTORS"

# The yjs-doc merger is also checked against the Yjs library (npm `yjs`, test/crdt/package.json)
# when node is installed; npm installs the pinned package once if it is missing.
if command -v node >/dev/null && command -v npm >/dev/null && [ ! -d test/crdt/node_modules/yjs ]; then
  (cd test/crdt && npm ci --no-audit --no-fund >/dev/null 2>&1) || true
fi

echo "==> pg_regress, isolation, pgTAP and the Yjs merge test on a throwaway cluster"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pg_virtualenv -t -c "-p $(bash scripts/free-port.sh)" -v 15 bash -c "
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
    echo 'skip - yjs-doc merger against the Yjs library: needs node and test/crdt/node_modules/yjs (cd test/crdt && npm ci)'
  fi
  exit \$status
"
