#!/usr/bin/env python3
"""Checks that a crate's imports point one way. Exit status 1 on any breach.

    python3 scripts/module-deps.py [CRATE] [--graph]

CRATE is `skitter` (the library, the default), `skitter-cli` or
`skitter-testsite`.

1. Layers (the library only): each top-level folder of `crates/skitter/src` is
   a layer, and may import (`crate::x`) only the layers that ALLOWED lists for
   it. The table is the one drawn in docs/src/architecture.md; a new edge is a
   design decision, made here and there together.
2. No circles anywhere: inside every folder of the crate, the modules that are
   siblings there (files and subfolders) must not import each other in a
   circle, counting `crate::` and `super::` paths. A circle is broken by moving
   what both sides share into a leaf of its own.

Test code (files named tests.rs or *_tests.rs, files under a tests/ folder, and
a `#[cfg(test)] mod tests` block at the end of a file) is left out: tests may
reach anywhere. Comments (doc links included) are not dependencies.
`--graph` prints the layer graph as it is."""
import os
import re
import sys

ALLOWED = {
    "base": set(),
    "parse": {"base"},
    # Pages as Markdown and text: pure CPU work on one page.
    "content": {"base", "parse"},
    "host": {"base"},
    "fetch": {"base", "host"},
    "state": {"base", "fetch"},
    "robots": {"base", "fetch"},
    "render": {"base", "parse", "content", "fetch"},
    "output": {"base", "parse", "content", "host", "fetch", "state"},
    "frontier": {"base", "host", "fetch", "state", "robots"},
    # One serialisable value per job, made of the types of the layers it sets.
    "settings": {"base", "parse", "content", "host", "fetch", "robots", "render", "output"},
}
BELOW_CRAWL = set(ALLOWED)
ALLOWED["crawl"] = BELOW_CRAWL
ALLOWED["bulk"] = BELOW_CRAWL | {"crawl"}
ALLOWED["cluster"] = BELOW_CRAWL | {"crawl"}
# Link checking runs on a crawl, as a bulk fetch runs beside one.
ALLOWED["check"] = BELOW_CRAWL | {"crawl"}
ALLOWED["probe"] = {"base", "fetch"}
# Watching and steering a crawl over HTTP: reads the crawl's live numbers,
# a bulk fetch's summary (`skitter fetch --metrics`), and a Redis crawl's
# whole (`cluster`).
ALLOWED["watch"] = BELOW_CRAWL | {"crawl", "bulk", "cluster"}

args = [a for a in sys.argv[1:] if not a.startswith("--")]
crate = args[0] if args else "skitter"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", crate, "src")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def source(path):
    text = open(path, encoding="utf-8").read()
    base = os.path.basename(path)
    rel = os.path.relpath(path, root)
    if base == "tests.rs" or base.endswith("_tests.rs") or "tests" in rel.split(os.sep)[:-1]:
        return ""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests", text, re.M)
    text = text[: cut.start()] if cut else text
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))


def module_of(path):
    parts = os.path.relpath(path, root)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def group_items(text, i):
    """text[i] == '{': the top-level items of the group and where it ends."""
    depth, buf, items = 0, "", []
    for j in range(i, len(text)):
        c = text[j]
        if c == "{":
            depth += 1
            if depth == 1:
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                items.append(buf)
                return [x.strip() for x in items if x.strip()], j
        elif c == "," and depth == 1:
            items.append(buf)
            buf = ""
            continue
        buf += c
    return [], len(text)


def targets(text, here):
    """Absolute module paths (tuples) that `text`, in module `here`, names."""
    out = []
    for m in re.finditer(r"(?<![A-Za-z0-9_:$])((?:crate|super)(?:::super)*)::", text):
        head = m.group(1).split("::")
        base = () if head[0] == "crate" else here[: len(here) - len(head)]
        pos = m.end()

        def walk(prefix, s, p):
            mm = re.match(r"\s*(" + IDENT + r")", s[p:])
            if s[p:].lstrip().startswith("{"):
                q = p + (len(s[p:]) - len(s[p:].lstrip()))
                items, _ = group_items(s, q)
                for it in items:
                    walk(prefix, it, 0)
                return
            if not mm:
                out.append(prefix)
                return
            name = mm.group(1)
            q = p + mm.end()
            if name == "self":
                out.append(prefix)
                return
            if s.startswith("::", q):
                walk(prefix + (name,), s, q + 2)
            else:
                out.append(prefix + (name,))

        walk(base, text, pos)
    return out


files = []
for d, _, fs in os.walk(root):
    files += [os.path.join(d, f) for f in fs if f.endswith(".rs")]

# edges between siblings of every folder: folder -> {child: {child}}
siblings = {}
layer_edges = {}
for f in sorted(files):
    here = module_of(f)
    for t in targets(source(f), here):
        # the deepest common folder of `here` and `t`
        k = 0
        while k < min(len(here), len(t)) and here[k] == t[k]:
            k += 1
        if k >= len(here) or k >= len(t):
            continue  # an ancestor or a descendant
        folder, a, b = here[:k], here[k], t[k]
        siblings.setdefault(folder, {}).setdefault(a, set()).add(b)
        if k == 0:
            layer_edges.setdefault(a, {}).setdefault(b, set()).add(os.path.relpath(f, root))


def cycles(edges):
    found, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(edges.get(n, ())):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n)
    return found


bad = 0
if "--graph" in sys.argv:
    for a in sorted(layer_edges):
        print(f"{a:10} -> {', '.join(sorted(layer_edges[a]))}")
if crate == "skitter":
    for a in sorted(layer_edges):
        if a not in ALLOWED:
            print(f"layer {a!r} is not in the ALLOWED table")
            bad += 1
            continue
        for b, where in sorted(layer_edges[a].items()):
            if b in ALLOWED and b not in ALLOWED[a]:
                print(f"layer breach: {a} -> {b} (allowed: {', '.join(sorted(ALLOWED[a])) or 'none'}) in "
                      + ", ".join(sorted(where)))
                bad += 1
for folder in sorted(siblings):
    for c in cycles(siblings[folder]):
        print(f"circle in {'/'.join(folder) or 'src'}: {' -> '.join(c)}")
        bad += 1
if bad:
    sys.exit(1)
print(f"module-deps {crate}: imports point one way ({len(files)} files)")
