#!/usr/bin/env python3
"""gen-router-routed.py — the routed wrappers of syncular_router, generated from the engine.

    python3 scripts/gen-router-routed.py ENGINE_INSTALL_SCRIPT router/routed.txt > OUT.sql

For every function named in routed.txt, read its signature (argument names, types, defaults and
RETURNS) from the built syncular install script, and write the router's two (or, for an HTTP
answer, three) functions with exactly that signature (docs/scaling.md "What the router runs"):

  syncular._r_<name>   LANGUAGE plproxy: RUN ON syncular.shard_hash(<route-by argument>),
                       TARGET syncular.<name> (the shard runs the engine's function);
  syncular.<name>      the public wrapper, SECURITY DEFINER, which turns an unreachable shard
                       into sync.schema_not_ready (syncular._route_error) or, for the http shape,
                       into the 503 answer of syncular._unavailable_body.

Every statement is CREATE OR REPLACE, so the same output serves the install script and every
upgrade script: a change of an engine signature reaches the router by rebuilding, never by a
hand-written copy.  Output order is routed.txt's.  Errors (exit status 2, message on stderr): a
name the engine script does not define, a route-by argument the function does not have, a
malformed routed.txt line.
"""
import re
import sys

STANDARD = ("Routed: runs syncular.{name} (same arguments, {what} and errors; see its COMMENT in "
            "the syncular extension) on the shard of {route}{order}. A shard PL/Proxy cannot reach "
            "raises sync.schema_not_ready (55000, details {{\"shardUnavailable\": true}}). "
            "docs/scaling.md{cite}.")
CATCH = """EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
"""


def die(msg):
    sys.stderr.write("gen-router-routed: %s\n" % msg)
    sys.exit(2)


def scan(s, i=0):
    """(index, character, depth) of s from i, for the characters outside quotes; depth counts
    the parentheses open before the character."""
    depth, q = 0, None
    for j in range(i, len(s)):
        c = s[j]
        if q:
            q = None if c == q else q
        elif c in "'\"":
            q = c
        else:
            yield j, c, depth
            depth += (c == '(') - (c == ')')


def balanced(s, i):
    """Index just past the parenthesis that closes s[i] == '('."""
    for j, c, depth in scan(s, i):
        if c == ')' and depth == 1:
            return j + 1
    die("unbalanced parentheses")


def split_top(s):
    """s split at the commas outside parentheses and quotes."""
    cuts = [j for j, c, depth in scan(s) if c == ',' and depth == 0]
    parts = [s[a + 1:b] for a, b in zip([-1] + cuts, cuts + [len(s)])]
    return [p.strip() for p in parts if p.strip()]


def parse_arg(a):
    """'name type [DEFAULT expr]' -> (name, type, default or None)."""
    m = re.match(r'("(?:[^"]|"")+"|\w+)\s+(.*?)(?:\s+DEFAULT\s+(.*))?$', ' '.join(a.split()),
                 re.IGNORECASE | re.DOTALL)
    if not m:
        die("cannot read argument %r" % a)
    return m.group(1), m.group(2), m.group(3)


def engine_signatures(text):
    """name -> (args [(name, type, default)], returns text) for every syncular.<name>(...)."""
    sigs = {}
    for m in re.finditer(r'CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+syncular\.(\w+)\s*\(', text):
        start = m.end() - 1
        end = balanced(text, start)
        r = re.match(r'\s*RETURNS\s+(.*?)\s+(?:LANGUAGE|AS|IMMUTABLE|STABLE|VOLATILE|STRICT|'
                     r'SECURITY|SET|PARALLEL|CALLED|COST|ROWS|LEAKPROOF)\b', text[end:], re.DOTALL)
        # procedures, and functions of other schemas' shapes, have no RETURNS: not routable
        sigs[m.group(1)] = ([parse_arg(a) for a in split_top(text[start + 1:end - 1])],
                            ' '.join(r.group(1).split()) if r else None)
    return sigs


def read_spec(path):
    """[(name, route, shape, comment or None)] from routed.txt."""
    out = []
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        if line[0].isspace():
            if not out:
                die("%s:%d: a comment line before any function" % (path, n))
            name, route, shape, comment, cite = out[-1]
            out[-1] = (name, route, shape, ((comment + ' ') if comment else '') + line.strip(), cite)
            continue
        cite = ''
        if ' -- ' in line:
            line, cite = line.split(' -- ', 1)
            cite = ', ' + cite.strip()
        f = line.split()
        if len(f) not in (2, 3) or (len(f) == 3 and f[2] != 'http'):
            die("%s:%d: expected '<name> <route-by> [http] [-- citation]'" % (path, n))
        out.append((f[0], f[1], f[2] if len(f) == 3 else 'value', None, cite))
    return out


def lit(s):
    """A SQL string literal, cut into lines of at most ~110 characters."""
    s = s.replace("'", "''")
    lines, cur = [], ''
    for word in s.split(' '):
        if cur and len(cur) + len(word) > 110:
            lines.append(cur + ' ')
            cur = word
        else:
            cur = cur + ' ' + word if cur else word
    lines.append(cur)
    return '\n'.join("'%s'" % l for l in lines)


def emit(name, route, shape, comment, cite, sig):
    args, ret = sig
    if ret is None:
        die("cannot read what syncular.%s returns" % name)
    names = [a[0] for a in args]
    if route not in names:
        die("syncular.%s has no argument %s" % (name, route))
    pos = '$%d' % (names.index(route) + 1)
    dollars = ', '.join('$%d' % (i + 1) for i in range(len(args)))
    bare = ', '.join('%s %s' % (a[0], a[1]) for a in args)
    full = ', '.join('%s %s%s' % (a[0], a[1], ' DEFAULT ' + a[2] if a[2] else '') for a in args)
    types = ', '.join(a[1] for a in args)
    is_set = re.match(r'(SETOF|TABLE)\b', ret, re.IGNORECASE) is not None
    o = []
    o.append("CREATE OR REPLACE FUNCTION syncular._r_%s(%s)\nRETURNS %s LANGUAGE plproxy AS $$\n"
             "  CLUSTER 'syncular';\n  RUN ON syncular.shard_hash(%s);\n  TARGET syncular.%s;\n$$;\n"
             % (name, bare, ret, route, name))
    o.append("COMMENT ON FUNCTION syncular._r_%s(%s) IS\n%s;\n\n"
             % (name, types, lit("Internal. PL/Proxy call of syncular.%s on the shard of %s." % (name, route))))
    if shape == 'http':
        inner = ', '.join('%s %s' % ('ctype' if a[0] == 'content_type' else a[0], a[1]) for a in args)
        o.append("CREATE OR REPLACE FUNCTION syncular._%s(%s)\nRETURNS %s\n"
                 "LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$\n#variable_conflict use_column\n"
                 "DECLARE\n  st text; msg text; det text; hnt text;\nBEGIN\n"
                 "  RETURN QUERY SELECT r.status, r.content_type, r.body FROM syncular._r_%s(%s) r;\n  RETURN;\n"
                 "%s  IF syncular._shard_failed(st, msg) THEN\n"
                 "    RAISE LOG 'syncular_router: shard %% unavailable for partition %%: %%',\n"
                 "      syncular.shard_of(%s), quote_literal(coalesce(%s, '')), msg;\n"
                 "    RETURN QUERY SELECT 503, 'application/json'::text, syncular._unavailable_body();\n"
                 "    RETURN;\n  END IF;\n  PERFORM syncular._route_error(%s, st, msg, det, hnt);\nEND\n$$;\n"
                 % (name, inner, ret, name, dollars, CATCH, pos, pos, pos))
        o.append("COMMENT ON FUNCTION syncular._%s(%s) IS\n%s;\n\n" % (name, types, lit(
            "Internal. The body of the routed syncular.%s (a plpgsql function cannot name an argument and "
            "a result column content_type both)." % name)))
        o.append("-- LANGUAGE sql: the argument and the result column share the name content_type\n"
                 "CREATE OR REPLACE FUNCTION syncular.%s(%s)\nRETURNS %s\n"
                 "LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$\n"
                 "  SELECT * FROM syncular._%s(%s)\n$$;\n" % (name, full, ret, name, dollars))
    else:
        call = ("RETURN QUERY SELECT * FROM syncular._r_%s(%s);\n  RETURN;" % (name, dollars) if is_set
                else "RETURN syncular._r_%s(%s);" % (name, dollars))
        o.append("CREATE OR REPLACE FUNCTION syncular.%s(%s)\nRETURNS %s\n"
                 "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$\n%s"
                 "DECLARE\n  st text; msg text; det text; hnt text;\nBEGIN\n  %s\n%s"
                 "  PERFORM syncular._route_error(%s, st, msg, det, hnt);\nEND\n$$;\n"
                 % (name, full, ret, "#variable_conflict use_column\n" if is_set else '', call, CATCH, pos))
    if comment is None:
        comment = STANDARD.format(name=name, route=route, cite=cite,
                                  what='rows' if is_set else 'result',
                                  order="; the rows come back in the shard's order" if is_set else '')
    o.append("COMMENT ON FUNCTION syncular.%s(%s) IS\n%s;\n\n" % (name, types, lit(comment)))
    return ''.join(o)


def main():
    if len(sys.argv) != 3:
        die("usage: gen-router-routed.py ENGINE_INSTALL_SCRIPT ROUTED_TXT")
    sigs = engine_signatures(open(sys.argv[1], encoding='utf-8').read())
    out = ["-- syncular_router: the routed wrappers, GENERATED by scripts/gen-router-routed.py from\n"
           "-- router/routed.txt and the engine's install script; do not edit (edit routed.txt).\n\n"]
    for name, route, shape, comment, cite in read_spec(sys.argv[2]):
        if name not in sigs:
            die("the engine defines no function syncular.%s" % name)
        out.append(emit(name, route, shape, comment, cite, sigs[name]))
    sys.stdout.write(''.join(out).rstrip('\n') + '\n')


main()
