#!/usr/bin/env python3
"""Copies a deterministic sample of trafilatura's evaluation set into
bench/content/trafilatura/ (how that folder was made; see its PROVENANCE.md).

    copy-trafilatura.py TRAFILATURA_GIT_DIR COMMIT

Takes every page of tests/cache/ and every sixth page of tests/eval/ (in the
order of their URLs in tests/evaldata.json). Each page is decoded to text
once (UTF-8, else the charset its <meta> declares, else cp1252) and stored as
UTF-8, gzipped, beside a snippets.json holding its URL and its "with" and
"without" snippets; both tools then read the same text.
"""

import gzip
import json
import os
import re
import subprocess
import sys

git_dir, commit = sys.argv[1], sys.argv[2]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trafilatura", "pages")


def show(path):
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


def decode(raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = re.search(rb"""charset=["']?([A-Za-z0-9_-]+)""", raw[:4096])
    if m:
        try:
            return raw.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            pass
    return raw.decode("cp1252", errors="replace")


def listing(folder):
    names = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "--name-only", commit, folder + "/"],
        capture_output=True, check=True, text=True,
    ).stdout.split()
    return {os.path.basename(n) for n in names}


data = json.loads(show("tests/evaldata.json"))
cache, evals = listing("tests/cache"), listing("tests/eval")
n_eval = 0
taken = 0
for k, url in enumerate(sorted(data)):
    entry = data[url]
    name = entry["file"]
    if name in cache:
        folder = "tests/cache"
    elif name in evals:
        folder = "tests/eval"
        n_eval += 1
        if n_eval % 6 != 1:
            continue
    else:
        continue
    if not entry.get("with") and not entry.get("without"):
        continue
    page = os.path.join(out, f"{taken:03d}")
    os.makedirs(page, exist_ok=True)
    with open(os.path.join(page, "source.html.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            f.write(decode(show(f"{folder}/{name}")).encode("utf-8"))
    with open(os.path.join(page, "snippets.json"), "w", encoding="utf-8") as f:
        json.dump(
            {"url": url, "file": f"{folder}/{name}", "with": entry.get("with", []), "without": entry.get("without", [])},
            f, ensure_ascii=False, indent=1,
        )
    taken += 1
print(f"{taken} pages copied into {out}")
