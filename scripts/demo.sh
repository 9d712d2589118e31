#!/usr/bin/env bash
# The main job: installs what is missing, builds and installs syncular, starts a throwaway
# local cluster (pg_virtualenv, 127.0.0.1 / unix socket only) and serves real sync rounds:
# demo/demo.sh prints a readable transcript of every round.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh
export SYNCULAR_VECTORS=${SYNCULAR_VECTORS:-$root/../shared/vectors}
export SYNCULAR_IR=${SYNCULAR_IR:-$root/../shared/ir}
[ -d "$SYNCULAR_VECTORS" ] && SYNCULAR_VECTORS=$(cd "$SYNCULAR_VECTORS" && pwd) || echo "(../shared/vectors absent: the demo builds its own requests)"
[ -d "$SYNCULAR_IR" ] && SYNCULAR_IR=$(cd "$SYNCULAR_IR" && pwd) || unset SYNCULAR_IR
export DEMO_DIR=$root/demo
pg_virtualenv -t -c "-p $(bash scripts/free-port.sh)" -v 15 bash "$root/demo/run.sh"
