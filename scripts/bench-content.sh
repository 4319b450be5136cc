#!/usr/bin/env bash
# Measures the content extractor (issue 33's targets: main-content token F1
# >= 0.97, and >= 5x trafilatura's pages per CPU second on the same pages).
#
# Corpora (see their PROVENANCE.md): Mozilla Readability's 130 labelled test
# pages (bench/content/readability/, token F1 against the gold text) and a
# 245-page sample of trafilatura's evaluation set (bench/content/trafilatura/,
# snippet F1, trafilatura's own metric). Method and figures:
# docs/src/benchmarks/content.md.
#
# For each corpus:
# 1. crates/skitter/examples/content_eval.rs extracts every page PASSES times
#    (thread CPU clock around the extract calls only) and prints skitter's
#    pages per CPU second (and its token F1 where there is gold text).
# 2. bench/content/eval.py, in a venv with trafilatura (pinned below), runs
#    trafilatura.extract on the same pages (time.process_time around the
#    calls only), scores both tools with the same code; then the speed ratio.
#
# Usage: scripts/bench-content.sh [--smoke] [PASSES=5]
# Creates target/content-venv (pip install trafilatura) on first use, or uses
# $CONTENT_VENV. --smoke: 12 Readability pages, one pass, the debug build; when
# pip is unavailable, trafilatura is skipped (said loudly) and skitter's
# figures stand alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

smoke=0
if [[ ${1:-} == --smoke ]]; then
    smoke=1
    shift
fi
passes=${1:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

venv=${CONTENT_VENV:-${CARGO_TARGET_DIR:-target}/content-venv}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import trafilatura, lxml.html' 2>/dev/null; then
    python3 -m venv "$venv" >/dev/null 2>&1 &&
        "$venv/bin/pip" install --quiet 'trafilatura==2.3.1' lxml_html_clean >/dev/null 2>&1 || true
fi
have_trafilatura=1
if ! "$venv/bin/python" -c 'import trafilatura, lxml.html' 2>/dev/null; then
    if [[ $smoke == 0 ]]; then
        echo "trafilatura unavailable: pip install trafilatura==2.3.1 into $venv (or set CONTENT_VENV)" >&2
        exit 2
    fi
    have_trafilatura=0
fi

# corpus NAME PAGES_DIR: skitter's figures, then trafilatura's and the ratio.
corpus() {
    local name=$1 pages=$2 cargo_args=(--quiet -p skitter --example content_eval) extra=(--passes "$passes")
    if [[ $smoke == 1 ]]; then
        extra=(--passes 1)
    else
        cargo_args=(--release "${cargo_args[@]}")
    fi
    echo "== $name"
    local line rate tr_rate
    line=$(cargo run "${cargo_args[@]}" -- "$pages" "$out/$name.jsonl" "${extra[@]}")
    echo "$line"
    rate=$(sed -E 's/.* ([0-9]+) pages\/cpu-s$/\1/' <<<"$line")
    if [[ $have_trafilatura == 0 ]]; then
        echo "!!! SKIPPING trafilatura: no venv with trafilatura at $venv and pip could not make one;"
        echo "!!! the figures above are skitter's alone."
        return
    fi
    SKITTER_CONTENT_SPEED="$rate pages/cpu-s" "$venv/bin/python" bench/content/eval.py \
        "$pages" "$out/$name.jsonl" --trafilatura --passes "$((smoke == 1 ? 1 : 2))" | tee "$out/$name.eval"
    tr_rate=$(sed -nE 's/^trafilatura-rate ([0-9.]+)$/\1/p' "$out/$name.eval")
    python3 -c "print(f'$name speed: skitter {$rate} pages/cpu-s, trafilatura {$tr_rate:.0f} pages/cpu-s, ratio {$rate / $tr_rate:.1f}x')"
}

if [[ $smoke == 1 ]]; then
    mkdir -p "$out/pages"
    for d in $(ls bench/content/readability/pages | head -12); do
        ln -s "$root/bench/content/readability/pages/$d" "$out/pages/$d"
    done
    corpus readability "$out/pages"
else
    corpus readability bench/content/readability/pages
    corpus trafilatura bench/content/trafilatura/pages
fi
