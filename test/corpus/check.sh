#!/usr/bin/env bash
# The golden response corpora: the pull corpus (pull_corpus.sh) and the push corpus
# (push_corpus.sh) must answer byte for byte what they answered when test/corpus/pull.md5 and
# push.md5 were recorded (from 0.5.0; unchanged since).  A change that alters a response on
# purpose (a wire change, a new frame) records them again and says why in its commit:
#   bash scripts/pgenv.sh -- bash -c 'bash test/corpus/pull_corpus.sh > test/corpus/pull.md5'
#   bash scripts/pgenv.sh -- bash -c 'bash test/corpus/push_corpus.sh > test/corpus/push.md5'
# Runs inside scripts/pgenv.sh (the PG* environment's cluster, syncular staged).  TAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=0
failed=0
for c in pull push; do
  n=$((n + 1))
  got=$(mktemp)
  if ! bash "$here/${c}_corpus.sh" > "$got" 2>&1; then
    echo "not ok $n - $c corpus: the corpus script failed"; sed 's/^/#   /' "$got" | head -20
    failed=$((failed + 1))
  elif d=$(diff "$here/$c.md5" "$got"); then
    echo "ok $n - $c corpus: $(wc -l < "$got") responses byte-identical to test/corpus/$c.md5"
  else
    echo "not ok $n - $c corpus: responses differ from test/corpus/$c.md5 (< recorded, > now)"
    echo "$d" | head -20 | sed 's/^/#   /'
    failed=$((failed + 1))
  fi
  rm -f "$got"
done
echo "1..$n"
[ "$failed" -eq 0 ]
