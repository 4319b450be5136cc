#!/usr/bin/env python3
"""Scores main-content extraction against labelled gold text.

    eval.py PAGES_DIR SKITTER.jsonl [--trafilatura] [--passes N]

PAGES_DIR holds one folder per page with source.html.gz (the page) and
expected.html.gz (the gold main content, as HTML). SKITTER.jsonl is what
crates/skitter/examples/content_eval.rs wrote (one {"name", "text"} per page).

The metric is token-level F1 (as in Bevendorff et al. 2023, WCEB): tokens are
the whitespace-split, lowercased words of the text; precision and recall are
the multiset overlap over the extracted and the gold tokens. Figures are
computed per page and averaged over the pages (macro), with the micro figure
(overlaps summed over the corpus) beside them.

With --trafilatura, trafilatura.extract runs on the same pages (same URL) and
is scored the same way; its speed is pages per CPU second of the extract calls
alone (time.process_time around them, N passes).
"""

import collections
import gzip
import json
import os
import sys
import time

import lxml.html

URL = "http://fakehost/test/page.html"


def tokens(text):
    return collections.Counter(text.lower().split())


def gold_text(html):
    if not html.strip():
        return ""
    root = lxml.html.fromstring(html)
    return "".join(root.itertext())


def score(got, gold):
    overlap = sum((got & gold).values())
    n_got, n_gold = sum(got.values()), sum(gold.values())
    if n_got == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0, 0, 0, 0
    p = overlap / n_got if n_got else 0.0
    r = overlap / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, overlap, n_got, n_gold


def summary(name, scores, speed):
    n = len(scores)
    p = sum(s[0] for s in scores) / n
    r = sum(s[1] for s in scores) / n
    f = sum(s[2] for s in scores) / n
    ov = sum(s[3] for s in scores)
    got = sum(s[4] for s in scores)
    gold = sum(s[5] for s in scores)
    mp = ov / got if got else 0.0
    mr = ov / gold if gold else 0.0
    mf = 2 * mp * mr / (mp + mr) if mp + mr else 0.0
    print(
        f"{name:<12} pages {n:>4}  macro P {p:.3f} R {r:.3f} F1 {f:.3f}  "
        f"micro P {mp:.3f} R {mr:.3f} F1 {mf:.3f}  {speed}"
    )
    return f


def main():
    args = sys.argv[1:]
    pages_dir, skitter_jsonl = args[0], args[1]
    run_trafilatura = "--trafilatura" in args
    passes = int(args[args.index("--passes") + 1]) if "--passes" in args else 1
    worst = "--worst" in args
    skitter = {}
    speed_line = ""
    with open(skitter_jsonl) as f:
        for line in f:
            rec = json.loads(line)
            skitter[rec["name"]] = rec["text"]
    names = sorted(skitter)
    gold, sources = {}, {}
    for name in names:
        with gzip.open(os.path.join(pages_dir, name, "expected.html.gz"), "rt", encoding="utf-8") as f:
            gold[name] = tokens(gold_text(f.read()))
        with gzip.open(os.path.join(pages_dir, name, "source.html.gz"), "rt", encoding="utf-8") as f:
            sources[name] = f.read()
    sk_scores = [score(tokens(skitter[n]), gold[n]) for n in names]
    if os.environ.get("SKITTER_CONTENT_SPEED"):
        speed_line = os.environ["SKITTER_CONTENT_SPEED"]
    sk_f1 = summary("skitter", sk_scores, speed_line)
    if worst:
        for n, s in sorted(zip(names, sk_scores), key=lambda x: x[1][2])[:25]:
            print(f"  {n:<40} P {s[0]:.3f} R {s[1]:.3f} F1 {s[2]:.3f}")
    if not run_trafilatura:
        return
    import trafilatura

    texts = {}
    start = time.process_time()
    for p in range(passes):
        for n in names:
            out = trafilatura.extract(sources[n], url=URL, include_tables=True, include_comments=False)
            if p == 0:
                texts[n] = out or ""
    cpu = time.process_time() - start
    rate = len(names) * passes / cpu
    tr_scores = [score(tokens(texts[n]), gold[n]) for n in names]
    tr_f1 = summary("trafilatura", tr_scores, f"{cpu:.3f} cpu-s, {rate:.0f} pages/cpu-s")
    print(f"trafilatura-rate {rate:.1f}")
    print(f"f1 skitter {sk_f1:.3f} trafilatura {tr_f1:.3f}")


if __name__ == "__main__":
    main()
