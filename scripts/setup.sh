#!/usr/bin/env bash
# Installs what is missing (Debian packages), then builds the extension, the router and the
# gateway.  Used by the README's two commands and by CI, which then stage an installation of
# this tree for their own servers (scripts/stage.sh): nothing is written to the system
# directories of PostgreSQL.  Needs root or sudo for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="build-essential postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl postgresql-client-15 valgrind clang libclang-rt-14-dev python3 postgresql-15-plproxy
      libwebsockets-dev libjwt-dev libjansson-dev libpq-dev zlib1g-dev python3-websockets python3-prometheus-client openssl
      libzstd-dev libsqlite3-dev sqlite3 zstd xxd"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# Only what is missing, never an upgrade of what is installed (a running PostgreSQL server
# package stays as it is); wait up to 5 minutes for another apt/dpkg run to release its lock.
APT_OPTS="-o DPkg::Lock::Timeout=300"
if [ -n "$missing" ]; then
  echo "==> installing:$missing"
  $SUDO apt-get $APT_OPTS update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get $APT_OPTS install -y -qq --no-upgrade $missing >/dev/null
fi

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
echo "==> building with $($PG_CONFIG --version)"
make -s PG_CONFIG="$PG_CONFIG"
make -s gateway PG_CONFIG="$PG_CONFIG"
