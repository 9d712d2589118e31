#!/usr/bin/env bash
# The main job: installs what is missing, builds syncular, starts a throwaway local cluster
# (scripts/pgenv.sh: an installation staged from this tree, 127.0.0.1 / unix socket only) and
# serves real sync rounds:
# demo/demo.sh prints a readable transcript of every round.  The cluster preloads the library
# (shared_preload_libraries = syncular) so that the demo ends with the activity counters
# (syncular.stats, docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh
. scripts/shared-env.sh
export DEMO_DIR=$root/demo
bash scripts/pgenv.sh -c shared_preload_libraries=syncular -- bash "$root/demo/run.sh"
