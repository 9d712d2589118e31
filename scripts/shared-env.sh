# Sourced by scripts/test.sh and scripts/demo.sh (with $root set): locates the shared golden
# vectors and IR (../shared; SYNCULAR_VECTORS / SYNCULAR_IR override) and unsets what is absent.
# The server process (user postgres) reads the vectors itself (pg_read_binary_file), and a clone
# may sit in a folder it cannot enter (mktemp -d is mode 700): stage a readable copy in /tmp.
SYNCULAR_VECTORS=${SYNCULAR_VECTORS:-$root/../shared/vectors}
SYNCULAR_IR=${SYNCULAR_IR:-$root/../shared/ir}
if [ -d "$SYNCULAR_VECTORS" ]; then
  syncular_stage=$(mktemp -d /tmp/syncular-vectors.XXXXXX)
  cp -R "$SYNCULAR_VECTORS/." "$syncular_stage/"
  chmod -R a+rX "$syncular_stage"
  trap 'rm -rf "$syncular_stage"' EXIT
  export SYNCULAR_VECTORS=$syncular_stage
  # present: a vector check that cannot read them fails instead of skipping
  export SYNCULAR_REQUIRE_VECTORS=1
else
  echo "(../shared/vectors absent: vector checks skip and the demo builds its own requests)"
  export SYNCULAR_VECTORS=/nonexistent
fi
if [ -d "$SYNCULAR_IR" ]; then
  export SYNCULAR_IR=$(cd "$SYNCULAR_IR" && pwd)
else
  unset SYNCULAR_IR
fi
