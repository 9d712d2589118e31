#!/usr/bin/python3
"""Call-cycle check (docs/CONTRIBUTING-internal.md "Call cycles"): builds the file-level call
graph of the extension (src/*.c with src/codec/*.c) and, separately, of the gateway (gateway/*.c)
from the object files' symbols (nm: file A -> file B when A's object leaves a symbol undefined
that B's object defines), and fails on a cycle between files.

A cycle is new when one of its edges is not listed in the allow-list (every edge of a strongly
connected component lies on a cycle, and a cycle made only of listed edges existed when they were
listed), so the list holds the edges of the known cycles, one "a.c -> b.c" per line.  A listed
edge that is no longer on any cycle is reported so the list can shrink.

usage: check-cycles.py ALLOW_LIST   (from the repository root, the objects built: make, make gateway)
TAP output; exit status 1 on a new cycle or a missing object.
       check-cycles.py --edges         prints the edges of every cycle today, in the list's format
"""
import glob, os, subprocess, sys
from collections import defaultdict


def symbols(objs):
    """{object file: (defined global functions, undefined symbols)}, from one nm run"""
    out = subprocess.run(["nm", "-P", "-A"] + objs, capture_output=True, text=True, check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        parts = rest.split()
        if obj not in syms or len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            syms[obj][1].add(name)
        elif kind in "TW":   # functions: the graph is of calls (a setting's variable is data, not a call)
            syms[obj][0].add(name)
    return syms


def graph(pairs):
    """pairs: [(source file, object file)] -> {file: set(files it calls)}"""
    syms = symbols([o for _, o in pairs])
    defs = {src: syms[obj][0] for src, obj in pairs}
    undefs = {src: syms[obj][1] for src, obj in pairs}
    owner = {}
    for src, names in defs.items():
        for n in names:
            owner[n] = src
    g = {src: set() for src in defs}
    for src, names in undefs.items():
        for n in names:
            o = owner.get(n)
            if o is not None and o != src:
                g[src].add(o)
    return g


def sccs(g):
    """strongly connected components with more than one file (Tarjan, iterative)"""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def path(g, start, goal, within):
    """a shortest call path start -> ... -> goal inside one component (BFS)"""
    prev, queue = {start: None}, [start]
    for v in queue:
        if v == goal:
            p = []
            while v is not None:
                p.append(v); v = prev[v]
            return p[::-1]
        for w in sorted(g[v]):
            if w in within and w not in prev:
                prev[w] = v; queue.append(w)
    return None


def check(n, label, g, allowed):
    """one TAP case: no cycle in g except through the allowed edges; returns (ok, lines)"""
    comps = sccs(g)
    cyc_edges = {(u, v) for c in comps for u in c for v in g[u] if v in c}
    new = sorted(cyc_edges - allowed)
    stale = sorted(e for e in allowed if e[0] in g and e not in cyc_edges)
    lines = []
    nedges = sum(len(s) for s in g.values())
    if new:
        lines.append("not ok %d - %s: new call cycles between files (%d files, %d calls between them)" % (n, label, len(g), nedges))
        for u, v in new:
            back = path(g, v, u, set(next(c for c in comps if u in c)))
            lines.append("#   %s -> %s closes the cycle: %s" % (u, v, " -> ".join([u] + back)))
        lines.append("#   pass what the lower file needs instead of calling up (or, for a known cycle being")
        lines.append("#   worked on, list the edge in the allow-list with the reason)")
    elif comps:
        lines.append("ok %d - %s: no new call cycle (%d files, %d calls between them; %d known cycle edges allowed)"
                     % (n, label, len(g), nedges, len(cyc_edges)))
    else:
        lines.append("ok %d - %s: no call cycle between files (%d files, %d calls between them)" % (n, label, len(g), nedges))
    for c in comps:
        lines.append("#   %s: files on a cycle: %s" % (label, " ".join(c)))
    for u, v in stale:
        lines.append("#   %s: allow-listed %s -> %s is no longer on a cycle: remove it from the list" % (label, u, v))
    return not new, lines


def objects(srcs, objof):
    pairs, missing = [], []
    for s in srcs:
        o = objof(s)
        if not os.path.exists(o) or os.path.getmtime(o) < os.path.getmtime(s):
            missing.append(o)
        pairs.append((s, o))
    return pairs, missing


def cycle_edges(g):
    comps = sccs(g)
    return sorted((u, v) for c in comps for u in c for v in g[u] if v in c)


def main():
    allow_file = sys.argv[1]
    allowed = set()
    with open(allow_file if allow_file != "--edges" else os.devnull) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                u, arrow, v = line.partition(" -> ")
                if not arrow:
                    print("Bail out! %s: not an edge 'a.c -> b.c': %r" % (allow_file, line))
                    return 1
                allowed.add((u.strip(), v.strip()))
    ext = sorted(glob.glob("src/*.c")) + sorted(glob.glob("src/codec/*.c"))
    gw = sorted(glob.glob("gateway/*.c"))
    ext_pairs, miss1 = objects(ext, lambda s: s[:-2] + ".o")
    gw_pairs, miss2 = objects(gw, lambda s: "gateway/build/" + os.path.basename(s)[:-2] + ".o")
    if miss1 or miss2:
        print("Bail out! objects missing or older than their source (make; make gateway): %s" % " ".join(miss1 + miss2))
        return 1
    if allow_file == "--edges":
        for u, v in cycle_edges(graph(ext_pairs)) + cycle_edges(graph(gw_pairs)):
            print("%s -> %s" % (u, v))
        return 0
    ok1, l1 = check(1, "extension (src/, src/codec/)", graph(ext_pairs), allowed)
    ok2, l2 = check(2, "gateway (gateway/)", graph(gw_pairs), allowed)
    print("\n".join(l1 + l2))
    print("1..2")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
