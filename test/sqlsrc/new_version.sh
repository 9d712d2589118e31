#!/usr/bin/env bash
# What `scripts/sqlsrc.py new-version` does to a copy of the tree (docs/CONTRIBUTING-internal.md
# "SQL sources"): a changed function gets its source file for the version in development, the
# install skeleton includes it, the delta skeleton replaces it; an overloaded name is refused with
# the overloads listed; an unknown name is refused.  TAP output; run by `make sql-check`.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/sqlsrc-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$top/src" "$top/upgrade" "$top/scripts" "$top/Makefile" "$top/syncular.control" "$tmp/"
mkdir -p "$tmp/router" && cp -r "$top/router/sql" "$top/router/upgrade" "$top/router/Makefile" "$tmp/router/"
cp "$top"/router/*.control "$tmp/router/"
cd "$tmp"
v=$(sed -n 's/^EXTVERSION *= *//p' Makefile)
n=0; failed=0
ok() { n=$((n+1)); if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=$((failed+1)); fi; }

fn=realtime_ack
delta=$(ls upgrade/syncular--*--"$v".sql | head -1)
out=$(python3 scripts/sqlsrc.py new-version "$fn" 2>&1); rc=$?
ok "new-version $fn succeeds" '[ $rc -eq 0 ]'
ok "it creates src/sql/udfs/$fn/$v.sql" '[ -f src/sql/udfs/$fn/$v.sql ]'
ok "the install skeleton includes the new file" 'grep -q "^--#include udfs/$fn/$v.sql$" src/sql/*.sql'
ok "the install skeleton no longer includes an older text of it" '! grep -qE "^--#include udfs/$fn/[0-9.]+\.sql$" <(grep -h "^--#include udfs/$fn/" src/sql/*.sql | grep -v "/$v.sql$")'
ok "the delta skeleton replaces it" 'grep -q "^--#include-or-replace udfs/$fn/$v.sql$" "$delta"'
out=$(python3 scripts/sqlsrc.py new-version "$fn" 2>&1); rc=$?
ok "a second new-version of it is refused (edit the file)" '[ $rc -ne 0 ] && [[ "$out" == *"exists already"* ]]'
over=$(ls src/sql/udfs | sed -n 's/^\(.*\)-[0-9][0-9]*$/\1/p' | sort | uniq -d | head -1)
if [ -n "$over" ]; then
  out=$(python3 scripts/sqlsrc.py new-version "$over" 2>&1); rc=$?
  ok "an overloaded name ($over) is refused with its overloads listed" '[ $rc -ne 0 ] && [[ "$out" == *"$over-"[0-9]* ]]'
else
  echo "ok $((n+=1)) # SKIP no overloaded function in src/sql/udfs"
fi
out=$(python3 scripts/sqlsrc.py new-version no_such_function 2>&1); rc=$?
ok "an unknown name is refused" '[ $rc -ne 0 ] && [[ "$out" == *"no object no_such_function"* ]]'
echo "1..$n"
[ $failed -eq 0 ]
