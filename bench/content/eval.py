#!/usr/bin/env python3
"""Scores main-content extraction against labelled pages.

    eval.py PAGES_DIR SKITTER.jsonl [--trafilatura] [--passes N]

PAGES_DIR holds one folder per page with source.html.gz (the page) and
expected.html.gz (the gold main content, as HTML). SKITTER.jsonl is what
crates/skitter/examples/content_eval.rs wrote (one {"name", "text"} per page).

The metric is token-level F1 (as in Bevendorff et al. 2023, WCEB): tokens are
the whitespace-split, lowercased words of the text; precision and recall are
the multiset overlap over the extracted and the gold tokens. Figures are
computed per page and averaged over the pages (macro), with the micro figure
(overlaps summed over the corpus) beside them.

A page folder with snippets.json instead (trafilatura's evaluation set) is
scored trafilatura's way: each "with" snippet found in the text (whitespace
collapsed) is a true positive, each missing a false negative; each "without"
snippet found is a false positive; precision, recall and F1 over all snippets
of the corpus.

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


def collapse(text):
    return " ".join(text.split())


def snippet_counts(text, snippets):
    text = collapse(text)
    tp = sum(1 for s in snippets["with"] if collapse(s) in text)
    fn = len(snippets["with"]) - tp
    fp = sum(1 for s in snippets["without"] if collapse(s) in text)
    return tp, fn, fp


def snippet_summary(name, counts, speed):
    tp = sum(c[0] for c in counts)
    fn = sum(c[1] for c in counts)
    fp = sum(c[2] for c in counts)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    print(f"{name:<12} pages {len(counts):>4}  snippets P {p:.3f} R {r:.3f} F1 {f:.3f}  {speed}")
    return f


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
    gold, sources, snippets, urls = {}, {}, {}, {}
    for name in names:
        folder = os.path.join(pages_dir, name)
        with gzip.open(os.path.join(folder, "source.html.gz"), "rt", encoding="utf-8") as f:
            sources[name] = f.read()
        if os.path.exists(os.path.join(folder, "snippets.json")):
            with open(os.path.join(folder, "snippets.json"), encoding="utf-8") as f:
                snippets[name] = json.load(f)
            urls[name] = snippets[name]["url"]
        else:
            with gzip.open(os.path.join(folder, "expected.html.gz"), "rt", encoding="utf-8") as f:
                gold[name] = tokens(gold_text(f.read()))
            urls[name] = URL
    if os.environ.get("SKITTER_CONTENT_SPEED"):
        speed_line = os.environ["SKITTER_CONTENT_SPEED"]

    def report(tool, texts, speed):
        f1 = None
        if gold:
            scores = [score(tokens(texts[n]), gold[n]) for n in names if n in gold]
            f1 = summary(tool, scores, speed)
            if worst and tool == "skitter":
                ranked = sorted(zip([n for n in names if n in gold], scores), key=lambda x: x[1][2])
                for n, s in ranked[:25]:
                    print(f"  {n:<40} P {s[0]:.3f} R {s[1]:.3f} F1 {s[2]:.3f}")
        if snippets:
            counts = [snippet_counts(texts[n], snippets[n]) for n in names if n in snippets]
            f1 = snippet_summary(tool, counts, speed)
            if worst and tool == "skitter":
                for n, c in zip([n for n in names if n in snippets], counts):
                    if c[1] or c[2]:
                        print(f"  {n} missing {c[1]} unwanted {c[2]}")
        return f1

    sk_f1 = report("skitter", skitter, speed_line)
    if not run_trafilatura:
        return
    import trafilatura

    texts = {}
    start = time.process_time()
    for p in range(passes):
        for n in names:
            out = trafilatura.extract(sources[n], url=urls[n], include_tables=True, include_comments=False)
            if p == 0:
                texts[n] = out or ""
    cpu = time.process_time() - start
    rate = len(names) * passes / cpu
    tr_f1 = report("trafilatura", texts, f"{cpu:.3f} cpu-s, {rate:.0f} pages/cpu-s")
    print(f"trafilatura-rate {rate:.1f}")
    print(f"f1 skitter {sk_f1:.3f} trafilatura {tr_f1:.3f}")


if __name__ == "__main__":
    main()
