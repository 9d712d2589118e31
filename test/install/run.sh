#!/usr/bin/env bash
# Installability: what a packager and every test run rely on.  Run inside scripts/pgenv.sh (a
# cluster served from the staged installation of this tree, PGHOST/PGPORT/SYNCULAR_STAGE set):
#   bash scripts/pgenv.sh -- bash test/install/run.sh
# 1. `make install DESTDIR=<new empty folder>` works from scratch (no folder made beforehand) and
#    installs every file the tree ships: the control files, every install and upgrade script of
#    both extensions, the module and the gateway.
# 2. Every version of syncular and syncular_router named anywhere (a script file, a control
#    file, an upgrade test, the docs) is installable from the staged tree with CREATE EXTENSION
#    ... VERSION, and ALTER EXTENSION ... UPDATE takes each to the default version.  A file the
#    Makefiles forget, or a version the docs name that no script provides, fails here on every
#    machine (the staged installation never holds what an earlier `make install` left behind).
# TAP output (ok / not ok); exit status 1 when a check fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got [$2], expected [$3]"; fi; }
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# ---------------------------------------------------------------- 1. make install DESTDIR=<empty>
dest=$(mktemp -d /tmp/syncular-destdir.XXXXXX)
rmdir "$dest"          # from scratch: not even the top folder exists
trap 'rm -rf "$dest"' EXIT
if out=$(make -s install DESTDIR="$dest" PG_CONFIG="$PG_CONFIG" 2>&1); then
  ok "make install DESTDIR=<a folder that does not exist> succeeds"
else
  notok "make install DESTDIR=<a folder that does not exist> fails: $(echo "$out" | tail -3)"
fi
ext="$dest$("$PG_CONFIG" --sharedir)/extension"
def=$(sed -n "s/^default_version = '\(.*\)'/\1/p" syncular.control)
rdef=$(sed -n "s/^default_version = '\(.*\)'/\1/p" router/syncular_router.control)
want=$( (echo syncular.control syncular--$def.sql syncular_router.control syncular_router--$rdef.sql
         ls upgrade/syncular--*.sql router/upgrade/syncular_router--*.sql) | xargs -n1 basename | sort -u)
have=$(ls "$ext" 2>/dev/null | sort)
check "the extension folder holds exactly the control files and scripts of the tree" "$have" "$want"
for f in "$("$PG_CONFIG" --pkglibdir)/syncular.so" "$("$PG_CONFIG" --bindir)/syncular-gateway"; do
  if [ -s "$dest$f" ]; then ok "installed $f"; else notok "missing $f"; fi
done

# ---------------------------------------------------------------- 2. every named version installs
default_of() { sed -n "s/^default_version = '\(.*\)'/\1/p" "$1"; }
# versions a script file of the staged tree provides (base scripts and upgrade targets)
script_versions() {
  ls "$SYNCULAR_STAGE$("$PG_CONFIG" --sharedir)/extension" |
    sed -n "s/^$1--\([0-9.]*\)\.sql$/\1/p; s/^$1--[0-9.]*--\([0-9.]*\)\.sql$/\1/p"
}
# versions named by the upgrade tests and the docs: CREATE EXTENSION <ext> VERSION '<v>', the
# README's release chain (syncular only)
named_versions() {
  grep -rhoE "EXTENSION $1 VERSION '[0-9.]+'" sql test/t test/pgtap README.md docs 2>/dev/null |
    sed -E "s/.*'([0-9.]+)'/\1/"
  if [ "$1" = syncular ]; then
    sed -n 's/^Releases chain: \(.*\) (`upgrade.*/\1/p' README.md | grep -oE '[0-9]+\.[0-9]+\.[0-9]+'
  fi
}
try_version() { # try_version <ext> <version> <default>
  local db="syncular_t_install_$(echo "$1_$2" | tr . _)" out got
  psql_q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  if out=$(psql_q -d "$db" -c "SET client_min_messages = warning" \
             -c "CREATE EXTENSION $1 VERSION '$2' CASCADE" \
             -c "SELECT extversion FROM pg_extension WHERE extname = '$1'" 2>&1); then
    check "CREATE EXTENSION $1 VERSION '$2'" "$out" "$2"
    got=$(psql_q -d "$db" -c "SET client_min_messages = warning" -c "ALTER EXTENSION $1 UPDATE" \
            -c "SELECT extversion FROM pg_extension WHERE extname = '$1'" 2>&1)
    check "$1 $2: ALTER EXTENSION UPDATE reaches the default version" "$got" "$3"
  else
    notok "CREATE EXTENSION $1 VERSION '$2': $(echo "$out" | tail -1)"
  fi
  psql_q -d postgres -c "DROP DATABASE $db" >/dev/null
}
for e in syncular syncular_router; do
  control=syncular.control
  [ $e = syncular_router ] && control=router/syncular_router.control
  def=$(default_of $control)
  [ -n "$def" ] && ok "$control names default_version $def" || notok "$control has no default_version"
  versions=$( (script_versions $e; named_versions $e; echo "$def") | sort -t. -k1,1n -k2,2n -k3,3n -u)
  echo "# $e: versions named by the scripts, control file, upgrade tests and docs: $(echo $versions)"
  for v in $versions; do try_version $e "$v" "$def"; done
done

# META.json (PGXN META spec 1.0.0): the required keys, and both extensions provided at the
# version of their control file, from a script this tree builds
meta=$(/usr/bin/python3 - <<'PY'
import json, os, re
m = json.load(open("META.json"))
bad = [k for k in ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec")
       if k not in m]
if m.get("meta-spec", {}).get("version") != "1.0.0":
    bad.append("meta-spec.version")
if not re.fullmatch(r"\d+\.\d+\.\d+", m.get("version", "")):
    bad.append("version (semver)")
for ext, control in (("syncular", "syncular.control"), ("syncular_router", "router/syncular_router.control")):
    p = m.get("provides", {}).get(ext)
    default = re.search(r"default_version = '([^']+)'", open(control).read()).group(1)
    if not p or p.get("version") != default or not p.get("file") or not os.path.exists(p["file"]):
        bad.append("provides." + ext)
print(" ".join(bad) or "complete")
PY
)
check "META.json has the PGXN 1.0.0 keys and provides both extensions at their default versions" "$meta" complete

# the README's release chain ends at the version this tree builds
chain_end=$(sed -n 's/^Releases chain: \(.*\) (`upgrade.*/\1/p' README.md | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | tail -1)
check "README's release chain ends at the default version" "$chain_end" "$(default_of syncular.control)"

echo "1..$n"
[ $failed -eq 0 ]
