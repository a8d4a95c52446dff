#!/usr/bin/env python3
"""file_cycles.py NM GROUP=PATH [GROUP=PATH ...]

Calls inside a library go one way: no source file calls (or reads a global
of) a file that, directly or through others, calls back into it. For each
GROUP, PATH is a directory (every object file under it, searched
recursively) or a text file listing object files one per line (CMake's
$<TARGET_OBJECTS:...>); each object is read with `nm`; file A depends on file B when A references
a symbol that B defines. A strongly connected set of two or more files is a
circle, printed with the symbols that close it. Exit 0 when no group has a
circle, 1 otherwise, 2 on bad usage.
"""
import os
import subprocess
import sys


def objects(root):
    if os.path.isfile(root):
        with open(root) as f:
            return sorted(line.strip() for line in f if line.strip())
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".o") or f.endswith(".obj"):
                out.append(os.path.join(d, f))
    return sorted(out)


def symbols(nm, path):
    r = subprocess.run([nm, "-P", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{nm} failed on {path}: {r.stderr.strip()}")
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRCVWGSiu":
            defined.add(name)
    return defined, undefined


def sccs(nodes, edges):
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def short(path, root):
    base = root if os.path.isdir(root) else os.path.dirname(root)
    p = os.path.relpath(path, base)
    marker = ".dir" + os.sep
    if marker in p:
        p = p.split(marker, 1)[1]
    for suffix in (".c.o", ".cu.o", ".cpp.o", ".o"):
        if p.endswith(suffix):
            return p[: -len(suffix)]
    return p


def check(nm, group, root):
    objs = objects(root)
    if not objs:
        print(f"{group}: no object files under {root}")
        return False
    defs, refs = {}, {}
    for o in objs:
        defs[o], refs[o] = symbols(nm, o)
    owner = {}
    for o in objs:
        for s in defs[o]:
            owner.setdefault(s, o)
    edges = {o: set() for o in objs}
    why = {}
    for o in objs:
        for s in refs[o]:
            t = owner.get(s)
            if t and t != o:
                edges[o].add(t)
                why.setdefault((o, t), []).append(s)
    ok = True
    for comp in sccs(objs, edges):
        if len(comp) < 2:
            continue
        ok = False
        members = set(comp)
        print(f"{group}: circle among {', '.join(sorted(short(c, root) for c in comp))}")
        for a in sorted(members):
            for b in sorted(edges[a] & members):
                syms = ", ".join(sorted(why[(a, b)])[:4])
                print(f"    {short(a, root)} -> {short(b, root)}  ({syms})")
    if ok:
        print(f"{group}: {len(objs)} files, no circle")
    return ok


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    nm = argv[1]
    ok = True
    for arg in argv[2:]:
        group, root = arg.split("=", 1)
        ok = check(nm, group, root) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
