#!/usr/bin/env bash
# Installs what is missing (Debian packages), then builds and installs the extension.
# Used by the README's two commands and by CI.  Needs root or sudo for apt-get and `make install`.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="build-essential postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl postgresql-client-15 valgrind
      libwebsockets-dev libjwt-dev libjansson-dev libpq-dev zlib1g-dev python3-websockets openssl"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "==> installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
echo "==> building with $($PG_CONFIG --version)"
make -s PG_CONFIG="$PG_CONFIG"
make -s gateway PG_CONFIG="$PG_CONFIG"
$SUDO make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
