#!/usr/bin/env bash
# Runs every ```sql block of README.md and docs/*.md against throwaway databases, so the docs
# cannot rot.  Called by scripts/test.sh inside its throwaway cluster; by hand (after
# a staged installation): bash scripts/pgenv.sh -- bash scripts/check-docs.sh [files...]
#
# Rules (docs/CONTRIBUTING-internal.md, "Docs that run"):
#   * each file starts in a new, empty database (no extension: a block creates it, or a setup
#     does); its blocks run in order, each in its own psql session (psql -X, ON_ERROR_STOP), so
#     a block may use psql meta-commands (\gset, \if, \echo) and sees what earlier blocks left;
#   * HTML comments on the lines right before a fence steer it:
#       <!-- doc-check: skip <reason> -->     not run, reported as skipped with the reason;
#       <!-- doc-check: new-database -->      this block and the next ones use a new database;
#       <!-- doc-check: setup                 hidden psql text run in the same session before
#       ...                                   the block (prerequisites a reader has anyway:
#       -->                                   psql variables, a registered schema, rows);
#     a fence ```sql runnable=false is skipped too (e.g. generated signature listings);
#   * a failing block prints its file, line, error and text; every block runs; exit 1 if any
#     failed.  The last line counts the blocks run, skipped and failed.
# Connects with the usual libpq environment (PGHOST, PGPORT, PGUSER: a superuser).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then files=("$@"); else files=(README.md docs/*.md); fi
exec python3 - "${files[@]}" <<'PY'
import os, re, subprocess, sys, tempfile

FENCE = re.compile(r'^```(\S*)(.*)$')
DIRECTIVE = re.compile(r'<!--\s*doc-check:\s*(.*?)\s*-->', re.S)

def blocks(path):
    """(line, info, text, directives) for every fenced block whose language is sql."""
    lines = open(path, encoding='utf-8').read().split('\n')
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, info, start = m.group(1), m.group(2).strip(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        if lang == 'sql':
            # directives: HTML comments (and blank lines) right above the fence
            k, above = start - 1, []
            while k >= 0:
                if lines[k].strip() == '':
                    k -= 1
                    continue
                if lines[k].rstrip().endswith('-->'):
                    e = k
                    while k >= 0 and '<!--' not in lines[k]:
                        k -= 1
                    if k < 0:
                        break
                    above.insert(0, '\n'.join(lines[k:e + 1]))
                    k -= 1
                    continue
                break
            directives = [d.group(1) for c in above for d in DIRECTIVE.finditer(c)]
            out.append((start + 1, info, '\n'.join(lines[start + 1:j]), directives))
        i = j + 1
    return out

def psql(db, sql):
    with tempfile.NamedTemporaryFile('w', suffix='.sql', delete=False) as f:
        f.write(sql + '\n')
        name = f.name
    try:
        return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-f', name],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finally:
        os.unlink(name)

ran = skipped = failed = 0
dbs = []
def new_db():
    db = 'syncular_docs_%d_%d' % (os.getpid(), len(dbs))
    r = psql('postgres', 'CREATE DATABASE %s' % db)
    if r.returncode != 0:
        sys.exit('check-docs: cannot create a database: ' + r.stderr)
    dbs.append(db)
    return db

try:
    for path in sys.argv[1:]:
        db = None
        for line, info, text, directives in blocks(path):
            where = '%s:%d' % (path, line)
            skip = [d for d in directives if d.split()[0] == 'skip']
            if 'runnable=false' in info.split() or skip:
                reason = skip[0][4:].strip() if skip else 'runnable=false'
                print('%s: skipped (%s)' % (where, reason))
                skipped += 1
                continue
            if db is None or any(d.split()[0] == 'new-database' for d in directives):
                db = new_db()
            setup = '\n'.join(d[len('setup'):].strip() for d in directives if d.split()[0] == 'setup')
            r = psql(db, (setup + '\n' if setup else '') + text)
            ran += 1
            if r.returncode == 0:
                print('%s: ok' % where)
            else:
                failed += 1
                print('%s: FAILED\n%s\n--- the block:\n%s\n---' % (where, r.stderr.strip(), text))
finally:
    for db in dbs:
        psql('postgres', 'DROP DATABASE IF EXISTS %s WITH (FORCE)' % db)
print('doc blocks: %d ran, %d skipped, %d failed' % (ran, skipped, failed))
sys.exit(1 if failed else 0)
PY
