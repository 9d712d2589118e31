#!/usr/bin/env bash
# Benchmarks syncular against a plain-SQL baseline measured in the same run, on a throwaway
# cluster (syncular preloaded: the stats counters and the commit wake-up ring exist).  Prints
# ratios; never fails on a time.  Usage: bash bench/run.sh [runs-per-case]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
bash scripts/setup.sh >/dev/null
pg_virtualenv -t -o shared_preload_libraries=pg_stat_statements,syncular -c "-p $(bash scripts/free-port.sh)" -v 15 \
  bash bench/cases.sh "$runs"
