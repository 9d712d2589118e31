#!/usr/bin/env bash
# CRDT merge throughput (bench/crdt_merge.sql) on a throwaway cluster: merges/s of the built-in
# yjs-doc merger for 1 kB and 100 kB documents next to a bytea concatenation baseline measured
# in the same run.  Prints ratios; never fails on a time.
# Usage: bash bench/crdt_merge.sh [seconds-per-case]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
bash scripts/setup.sh >/dev/null
pg_virtualenv -t -c "-p $(bash scripts/free-port.sh)" -v 15 \
  psql -X -v ON_ERROR_STOP=1 -v secs="$secs" -f bench/crdt_merge.sql
