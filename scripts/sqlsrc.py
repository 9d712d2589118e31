#!/usr/bin/env python3
"""One source file per SQL object (the layout Citus keeps in sql/udfs/<name>/<version>.sql).

The SQL scripts of both extensions are skeletons: the install sources (src/sql/NN_*.sql,
router/sql/NN_*.sql, concatenated in name order) and every released base and upgrade script
(upgrade/syncular--*.sql, router/upgrade/syncular_router--*.sql).  A skeleton keeps what belongs
to that script alone (headers, \\echo guards, ALTERs, DROPs, GRANTs, one-line statements); each
SQL object stands in it as one directive line naming its source file under the include root
(src/sql for syncular, router/sql for syncular_router; a statement both extensions' scripts
hold alike, such as a DO block granting a new function, has one source file under src/sql that
the router's skeletons name ../../src/sql/<kind>/<name>/<version>.sql):

    --#include udfs/<name>/<version>.sql             the file, as it is
    --#include-or-replace udfs/<name>/<version>.sql  the same, its CREATE FUNCTION/PROCEDURE/VIEW
                                                     written CREATE OR REPLACE (an upgrade
                                                     replacing what the install creates)

Source files: every CREATE FUNCTION/PROCEDURE (udfs/<name>/<version>.sql) and COMMENT ON
FUNCTION/PROCEDURE (udfs/<name>/<version>.comment.sql), every CREATE VIEW (views/<name>/), and
every other statement (tables/, indexes/, sequences/, triggers/, comments/, grants/, ...) or run
of one-line statements of one kind (column comments of a table: comments/<table>.columns/)
whose text stands in more than one script.  A comment block right above a statement goes with
it when every script holding the statement has the same one.  Overloads: <name>-<arity>; a
second text first appearing in one release: <version>-2.sql.
<version> is the release in which that exact text first appeared; a source file never changes
once released (a change is a new file, <name>/<newer version>.sql).  The Makefiles expand the
directives with scripts/sql-include.awk (line by line; no python needed to build); this tool
splits scripts into statements, adds versions and checks the layout:

  sqlsrc.py build ROOT SKELETON...   expand the directives of the skeletons, in order, to stdout
  sqlsrc.py new-version NAME [--comment] [--router] [--version V]
                                     start a new version V (default: the Makefile's EXTVERSION)
                                     of object NAME (a directory under the root, e.g. udfs/push or
                                     push; an overloaded function is NAME-<number of arguments>,
                                     e.g. _raise-3): copy its newest file (--comment: its newest
                                     .comment.sql) to NAME/V.sql, point the install skeleton at
                                     it, append `--#include-or-replace` of it to the delta
                                     skeleton <previous>--V (edit the copy afterwards; a changed
                                     signature or result type also needs a DROP FUNCTION line
                                     before that directive in the delta)
  sqlsrc.py check                    TAP: every released built script is byte-identical to its
                                     recorded sha256 (upgrade/released.sha256); every source file
                                     an install skeleton includes that is newer than the last
                                     release is also included by the delta to the version in
                                     development; every source file is included somewhere and
                                     every directive names an existing file
  sqlsrc.py statements FILE          list the top-level statements of FILE (line ranges, kind,
                                     object), as the splitter sees them
  sqlsrc.py convert                  the one-time conversion of full scripts into skeletons and
                                     source files (idempotent on a converted tree: it re-extracts
                                     objects written inline in a skeleton)
Python 3 standard library only.
"""
import hashlib
import os
import re
import shutil
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIRECTIVE = re.compile(r"^--#include(-or-replace)? (\S+)$")
CREATE_RE = re.compile(r"^CREATE (FUNCTION|PROCEDURE|VIEW) ", re.M)
CREATE_OR_REPLACE_RE = re.compile(r"^CREATE OR REPLACE (FUNCTION|PROCEDURE|VIEW) ", re.M)


class Ext:
    """One extension: its include root, install skeletons and released/dev script skeletons."""

    def __init__(self, name, root, upgrade, built_dir, makefile):
        self.name, self.root, self.upgrade = name, root, upgrade
        self.built_dir, self.makefile = built_dir, makefile

    def path(self, *p):
        return os.path.join(TOP, *p)

    def install_parts(self):
        d = self.path(self.root)
        return sorted(os.path.join(self.root, f) for f in os.listdir(d) if f.endswith(".sql"))

    def scripts(self):
        """[(target version, skeleton path)], bases and deltas, in release order."""
        out = []
        for f in os.listdir(self.path(self.upgrade)):
            m = re.fullmatch(re.escape(self.name) + r"--(?:([0-9.]+)--)?([0-9.]+)\.sql", f)
            if m:
                out.append((vkey(m.group(2)), m.group(1) is not None, os.path.join(self.upgrade, f)))
        out.sort()
        return [(".".join(map(str, v)), p) for v, _, p in out]

    def extversion(self):
        m = re.search(r"^EXTVERSION\s*=\s*(\S+)", open(self.path(self.makefile)).read(), re.M)
        return m.group(1)


ENGINE = Ext("syncular", "src/sql", "upgrade", "", "Makefile")
ROUTER = Ext("syncular_router", "router/sql", "router/upgrade", "router", "router/Makefile")
EXTS = (ENGINE, ROUTER)


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def file_version(f):
    """The release of a source file: <version>[-<n>][.comment].sql."""
    return re.match(r"[0-9]+(?:\.[0-9]+)*", os.path.basename(f)).group(0)


def read(p):
    with open(os.path.join(TOP, p), encoding="utf-8", newline="") as f:
        return f.read()


def write(p, text):
    full = os.path.join(TOP, p)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8", newline="") as f:
        f.write(text)


# ------------------------------------------------------------------------------ expansion
def expand(ext, text, where="?"):
    out = []
    for line in text.splitlines(keepends=True):
        m = DIRECTIVE.match(line.rstrip("\n"))
        if not m:
            out.append(line)
            continue
        body = read(os.path.join(ext.root, m.group(2)))
        if m.group(1):
            body, n = CREATE_RE.subn(r"CREATE OR REPLACE \1 ", body, count=1)
            if n != 1:
                sys.exit("%s: %s has no CREATE FUNCTION/PROCEDURE/VIEW to write OR REPLACE" % (where, m.group(2)))
        out.append(body)
    return "".join(out)


def build_script(ext, skeletons):
    return "".join(expand(ext, read(s), s) for s in skeletons)


def ext_of(path):
    return ROUTER if path.startswith("router/") else ENGINE


# ------------------------------------------------------------------------------ splitting
DOLLAR = re.compile(r"\$([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$")


def skip_comment(t, i):
    """Index after the comment starting at i (-- or nested /* */), or i if none starts there."""
    if t.startswith("--", i):
        j = t.find("\n", i)
        return len(t) if j < 0 else j
    if t.startswith("/*", i):
        depth, j = 1, i + 2
        while j < len(t) and depth:
            if t.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif t.startswith("*/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return j
    return i


def statements(t):
    """Top-level statements of SQL text t as (start, end) offsets: start at the first character
    that is not blank or comment, end after the terminating ';' (or the end of a psql
    backslash-command line).  Quotes ('', E'', "", $$, $tag$) and comments are respected."""
    out, i, n = [], 0, len(t)
    while i < n:
        if t[i].isspace():
            i += 1
            continue
        j = skip_comment(t, i)
        if j != i:
            i = j
            continue
        start = i
        if t[i] == "\\":
            j = t.find("\n", i)
            i = n if j < 0 else j
            out.append((start, i))
            continue
        while i < n:
            c = t[i]
            if c == "'":
                escapes = i > 0 and t[i - 1] in "eE" and (i < 2 or not (t[i - 2].isalnum() or t[i - 2] == "_"))
                i += 1
                while i < n:
                    if escapes and t[i] == "\\":
                        i += 2
                        continue
                    if t[i] == "'":
                        if t.startswith("''", i):
                            i += 2
                            continue
                        break
                    i += 1
                i += 1
            elif c == '"':
                j = t.find('"', i + 1)
                i = n if j < 0 else j + 1
            elif c in "-/" and skip_comment(t, i) != i:
                i = skip_comment(t, i)
            elif c == "$" and (i == 0 or not (t[i - 1].isalnum() or t[i - 1] == "_")) and DOLLAR.match(t, i):
                tag = DOLLAR.match(t, i).group(0)
                j = t.find(tag, i + len(tag))
                i = n if j < 0 else j + len(tag)
            elif c == ";":
                i += 1
                break
            else:
                i += 1
        out.append((start, i))
    return out


NAME = r'((?:"[^"]+"|[A-Za-z_][\w$]*)(?:\.(?:"[^"]+"|[A-Za-z_][\w$]*)){0,2})'
FUNC = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\s+" + NAME + r"\s*\(", re.I)
FUNC_COMMENT = re.compile(r"COMMENT\s+ON\s+(FUNCTION|PROCEDURE)\s+" + NAME + r"\s*\(", re.I)
OTHER = [
    (re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?" + NAME, re.I), "tables"),
    (re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+" + NAME, re.I), "views"),
    (re.compile(r"CREATE\s+TYPE\s+" + NAME, re.I), "types"),
    (re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?" + NAME, re.I), "indexes"),
    (re.compile(r"CREATE\s+(?:EVENT\s+)?TRIGGER\s+" + NAME, re.I), "triggers"),
    (re.compile(r"COMMENT\s+ON\s+(?:COLUMN|TABLE|VIEW|TYPE|SCHEMA|INDEX|SEQUENCE|EVENT\s+TRIGGER)\s+" + NAME, re.I), "comments"),
    (re.compile(r"ALTER\s+TABLE\s+(?:ONLY\s+)?" + NAME, re.I), "alters"),
    (re.compile(r"CREATE\s+SEQUENCE\s+" + NAME, re.I), "sequences"),
    (re.compile(r"(?:GRANT|REVOKE)\s.*?\sON\s+(?:(?:TABLE|SEQUENCE|SCHEMA|FUNCTION|PROCEDURE|ALL\s+\w+\s+IN\s+SCHEMA)\s+)?" + NAME, re.I | re.S), "grants"),
    (re.compile(r"SELECT\s+pg_catalog\.pg_extension_config_dump\('" + NAME, re.I), "config_dump"),
    (re.compile(r"INSERT\s+INTO\s+" + NAME, re.I), "rows"),
]


# one-line statements extracted on their own (when their text stands in more than one script):
# those that create a named object; other one-line statements only in blocks
ONE_LINE_OBJECTS = ("indexes/", "sequences/", "tables/", "types/", "views/", "triggers/")


def bare(name):
    """The object's name without its schema, as a directory name."""
    parts = [p.strip('"') for p in re.findall(r'"[^"]+"|[^.]+', name)]
    return ".".join(parts[1:]) if len(parts) > 1 else parts[0]


def arg_types(t, open_paren):
    """Normalized input argument types of the parenthesized list at open_paren (a signature)."""
    depth, i, args, cur = 0, open_paren, [], ""
    while i < len(t):
        c = t[i]
        if c == "'":
            j = i + 1
            while j < len(t) and not (t[j] == "'" and not t.startswith("''", j)):
                j += 2 if t.startswith("''", j) else 1
            cur += t[i:j + 1]
            i = j + 1
            continue
        if c == "(":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            args.append(cur)
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    args.append(cur)
    types = []
    for a in args:
        a = re.split(r"\s+DEFAULT\s+|\s*=\s*", " ".join(a.split()), maxsplit=1, flags=re.I)[0].lower()
        if not a:
            continue
        words = a.split(" ")
        mode = "in"
        if words[0] in ("in", "out", "inout", "variadic"):
            mode, words = words[0], words[1:]
        if mode == "out":
            continue
        multi = ("double", "timestamp", "time", "character", "bit", "interval", "national")
        if len(words) > 1 and words[0] not in multi:
            words = words[1:]
        t = " ".join(words)
        types.append(ALIASES.get(t, t))
    return ",".join(types)


ALIASES = {"int": "integer", "int4": "integer", "int8": "bigint", "int2": "smallint", "bool": "boolean",
           "timestamptz": "timestamp with time zone", "varchar": "character varying",
           "float8": "double precision", "float4": "real", "regclass[]": "regclass[]"}


def classify(stmt):
    """(kind, key, dirname) of a statement's text: kind 'func', 'comment-func', 'other' or None."""
    m = FUNC.match(stmt)
    if m:
        return "func", (m.group(2).lower(), arg_types(stmt, m.end() - 1)), bare(m.group(2))
    m = FUNC_COMMENT.match(stmt)
    if m:
        return "comment-func", (m.group(2).lower(), arg_types(stmt, m.end() - 1)), bare(m.group(2))
    for rx, kind in OTHER:
        m = rx.match(stmt)
        if m:
            return "other", (kind, m.group(1).lower()), kind + "/" + bare(m.group(1))
    return None, None, None


def line_units(t):
    """Statements of t that occupy whole lines: [(first line index, last line index, kind, key,
    dirname)], lines counted from 0; a statement sharing a line with another is left out."""
    lines = t.splitlines(keepends=True)
    starts, pos = [], 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln)

    def line_of(off):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return lo

    units = []
    for s, e in statements(t):
        a, b = line_of(s), line_of(max(s, e - 1))
        if t[starts[a]:s].strip() or not lines[b].endswith("\n"):
            continue
        rest = t[e:starts[b] + len(lines[b])].strip()
        if rest and not rest.startswith("--"):
            continue
        kind, key, d = classify(t[s:e])
        units.append([a, b, kind, key, d])
    # a statement sharing its first line with the end of the one before is not whole-line
    return [u for i, u in enumerate(units) if i == 0 or units[i - 1][1] < u[0]]


# ------------------------------------------------------------------------------ conversion
def group_of(stmt):
    """What keeps one-line statements in one block: their kind; column comments, their table."""
    _, _, d = classify(stmt)
    if d is None:
        return None
    kind, name = d.split("/", 1)
    return (kind, name.split(".")[0]) if kind == "comments" else kind


def blocks(texts, occ, release):
    """Runs of consecutive one-line statements (no blank line, no extracted object between;
    comment lines inside but not at either end) of one kind (column comments: of one table)
    whose exact text stands in more than one script: column comments, indexes, REVOKEs,
    pg_extension_config_dump calls.  A block is filed under its first statement's object."""
    found = []
    for p, t in texts.items():
        lines = t.splitlines(keepends=True)
        covered = set()
        for o in occ:
            if o[0] == p:
                covered.update(range(o[1], o[2] + 1))
        units = {u[0]: u for u in line_units(t)}
        i = 0
        while i < len(lines):
            if i in covered or not lines[i].strip() or DIRECTIVE.match(lines[i].rstrip("\n")):
                i += 1
                continue
            j = i
            while j < len(lines) and j not in covered and lines[j].strip() and not DIRECTIVE.match(lines[j].rstrip("\n")):
                j += 1
            # lines i..j-1: a paragraph; keep whole statements, comment lines only inside
            k, stmts, ok = i, [], True
            while k < j:
                if k in units and units[k][1] < j:
                    stmts.append(units[k])
                    k = units[k][1] + 1
                elif lines[k].lstrip().startswith("--") and not stmts:
                    i, k = k + 1, k + 1
                elif lines[k].lstrip().startswith("--"):
                    k += 1
                else:
                    ok = False
                    break
            runs = []
            for u in stmts if ok else []:
                g = group_of("".join(lines[u[0]:u[1] + 1]))
                if runs and runs[-1][0] == g:
                    runs[-1][1].append(u)
                else:
                    runs.append((g, [u]))
            for g, run in runs:
                if len(run) < 2:
                    continue
                a, b = run[0][0], run[-1][1]
                _, key, d = classify("".join(lines[a:run[0][1] + 1]))
                if isinstance(g, tuple) and d != "comments/" + g[1]:
                    d, key = "comments/%s.columns" % g[1], ("columns", g[1])
                if d is None:
                    words = re.findall(r"[A-Za-z_][\w.]*", lines[a])[:4]
                    d = "misc/" + "-".join(w.lower() for w in words)
                    key = ("misc", d)
                d = d if "/" in d else "blocks/" + d
                found.append([p, a, b, "".join(lines[a:b + 1]), False, "block", ("block",) + tuple(key), d])
            i = j
    where = {}
    for o in found:
        where.setdefault(o[3], set()).add(o[0] if o[0] in release else "install")
    return [o for o in found if len(where[o[3]]) > 1]


def canonical(text):
    """A function's text stored in its source file: CREATE without OR REPLACE (the directive
    says which); returns (text, or_replace)."""
    new, n = CREATE_OR_REPLACE_RE.subn(r"CREATE \1 ", text, count=1)
    return (new, True) if n else (text, False)


def convert(ext):
    """Splits every full script of ext into a skeleton and source files (see the docstring)."""
    scripts = ext.scripts()
    parts = ext.install_parts()
    release = {p: v for v, p in scripts}
    texts = {p: expand(ext, read(p), p) for p in [p for _, p in scripts] + parts}
    dev = ext.extversion()
    # occurrences: (path, first line, last line, canonical text, or_replace, kind, key, dirname)
    occ = []
    for p, t in texts.items():
        lines = t.splitlines(keepends=True)
        for a, b, kind, key, d in line_units(t):
            if kind is None or (kind == "other" and a == b and not d.startswith(ONE_LINE_OBJECTS)):
                continue
            body, orr = canonical("".join(lines[a:b + 1])) if kind == "func" or d.startswith("views/") else ("".join(lines[a:b + 1]), False)
            occ.append([p, a, b, body, orr, kind, key, d])
    # other statements than functions and views only where the same text stands in more than
    # one script
    where = {}
    for o in occ:
        where.setdefault(o[3], set()).add(o[0] if o[0] in release else "install")
    occ = [o for o in occ if o[5] != "other" or o[7].startswith("views/") or len(where[o[3]]) > 1]
    # a comment block right above a statement travels with it when every occurrence of that
    # text has the same one
    heads = {}
    for o in occ:
        lines = texts[o[0]].splitlines(keepends=True)
        a = o[1]
        while a > 0 and lines[a - 1].startswith("--") and not DIRECTIVE.match(lines[a - 1].rstrip("\n")):
            a -= 1
        heads.setdefault(o[3], set()).add("".join(lines[a:o[1]]))
    taken = {}
    for o in occ:
        h = heads[o[3]]
        if len(h) == 1 and next(iter(h)):
            head = next(iter(h))
            if o[0] not in taken or all(x[2] < o[1] - head.count("\n") for x in taken[o[0]]):
                o[1] -= head.count("\n")
                o[3] = head + o[3]
        taken.setdefault(o[0], []).append(o)
    occ += blocks(texts, occ, release)
    # versions: the first release whose script holds the text; texts only the install sources
    # hold are the version in development's
    first = {}
    for o in occ:
        v = release.get(o[0], dev)
        if o[3] not in first or vkey(v) < vkey(first[o[3]]):
            first[o[3]] = v
    # directory names: one per object; overloads (one name, several signatures) get the
    # signature's arity, then a letter
    sigs = {}
    for o in occ:
        sigs.setdefault(o[7], [])
        if o[6] not in sigs[o[7]]:
            sigs[o[7]].append(o[6])
    dirname = {}
    for d, keys in sigs.items():
        prefix = "" if "/" in d else "udfs/"
        for k in keys:
            if len(keys) == 1:
                dirname[k] = prefix + d
            else:
                base = prefix + d + "-" + str(len(k[1].split(",")) if k[1] else 0)
                name, n = base, 1
                while name in dirname.values():
                    n += 1
                    name = base + chr(ord("a") + n - 2)
                dirname[k] = name
    # a text that has a source file already keeps it (a re-run extracts only what is new)
    existing = {}
    for dp, _, fs in os.walk(os.path.join(TOP, ext.root)):
        rel = os.path.relpath(dp, os.path.join(TOP, ext.root))
        if rel != ".":
            for f in sorted(fs):
                existing[os.path.join(rel, f)] = read(os.path.join(ext.root, rel, f))
    known = {}
    for f, text in sorted(existing.items()):
        known.setdefault(text, f)
    files = {}
    for o in occ:
        if o[3] in known:
            files[known[o[3]]] = o[3]
            o.append(known[o[3]])
            continue
        d = dirname[o[6]]
        v = first[o[3]]
        ext_ = ".comment.sql" if o[5] == "comment-func" else ".sql"
        fname, n = d + "/" + v + ext_, 1
        while files.get(fname, existing.get(fname, o[3])) != o[3]:
            n += 1
            fname = "%s/%s-%d%s" % (d, v, n, ext_)
        files[fname] = o[3]
        o.append(fname)
    for f, text in files.items():
        if f not in existing:
            write(os.path.join(ext.root, f), text)
    by_path = {}
    for o in occ:
        by_path.setdefault(o[0], []).append(o)
    for p, t in texts.items():
        lines = t.splitlines(keepends=True)
        for o in sorted(by_path.get(p, []), key=lambda o: -o[1]):
            lines[o[1]:o[2] + 1] = ["--#include%s %s\n" % ("-or-replace" if o[4] else "", o[8])]
        write(p, "".join(lines))
        if expand(ext, read(p), p) != t:
            sys.exit("convert: %s does not expand to its former text" % p)
    print("%s: %d source files (%d new) from %d statements in %d scripts"
          % (ext.name, len(files), len(set(files) - set(existing)), len(occ), len(texts)))


# ------------------------------------------------------------------------------ new-version
def new_version(args):
    ext = ROUTER if "--router" in args else ENGINE
    comment = "--comment" in args
    args = [a for a in args if a not in ("--router", "--comment")]
    v = ext.extversion()
    if "--version" in args:
        i = args.index("--version")
        v = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit("usage: sqlsrc.py new-version NAME [--comment] [--router] [--version V]")
    name = args[0]
    root = os.path.join(TOP, ext.root)
    d = name if os.path.isdir(os.path.join(root, name)) else "udfs/" + name
    suffix = ".comment.sql" if comment else ".sql"
    if not os.path.isdir(os.path.join(root, d)):
        # overloads of one name live in NAME-<number of arguments>: name them
        udfs = os.path.join(root, "udfs")
        overloads = sorted(f for f in (os.listdir(udfs) if os.path.isdir(udfs) else [])
                           if re.fullmatch(re.escape(name) + r"-[0-9]+", f))
        if overloads:
            sys.exit("%s is overloaded: name one of %s (udfs/NAME-<number of arguments>)"
                     % (name, ", ".join(overloads)))
        sys.exit("no object %s under %s: a brand-new object is written inline in the skeletons, "
                 "then `sqlsrc.py convert` (docs/CONTRIBUTING-internal.md)" % (name, ext.root))
    versions = [f for f in os.listdir(os.path.join(root, d))
                if f.endswith(suffix) and (comment or not f.endswith(".comment.sql"))]
    if not versions:
        sys.exit("%s/%s has no %s file" % (ext.root, d, suffix))
    newest = max(versions, key=lambda f: (vkey(file_version(f)), f))
    target = "%s/%s%s" % (d, v, suffix)
    if os.path.exists(os.path.join(root, target)):
        sys.exit("%s/%s exists already: edit it" % (ext.root, target))
    if vkey(file_version(newest)) > vkey(v):
        sys.exit("%s/%s/%s is newer than %s" % (ext.root, d, newest, v))
    shutil.copyfile(os.path.join(root, d, newest), os.path.join(root, target))
    # the install skeletons include the new file where they included any of this object's
    pattern = re.compile(r"^--#include %s/[0-9][^/\s]*%s$" % (re.escape(d), re.escape(suffix)), re.M)
    n = 0
    for p in ext.install_parts():
        t = read(p)
        new = pattern.sub(lambda m: "--#include " + target if comment or not m.group(0).endswith(".comment.sql")
                          else m.group(0), t)
        if new != t:
            write(p, new)
            n += 1
    deltas = [p for v2, p in ext.scripts() if v2 == v and os.path.basename(p).count("--") == 2]
    if not deltas:
        sys.exit("no upgrade skeleton to %s in %s" % (v, ext.upgrade))
    is_func = not comment and CREATE_RE.search(read(os.path.join(ext.root, target))) is not None
    t = read(deltas[0])
    t += "%s--#include%s %s\n" % ("" if t.endswith("\n\n") else "\n", "-or-replace" if is_func else "", target)
    write(deltas[0], t)
    print("created %s/%s (a copy of %s); install skeletons now including it: %d; appended to %s.\n"
          "Edit %s/%s now%s." % (ext.root, target, newest, n, deltas[0], ext.root, target,
                                 "" if is_func or comment else
                                 "; not a function: make the delta's statement one an upgrade can run"))
    if n == 0:
        print("warning: no install skeleton included %s/*%s: add `--#include %s` where it belongs" % (d, suffix, target))


# ------------------------------------------------------------------------------ check
def check():
    n = failed = 0

    def result(ok, msg):
        nonlocal n, failed
        n += 1
        if not ok:
            failed += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", n, msg))

    # 1. released scripts are frozen
    for line in read("upgrade/released.sha256").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        want, built = line.split()
        ext = ext_of(built)
        name = os.path.basename(built)
        skel = os.path.join(ext.upgrade, name)
        got = hashlib.sha256(build_script(ext, [skel]).encode("utf-8")).hexdigest()
        result(got == want, "%s (built from %s) is the released script byte for byte%s"
               % (built, skel, "" if got == want else ": sha256 %s, released %s" % (got, want)))
        full = os.path.join(TOP, built)
        if os.path.exists(full):
            with open(full, "rb") as f:
                ok = hashlib.sha256(f.read()).hexdigest() == want
            result(ok, "the built file %s (make) is the released script" % built)
    # 2. the splitter: quotes, dollar quotes and comments hide semicolons
    cases = [
        ("SELECT 1;\nSELECT 2;\n", ["SELECT 1;", "SELECT 2;"]),
        ("CREATE FUNCTION f() AS $$ a; b $$;\n", ["CREATE FUNCTION f() AS $$ a; b $$;"]),
        ("DO $x$ $$; $x$;\nX;", ["DO $x$ $$; $x$;", "X;"]),
        ("SELECT 'it''s; no' , $1;\n", ["SELECT 'it''s; no' , $1;"]),
        ("SELECT E'\\'; no';\n", ["SELECT E'\\'; no';"]),
        ('SELECT "a;b" FROM t;', ['SELECT "a;b" FROM t;']),
        ("-- a; comment\nSELECT /* x; /* y; */ z; */ 1;", ["SELECT /* x; /* y; */ z; */ 1;"]),
        ("SELECT 1 -- tail;\n;", ["SELECT 1 -- tail;\n;"]),
        ('\\echo Use "x;" \\quit\nSELECT 1;', ['\\echo Use "x;" \\quit', "SELECT 1;"]),
    ]
    for text, want in cases:
        got = [text[a:b] for a, b in statements(text)]
        result(got == want, "splitter: %r%s" % (text, "" if got == want else ": got %r" % got))
    for ext in EXTS:
        dev = ext.extversion()
        # the awk build (make) and this tool's expansion agree on the install script
        built = os.path.join(TOP, ext.built_dir, "%s--%s.sql" % (ext.name, dev))
        if os.path.exists(built):
            with open(built, encoding="utf-8", newline="") as f:
                same = f.read() == build_script(ext, ext.install_parts())
            result(same, "%s: the built install script is its skeletons expanded" % ext.name)
        scripts = ext.scripts()
        last = [v for v, _ in scripts if vkey(v) < vkey(dev)][-1]
        delta = os.path.join(ext.upgrade, "%s--%s--%s.sql" % (ext.name, last, dev))
        # 3. what the install includes newer than the last release, the delta includes too
        inc = {}
        for p in ext.install_parts() + [p for _, p in scripts]:
            for ln in read(p).splitlines():
                m = DIRECTIVE.match(ln)
                if m:
                    inc.setdefault(p, set()).add(m.group(2))
        # a generated file (generated/..., built by make from other inputs, e.g. the router's
        # routed wrappers) is new in every version: the delta must include it too
        newer = sorted(f for p in ext.install_parts() for f in inc.get(p, ())
                       if f.startswith("generated/") or vkey(file_version(f)) > vkey(last))
        missing = [f for f in newer if f not in inc.get(delta, set())]
        result(not missing, "%s: every source newer than %s the install includes, %s includes too%s"
               % (ext.name, last, delta, "" if not missing else ": missing " + ", ".join(missing)))
        # 4. every directive names a file, every file is named by a directive
        allinc = set().union(*inc.values()) if inc else set()
        absent = sorted(f for f in allinc if not os.path.isfile(os.path.join(TOP, ext.root, f)))
        result(not absent, "%s: every included source file exists%s" % (ext.name, "" if not absent else ": " + ", ".join(absent)))
        have = set()
        for dp, _, fs in os.walk(os.path.join(TOP, ext.root)):
            rel = os.path.relpath(dp, os.path.join(TOP, ext.root))
            if rel != ".":
                have |= {os.path.join(rel, f) for f in fs if f.endswith(".sql")}
        unused = sorted(have - allinc)
        result(not unused, "%s: every source file is included by a script%s" % (ext.name, "" if not unused else ": " + ", ".join(unused)))
    print("1..%d" % n)
    return 1 if failed else 0


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "build":
        ext = ROUTER if args and args[0] == ROUTER.root else ENGINE
        if not args or args[0] != ext.root:
            sys.exit("usage: sqlsrc.py build ROOT SKELETON...")
        sys.stdout.write(build_script(ext, args[1:]))
    elif cmd == "new-version":
        new_version(args)
    elif cmd == "check":
        return check()
    elif cmd == "statements":
        t = open(args[0], encoding="utf-8").read()
        for a, b, kind, key, d in line_units(t):
            print("%d-%d %s %s" % (a + 1, b + 1, kind or "-", d or ""))
    elif cmd == "convert":
        for ext in EXTS:
            convert(ext)
    elif cmd in ("-h", "--help", "help"):
        print(__doc__)
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
