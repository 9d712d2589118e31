# Counts the cases in the output of one test suite (scripts/test.sh keeps each suite's output in
# a log and runs this on it); prints "<passed> <failed> <skipped>".  What a case is, per format:
#   TAP (codec, pgTAP via pg_prove -v, gateway, install, setup, test/t via prove -v, cycles):
#     "ok N - ..." / "ok - ..." passed, the same with "# SKIP" / "# skip" (Test::More) skipped,
#     "not ok ..." failed,
#     "1..0 # SKIP ..." one skipped suite, "skip - ..." one skipped part
#   pg_regress / isolation (PostgreSQL 15):  "test name ... ok" / "... FAILED"
#   libFuzzer smoke (test/fuzz): one target ran ("stat::number_of_executed_units"), "fuzz_x FAILED"
#   docs (scripts/check-docs.sh): "doc blocks: R ran, S skipped, F failed"
/^not ok/                                  { f++; next }
/^ok( [0-9]+)? .*# [Ss][Kk][Ii][Pp]/       { s++; next }
/^ok [0-9]+( |$)/ || /^ok - /              { p++; next }
/^1\.\.0 # SKIP/ || /^skip - / || /: no manifest, skipped$/ { s++; next }
/^(test| )  *[^ ]+  *\.\.\. ok( |$)/       { p++; next }
/^(test| )  *[^ ]+  *\.\.\. FAILED/ || /\.\.\. failed \(ignored\)/ { f++; next }
/^stat::number_of_executed_units/          { p++; next }
/^fuzz_[a-z_]+ FAILED/                     { f++; next }
/^doc blocks: [0-9]+ ran, [0-9]+ skipped, [0-9]+ failed/ {
  split($0, w, /[ ,]+/); p += w[3] - w[7]; s += w[5]; f += w[7]; next
}
END { print p + 0, f + 0, s + 0 }
