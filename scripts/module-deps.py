#!/usr/bin/env python3
"""Prints a crate's top-level module dependency graph (the library by default,
or the crate named as the argument, e.g. `skitter-cli`) (from `crate::` paths
in each module's files) and any cycles in it. Exit status 1 when there is a
cycle. Used by CI (issue: one direction of dependencies) and by the README's
"where to change what" drawing.

Test code (files named tests.rs or *_tests.rs, and `#[cfg(test)] mod tests`
blocks at the end of a file) is left out: tests may reach anywhere."""
import os, re, sys

crate = sys.argv[1] if len(sys.argv) > 1 else "skitter"
root = os.path.join(os.path.dirname(__file__), "..", "crates", crate, "src")
mods = {}
for entry in sorted(os.listdir(root)):
    path = os.path.join(root, entry)
    name = entry[:-3] if entry.endswith(".rs") else entry
    if name in ("lib", "main"):
        continue
    files = []
    if os.path.isdir(path):
        for d, _, fs in os.walk(path):
            files += [os.path.join(d, f) for f in fs if f.endswith(".rs")]
    elif entry.endswith(".rs"):
        files = [path]
    mods[name] = files

def source(f):
    text = open(f, encoding="utf-8").read()
    base = os.path.basename(f)
    if base == "tests.rs" or base.endswith("_tests.rs") or "/tests/" in f:
        return ""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests", text, re.M)
    text = text[: cut.start()] if cut else text
    # Comments (doc links included) are not dependencies.
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))

edges = {m: set() for m in mods}
for m, files in mods.items():
    for f in files:
        text = source(f)
        # crate::x, and `use crate::{x, y::z}` groups
        for hit in re.finditer(r"crate::(\{[^}]*\}|\w+)", text):
            group = hit.group(1)
            names = re.findall(r"(?:^|[{,\s])(\w+)", group) if group.startswith("{") else [group]
            for n in names:
                if n in mods and n != m:
                    edges[m].add(n)

def cycles():
    found, state, stack = [], {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(edges[n]):
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

for m in sorted(edges):
    print(f"{m:12} -> {', '.join(sorted(edges[m])) or '-'}")
cs = cycles()
for c in cs:
    print("cycle:", " -> ".join(c))
sys.exit(1 if cs else 0)
