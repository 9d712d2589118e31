#!/usr/bin/env bash
# Stages an installation for one test or demo run:  bash scripts/stage.sh DIR
# DIR gets a copy of the PostgreSQL installation of $PG_CONFIG (its bindir, pkglibdir and
# sharedir at the same paths below DIR, so the copied server finds its libraries and extension
# files relative to its own binary, as PostgreSQL's own `make check` temporary install does),
# with every syncular file an earlier `make install` may have left there removed, and then this
# tree's `make install DESTDIR=DIR` on top.  A file the Makefiles forget to install is therefore
# missing in every run, on every machine.  The tree must be built (`make`, `make gateway`).
# Prints nothing on success; the servers are started from "$DIR$($PG_CONFIG --bindir)".
set -euo pipefail
cd "$(dirname "$0")/.."
stage=${1:?usage: scripts/stage.sh DIR}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
mkdir -p "$stage"
for what in bindir pkglibdir sharedir; do
  dir=$("$PG_CONFIG" --"$what")
  rm -rf "${stage:?}$dir"
  mkdir -p "$stage$(dirname "$dir")"
  cp -a "$dir" "$stage$dir"
done
bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
rm -rf "$stage$bindir"/syncular-gateway* "$stage$pkglibdir"/syncular*.so \
  "$stage$pkglibdir"/bitcode/syncular* "$stage$sharedir"/extension/syncular*
make -s install DESTDIR="$stage" PG_CONFIG="$PG_CONFIG" >/dev/null
# the server runs as user postgres: every folder on the way must be enterable
chmod -R a+rX "$stage"
d=$stage
while [ "$d" != / ] && [ "$d" != . ]; do chmod a+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
