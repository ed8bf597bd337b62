#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-cycles.py OBJ...: import circles between object files.

Each object's undefined symbols are matched to the object that defines
them; a file that calls another depends on it. Prints every strongly
connected group of two or more files with the calls that tie it, and
exits 1 if there is one (issue 20: the event queue dispatches to
handlers registered by the sides above it; teardown helpers live where
every caller can import them).
"""
import collections
import subprocess
import sys


def graph(objs):
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRtdbr" and f[1].isupper():
                defs[f[2]] = o
            elif len(f) == 2 and f[0] == "U":
                uses[o].add(f[1])
    g = collections.defaultdict(set)
    for o, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != o:
                g[o].add((defs[s], s))
    return g


def sccs(g, nodes):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(objs):
    g = graph(objs)
    bad = sccs(g, set(objs))
    for comp in bad:
        print("import circle: " + " ".join(comp))
        for a in comp:
            for b, s in sorted(g[a]):
                if b in comp:
                    print(f"  {a} -> {b} ({s})")
    print(f"{len(objs)} objects, {len(bad)} import circles")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
