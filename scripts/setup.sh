#!/usr/bin/env bash
# Installs what is missing (Debian packages), then builds the extension, the router and the
# gateway.  Used by the README's two commands and by CI, which then stage an installation of
# this tree for their own servers (scripts/stage.sh): nothing is written to the system
# directories of PostgreSQL, and no installed postgresql-*/libpq* package changes (see below).
# Needs root (or sudo) for apt-get when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="build-essential postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl libipc-run-perl postgresql-client-15 valgrind clang libclang-rt-14-dev python3 postgresql-15-plproxy
      libmicrohttpd-dev libwslay-dev libssl-dev libjwt-dev libjansson-dev libpq-dev zlib1g-dev python3-websockets python3-prometheus-client openssl
      libzstd-dev libsqlite3-dev sqlite3 zstd xxd libdeflate-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# Only what is missing, and never a change to an installed PostgreSQL: the version-coupled
# packages (server-dev, client, libpq) are pinned to the installed server's version, the install
# is simulated first (apt-get -s) and the setup stops if any installed postgresql-* or libpq*
# package would change version or be removed (scripts/apt-guard.sh), unless
# SYNCULAR_ALLOW_UPGRADE=1.  apt-get waits up to 5 minutes for another apt/dpkg run's lock.
. scripts/apt-guard.sh
APT_OPTS="-o DPkg::Lock::Timeout=300"
if [ -n "$missing" ]; then
  echo "==> installing:$missing"
  $SUDO apt-get $APT_OPTS update -qq
  # shellcheck disable=SC2086
  pkgs=$(pg_coupled_pins $missing | tr '\n' ' ')
  if ! sim=$(LC_ALL=C apt-get -s install --no-upgrade $pkgs 2>&1); then
    echo "$sim" >&2
    echo "setup: apt-get cannot install$missing as$pkgs (pinned to the installed server's version); nothing was installed" >&2
    exit 1
  fi
  changes=$(echo "$sim" | pg_changes_in_simulation)
  if [ -n "$changes" ] && [ "${SYNCULAR_ALLOW_UPGRADE:-0}" != 1 ]; then
    {
      echo "setup: installing$missing would change these installed PostgreSQL packages:"
      echo "$changes" | sed 's/^/  /'
      echo "Nothing was installed. Install the missing packages yourself in versions that match the"
      echo "installed server, or rerun with SYNCULAR_ALLOW_UPGRADE=1 to let apt-get make these changes"
      echo "(restart the PostgreSQL server afterwards)."
    } >&2
    exit 1
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get $APT_OPTS install -y -qq --no-upgrade $pkgs >/dev/null
fi

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
echo "==> building with $($PG_CONFIG --version)"
make -s PG_CONFIG="$PG_CONFIG"
make -s gateway PG_CONFIG="$PG_CONFIG"
