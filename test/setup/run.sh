#!/usr/bin/env bash
# The setup's upgrade guard (scripts/apt-guard.sh) on recorded `apt-get -s install` outputs of a
# Debian 12 machine with PostgreSQL 15.18 installed while 15.20 was the candidate:
#   unpinned-upgrade.sim         apt-get -s install postgresql-server-dev-15 (no pin): 5 upgrades
#   pinned-new-only.sim          apt-get -s install --no-upgrade postgresql-15-hypopg
#                                postgresql-server-dev-15=15.18-0+deb12u1: one new package only
#   reinstall-same-version.sim   apt-get -s install --reinstall postgresql-server-dev-15=15.18-0+deb12u1
#   removal.sim                  apt-get -s install postgresql-15-hypopg libpq-dev-: 3 removals,
#                                postgresql-common and postgresql-client-common upgraded
# TAP output; exit status 1 when a check fails.
set -uo pipefail
cd "$(dirname "$0")"
. ../../scripts/apt-guard.sh
n=0; failed=0
check() {
  n=$((n + 1))
  if [ "$2" = "$3" ]; then echo "ok $n - $1"; else failed=$((failed + 1)); echo "not ok $n - $1: got [$2], expected [$3]"; fi
}
check "unpinned server-dev: the server, client and libpq upgrades are refused" \
  "$(pg_changes_in_simulation < unpinned-upgrade.sim)" \
  "libpq-dev 15.18-0+deb12u1 -> 15.20-0+deb12u1
libpq5 15.18-0+deb12u1 -> 15.20-0+deb12u1
postgresql-client-15 15.18-0+deb12u1 -> 15.20-0+deb12u1
postgresql-15 15.18-0+deb12u1 -> 15.20-0+deb12u1
postgresql-server-dev-15 15.18-0+deb12u1 -> 15.20-0+deb12u1"
check "pinned install of new packages only: nothing installed changes" \
  "$(pg_changes_in_simulation < pinned-new-only.sim)" ""
check "a reinstall of the installed version is no change" \
  "$(pg_changes_in_simulation < reinstall-same-version.sim)" ""
check "removals and upgrades of postgresql-common are listed, the new extension package is not" \
  "$(pg_changes_in_simulation < removal.sim)" \
  "postgresql-server-dev-all 248+deb12u1 -> removed
postgresql-server-dev-15 15.18-0+deb12u1 -> removed
libpq-dev 15.18-0+deb12u1 -> removed
postgresql-common 248+deb12u1 -> 248+deb12u2
postgresql-client-common 248+deb12u1 -> 248+deb12u2"
# the pins follow the installed server (read from dpkg here, as setup.sh does)
server=$(dpkg-query -W -f='${Status} ${Version}' postgresql-15 2>/dev/null | sed -n 's/^install ok installed //p')
if [ -n "$server" ]; then
  check "version-coupled packages are pinned to the installed server $server, others are not" \
    "$(pg_coupled_pins postgresql-server-dev-15 libpq-dev postgresql-15-pgtap | tr '\n' ' ')" \
    "postgresql-server-dev-15=$server libpq-dev=$server postgresql-15-pgtap "
else
  n=$((n + 1)); echo "ok $n # SKIP postgresql-15 is not installed: no pin to check"
fi
echo "1..$n"
[ $failed -eq 0 ]
