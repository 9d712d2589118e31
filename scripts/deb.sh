#!/usr/bin/env bash
# Builds the Debian packages (debian/: postgresql-15-syncular, syncular-gateway and their
# -dbgsym packages) from a clean copy of the tree, with dpkg-buildpackage -us -uc -b:
#   bash scripts/deb.sh OUTDIR              the committed tree (git archive HEAD)
#   bash scripts/deb.sh --worktree OUTDIR   the files of the worktree as they are (tracked and
#                                           untracked ones, not the ignored build outputs)
# The copy is made in a temporary directory, so nothing is built in or written to this tree;
# OUTDIR gets the .deb, .buildinfo and .changes files.  Needs the Build-Depends of
# debian/control (scripts/test-packages.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
from=head
if [ "${1:-}" = --worktree ]; then from=worktree; shift; fi
out=${1:?usage: scripts/deb.sh [--worktree] OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d /tmp/syncular-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/syncular
mkdir "$src"
if [ "$from" = head ]; then
  git archive HEAD | tar -x -C "$src"
else
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
    tar -c --null -T - | tar -x -C "$src"
fi

echo "==> dpkg-buildpackage in $src"
log=$work/build.log
if ! (cd "$src" && DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=2}" dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "dpkg-buildpackage FAILED (log above)" >&2
  exit 1
fi
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
ls -l "$out"/*.deb
