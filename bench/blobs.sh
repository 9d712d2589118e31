#!/usr/bin/env bash
# Blob store throughput next to plain bytea, same run (bench/blobs.sql; numbers in bench/README.md).
# Usage: against a server where syncular is installed, with the libpq environment set (PGHOST,
# PGPORT, PGUSER as a superuser):  bash bench/blobs.sh     or, on a throwaway cluster after
# make install:  pg_virtualenv -t -v 15 bash bench/blobs.sh.   Never fails on a time.
set -euo pipefail
cd "$(dirname "$0")/.."
db=syncular_bench_blobs_$$
psql -X -q -d postgres -c "CREATE DATABASE $db"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS '"$db"'" >/dev/null 2>&1 || true' EXIT
psql -X -q -d "$db" -f bench/blobs.sql
