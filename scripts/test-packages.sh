#!/usr/bin/env bash
# The Debian packages, built, installed, used and removed on this machine (as root):
#   bash scripts/test-packages.sh
# 1. installs the build tools that are missing (never upgrading an installed postgresql-* or
#    libpq package), builds the packages from this tree's files in a temporary copy
#    (scripts/deb.sh --worktree) and runs lintian on them (an error fails the test);
# 2. apt-get installs the two packages (refused when apt would change the version of any
#    installed postgresql-* or libpq package);
# 3. starts a throwaway cluster from the installed system files (initdb and pg_ctl of
#    /usr/lib/postgresql/15/bin as postgres, unix socket in a temporary folder and 127.0.0.1,
#    stopped by PID), CREATE EXTENSION syncular, upgrades 0.1.0 to the current version through
#    every installed upgrade script, creates syncular_router (PL/Proxy CASCADE) when PL/Proxy is
#    installed, and loads the gateway tests' fixture;
# 4. writes the gateway's settings into /etc/default/syncular-gateway, as an operator would, and
#    starts the installed unit's ExecStart as its User= with that environment
#    (test/packages/unit_round.py: systemd does not run here): a push and a pull over HTTP, a
#    request without a token refused, SIGTERM drains to exit status 0;
# 5. purges both packages and checks that none of the files they installed is left, nor any
#    syncular file in PostgreSQL's extension or library directories, nor the system user.
# The packages are purged on every exit, failed or not.  Syncular files an earlier `make install`
# left in those directories (no package owns them) are moved aside before the install and put
# back on every exit, so the machine ends as it began.  Takes about three minutes (most of it
# the package build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
t_start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=300)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
extdir=$("$PG_CONFIG" --sharedir)/extension
libdir=$("$PG_CONFIG" --pkglibdir)
pkgs=(postgresql-15-syncular syncular-gateway)
[ "$(id -u)" -eq 0 ] || { echo "scripts/test-packages.sh installs packages: run it as root"; exit 1; }

fail() { echo "FAILED: $*"; exit 1; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
# apt-get -s of an install: stop when it would change the version of an installed postgresql-*
# or libpq package, or remove one (a running server's packages stay as they are; the rule of
# scripts/setup.sh, scripts/apt-guard.sh, tested by test/setup)
. scripts/apt-guard.sh
apt_guard() {
  local sim changes
  sim=$("${APT[@]}" -s install --no-upgrade "$@" 2>&1) || { echo "$sim"; fail "apt-get -s install $*"; }
  changes=$(pg_changes_in_simulation <<<"$sim")
  if [ -n "$changes" ]; then
    echo "$changes"
    fail "installing $* would change the PostgreSQL packages above"
  fi
}

for p in "${pkgs[@]}"; do
  installed "$p" && fail "$p is installed already (purge it first: apt-get purge ${pkgs[*]})"
done

echo "==> build tools"
# postgresql-server-dev-all at the version of the installed postgresql-common (it depends on
# exactly that version: the newest one would upgrade postgresql-common)
need=()
for p in debhelper help2man lintian dpkg-dev libjwt-dev libjansson-dev libmicrohttpd-dev libwslay-dev libssl-dev libsqlite3-dev libzstd-dev \
         zlib1g-dev libpq-dev postgresql-server-dev-15; do
  installed "$p" || need+=("$p")
done
installed postgresql-server-dev-all ||
  need+=("postgresql-server-dev-all=$(dpkg-query -W -f='${Version}' postgresql-common)")
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt_guard "${need[@]}"
  "${APT[@]}" install -y -qq --no-upgrade "${need[@]}" >/dev/null
fi

SYNCULAR_STAGE=/   # the cluster below runs the installed system files (scripts/cluster-work.sh)
. scripts/cluster-work.sh pkgtest
debs=$work/debs
gwpid=""
pgpid=""
we_installed=0
cleanup() {
  local rc=$?
  [ -n "$gwpid" ] && kill -KILL "$gwpid" 2>/dev/null
  if [ -n "$pgpid" ]; then
    kill -INT "$pgpid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pgpid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pgpid" 2>/dev/null || true
  fi
  if [ "$we_installed" = 1 ]; then
    "${APT[@]}" purge -y -qq "${pkgs[@]}" >/dev/null 2>&1 || dpkg --purge "${pkgs[@]}" >/dev/null 2>&1 || true
  fi
  restore_leftovers
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

# syncular files of an earlier `make install` (no package owns them) would hide a file missing
# from the packages and be overwritten by them: moved aside for the test, put back afterwards
aside=""
restore_leftovers() {
  [ -n "$aside" ] || return 0
  local f
  while IFS= read -r f; do
    mv -f "$aside/files$f" "$f"
  done < "$aside/list"
  rm -rf "$aside"
  aside=""
}
if compgen -G "$extdir/syncular*" >/dev/null || compgen -G "$libdir/syncular*" >/dev/null; then
  aside=$(mktemp -d /tmp/syncular-leftovers.XXXXXX)
  for f in "$extdir"/syncular* "$libdir"/syncular*; do
    [ -e "$f" ] || continue
    if dpkg -S "$f" >/dev/null 2>&1; then
      fail "$f belongs to an installed package (purge it first: apt-get purge ${pkgs[*]})"
    fi
    mkdir -p "$aside/files$(dirname "$f")"
    mv "$f" "$aside/files$f"
    echo "$f" >> "$aside/list"
  done
  echo "moved aside until the end, left by an earlier make install: $(wc -l < "$aside/list") file(s)"
fi

echo "==> building the packages (scripts/deb.sh --worktree)"
t0=$(date +%s)
bash scripts/deb.sh --worktree "$debs" >/dev/null
for f in "$debs"/*.deb; do echo "$(stat -c %s "$f") bytes $(basename "$f")"; done
t_build=$(( $(date +%s) - t0 ))
deb_ext=$(ls "$debs"/postgresql-15-syncular_*.deb)
deb_gw=$(ls "$debs"/syncular-gateway_*.deb)

echo "==> lintian"
t0=$(date +%s)
lint=$(lintian --tag-display-limit 0 "$deb_ext" "$deb_gw" 2>&1 | grep -v '^running with root privileges' || true)
[ -n "$lint" ] && echo "$lint"
grep -q '^E: ' <<<"$lint" && fail "lintian reports errors"
echo "lintian: $(grep -c '^E: ' <<<"$lint" || true) errors, $(grep -c '^W: ' <<<"$lint" || true) warnings"
t_lint=$(( $(date +%s) - t0 ))

echo "==> apt-get install ./$(basename "$deb_ext") ./$(basename "$deb_gw")"
t0=$(date +%s)
apt_guard "$deb_ext" "$deb_gw"
we_installed=1
"${APT[@]}" install -y -qq --no-upgrade "$deb_ext" "$deb_gw" >/dev/null
for p in "${pkgs[@]}"; do
  dpkg -L "$p" > "$work/files.$p"
  installed "$p" || fail "$p did not install"
done
# every install and upgrade script of the tree is in the package
ver=$(sed -n "s/^EXTVERSION *= *//p" Makefile)
for f in syncular--$ver.sql upgrade/*.sql router/upgrade/*.sql; do
  f=$(basename "$f")
  [ "$f" = syncular--$ver.sql ] || [ -e "$extdir/$f" ] || fail "$f is not installed"
done
for f in syncular.control syncular_router.control syncular--$ver.sql syncular_router--$ver.sql; do
  [ -e "$extdir/$f" ] || fail "$extdir/$f is not installed"
done
[ -x /usr/bin/syncular-gateway ] || fail "/usr/bin/syncular-gateway is not installed"
getent passwd syncular-gateway >/dev/null || fail "the system user syncular-gateway was not created"
[ -e /usr/share/man/man1/syncular-gateway.1.gz ] || fail "no manual page for syncular-gateway"
unit=/lib/systemd/system/syncular-gateway.service
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
fi
t_install=$(( $(date +%s) - t0 ))

echo "==> a cluster from the installed files ($BIN), the extensions"
t0=$(date +%s)
# a free port can be taken by another test's server before ours binds it: three tries
for try in 1 2 3; do
  port=$(bash scripts/free-port.sh)
  start_cluster "$port" && break
  [ $try = 3 ] && { cat "$work/server.log"; fail "the cluster did not start"; }
done
pgpid=$(head -1 "$work/data/postmaster.pid")
export PGHOST=$work PGPORT=$port PGUSER=postgres
psql_q() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_q -d postgres -c 'CREATE DATABASE gwtest' -c 'CREATE DATABASE upgraded' -c 'CREATE DATABASE router'
psql_q -d gwtest -f test/gateway/fixture.sql >/dev/null
psql_q -d upgraded -c "SET client_min_messages = warning" -c "CREATE EXTENSION syncular VERSION '0.1.0'" \
  -c 'ALTER EXTENSION syncular UPDATE'
v=$(psql_q -At -d upgraded -c "SELECT extversion FROM pg_extension WHERE extname = 'syncular'")
[ "$v" = "$ver" ] || fail "ALTER EXTENSION syncular UPDATE from 0.1.0 ended at $v"
echo "ok - CREATE EXTENSION syncular; 0.1.0 upgraded to $v"
if [ -e "$extdir/plproxy.control" ]; then
  psql_q -d router -c "SET client_min_messages = warning" -c 'CREATE EXTENSION syncular_router CASCADE'
  psql_q -d router -c "SET client_min_messages = warning" -c 'DROP EXTENSION syncular_router' \
    -c "CREATE EXTENSION syncular_router VERSION '0.2.0'" -c 'ALTER EXTENSION syncular_router UPDATE'
  v=$(psql_q -At -d router -c "SELECT extversion FROM pg_extension WHERE extname = 'syncular_router'")
  [ "$v" = "$ver" ] || fail "ALTER EXTENSION syncular_router UPDATE from 0.2.0 ended at $v"
  echo "ok - CREATE EXTENSION syncular_router CASCADE; 0.2.0 upgraded to $v"
else
  echo "skip - syncular_router: PL/Proxy (postgresql-15-plproxy) is not installed"
fi
# the gateway's role: what docs/gateway.md lists for rounds, health and wake-ups
psql_q -d gwtest <<'SQL'
CREATE ROLE sync_gateway LOGIN;
GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text), syncular.readiness(jsonb),
  syncular.commit_wakeup_mode(), syncular.wait_commits(bigint, integer),
  syncular.realtime_connect(text, text, text),
  syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]),
  syncular.realtime_ack(text, text, text, bigint, text),
  syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) TO sync_gateway;
SQL
t_cluster=$(( $(date +%s) - t0 ))

echo "==> the unit's command line, as its user, configured by /etc/default/syncular-gateway"
t0=$(date +%s)
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
gwport=$(bash scripts/free-port.sh)
cat >> /etc/default/syncular-gateway <<EOF
SYNCULAR_GATEWAY_DB=host=127.0.0.1 port=$port dbname=gwtest user=sync_gateway
SYNCULAR_GATEWAY_LISTEN=127.0.0.1:$gwport
SYNCULAR_GATEWAY_JWT_SECRET=$secret
SYNCULAR_GATEWAY_PARTITION=tenant-1
SYNCULAR_GATEWAY_DRAIN=5
EOF
PGHOST=$work PGDATABASE=gwtest /usr/bin/python3 test/packages/unit_round.py "$unit" "$secret"
t_round=$(( $(date +%s) - t0 ))
kill -INT "$pgpid"
for _ in $(seq 1 100); do kill -0 "$pgpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pgpid" 2>/dev/null && fail "the cluster did not stop"
pgpid=""

echo "==> apt-get purge ${pkgs[*]}; nothing left behind"
t0=$(date +%s)
"${APT[@]}" purge -y -qq "${pkgs[@]}" >/dev/null
we_installed=0
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in ""|*not-installed) ;; *) fail "$p is not purged: $status" ;; esac
  left=0
  dirs=()
  while IFS= read -r f; do
    [ "$f" = /. ] && continue
    if [ -d "$f" ]; then
      # stays when the system made it a symlink (usrmerge's /lib) or another package owns it
      [ -L "$f" ] || dirs+=("$f")
    elif [ -e "$f" ] || [ -L "$f" ]; then
      echo "left behind: $f"; left=1
    fi
  done < "$work/files.$p"
  if [ ${#dirs[@]} -gt 0 ]; then
    owned=$(dpkg -S "${dirs[@]}" 2>/dev/null | sed 's/^.*: //' || true)
    for d in "${dirs[@]}"; do
      grep -qxF "$d" <<<"$owned" || { echo "left behind: $d"; left=1; }
    done
  fi
  [ $left = 0 ] || fail "$p left files behind"
  echo "ok - $p: none of its $(wc -l < "$work/files.$p") paths is left"
done
leftover=$(find "$extdir" "$libdir" /etc /lib/systemd /var/lib/systemd /usr/bin /usr/share/man -name 'syncular*' 2>/dev/null || true)
[ -z "$leftover" ] || fail "left behind: $leftover"
! getent passwd syncular-gateway >/dev/null || fail "the system user syncular-gateway is left"
echo "ok - no syncular file in $extdir, $libdir, /etc, /lib/systemd, /var/lib/systemd, /usr/bin, /usr/share/man; no user syncular-gateway"
t_purge=$(( $(date +%s) - t0 ))

echo "packages passed in $(( $(date +%s) - t_start ))s (build ${t_build}s, lintian ${t_lint}s, install ${t_install}s," \
  "cluster ${t_cluster}s, gateway ${t_round}s, purge ${t_purge}s)"
