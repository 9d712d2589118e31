# Sourced by scripts/setup.sh (and test/setup/run.sh): the rule that keeps the setup from ever
# changing an installed PostgreSQL.  `apt-get install --no-upgrade` protects only the packages
# named on its command line; a missing one can still pull a newer postgresql-15, client or libpq
# as a dependency (postgresql-server-dev-15 15.20 needs postgresql-client-15 15.20, ...).

# pg_coupled_pins PKG...: prints the packages, each version-coupled one (built from the same
# source as the server: postgresql-server-dev-15, postgresql-client-15, libpq-dev, libpq5)
# pinned to the installed server's version when postgresql-15 is installed, so apt resolves
# against the server that is there instead of the newest candidate.
pg_coupled_pins() {
  local server p
  server=$(dpkg-query -W -f='${Status} ${Version}' postgresql-15 2>/dev/null |
           sed -n 's/^install ok installed //p')
  for p in "$@"; do
    case "$p" in
      postgresql-server-dev-15|postgresql-client-15|libpq-dev|libpq5)
        if [ -n "$server" ]; then echo "$p=$server"; else echo "$p"; fi ;;
      *) echo "$p" ;;
    esac
  done
}

# pg_changes_in_simulation: reads `apt-get -s install ...` output on stdin and prints one line
# per already-installed postgresql-* or libpq* package the run would change, as
# "<package> <installed version> -> <new version>" or "<package> <installed version> -> removed".
# An `Inst` line with a bracketed version is an upgrade or downgrade of an installed package (a
# reinstall of the same version is no change); without brackets it is a new package (allowed);
# `Remv` is a removal.
pg_changes_in_simulation() {
  awk '
    $1 == "Inst" && $2 ~ /^(postgresql|libpq)/ && $3 ~ /^\[/ {
      old = $3; gsub(/[][]/, "", old); new = $4; sub(/^\(/, "", new)
      if (old != new) print $2 " " old " -> " new
    }
    $1 == "Remv" && $2 ~ /^(postgresql|libpq)/ {
      old = $3; gsub(/[][]/, "", old); print $2 " " old " -> removed"
    }'
}
