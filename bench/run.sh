#!/usr/bin/env bash
# Benchmarks syncular against a plain-SQL baseline measured in the same run, on a throwaway
# cluster served from an installation staged from this tree (scripts/pgenv.sh: never from files
# an earlier `make install` left behind), syncular and pg_stat_statements preloaded (the stats
# counters and the commit wake-up ring exist), with fsync on as in production (both sides pay
# the WAL flush; BENCH_FSYNC=off measures the CPU side alone).  Prints ratios; never fails on a
# time.
# Usage: bash bench/run.sh [runs-per-case]   (BENCH_ONLY as for bench/cases.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bash scripts/setup.sh >/dev/null
make -s PG_CONFIG="$PG_CONFIG"
make -s gateway PG_CONFIG="$PG_CONFIG"
bash scripts/pgenv.sh -c shared_preload_libraries=pg_stat_statements,syncular -c "fsync=${BENCH_FSYNC:-on}" -- \
  bash bench/cases.sh "$runs"
