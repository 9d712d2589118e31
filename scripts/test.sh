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

echo "==> pg_regress, isolation and pgTAP on a throwaway cluster"
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
  echo '==> syncular-gateway end to end (sanitizer build, gateways on 127.0.0.1)'
  make -s gateway-check PG_CONFIG=$PG_CONFIG || status=1
  exit \$status
"
