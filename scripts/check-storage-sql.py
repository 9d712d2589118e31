#!/usr/bin/python3
"""Storage-layer check (src/README.md §1.3, docs/CONTRIBUTING-internal.md "Call cycles"): no file
of src/ outside the storage layer (src/storage*.c, src/segstore.c) names a syncular catalog table
or sequence (sync_*, as src/sql/ creates them) in a C string literal, i.e. carries SQL on the
catalog: a new read or write of a sync_* table is a storage function the caller passes values to.
Comments may name the tables.

usage: check-storage-sql.py [ROOT]   (default: the current directory, the repository root)
TAP output; exit status 1 when a file outside storage names a catalog table in a literal.
"""
import glob, os, re, sys

STORAGE = re.compile(r"^(storage[a-z_]*|segstore)\.c$")
CREATE = re.compile(r"create\s+(?:unlogged\s+)?(?:table|sequence)\s+(?:if\s+not\s+exists\s+)?"
                    r"syncular\.(sync_[a-z0-9_]+)", re.I)


def catalog_names(root):
    """the sync_* tables and sequences the install sources create"""
    names = set()
    for p in glob.glob(os.path.join(root, "src/sql/**/*.sql"), recursive=True):
        with open(p, encoding="utf-8") as f:
            names.update(m.lower() for m in CREATE.findall(f.read()))
    return names


def literals(text):
    """(line, contents) of each string literal of C source, comments and char literals skipped"""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1; i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2); j = n if j < 0 else j + 2
            line += text.count("\n", i, j); i = j
        elif text.startswith("//", i):
            j = text.find("\n", i); i = n if j < 0 else j
        elif c in "\"'":
            j, start = i + 1, line
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    line += 1
                j += 1
            if c == '"':
                yield start, text[i + 1:j]
            i = j + 1
        else:
            i += 1


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    names = catalog_names(root)
    if not names:
        print("Bail out! no syncular.sync_* table found in %s/src/sql" % root)
        return 1
    word = re.compile(r"\b(%s)\b" % "|".join(sorted(names, key=len, reverse=True)))
    hits = []
    files = [p for p in sorted(glob.glob(os.path.join(root, "src/*.c")))
             if not STORAGE.match(os.path.basename(p))]
    for p in files:
        with open(p, encoding="utf-8") as f:
            for line, lit in literals(f.read()):
                for m in sorted(set(word.findall(lit))):
                    hits.append("#   %s:%d names %s" % (os.path.relpath(p, root), line, m))
    if hits:
        print("not ok 1 - src/*.c outside storage: %d string literals name a catalog table" % len(hits))
        print("\n".join(hits))
        print("#   move the statement behind a storage function (src/storage_*.c) and pass values")
    else:
        print("ok 1 - src/*.c outside storage: no string literal names a catalog table "
              "(%d files, %d catalog tables and sequences)" % (len(files), len(names)))
    print("1..1")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
