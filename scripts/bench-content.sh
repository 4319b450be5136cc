#!/usr/bin/env bash
# Measures the content extractor (issue 33's targets: main-content token F1
# >= 0.97, and >= 5x trafilatura's pages per CPU second on the same pages).
#
# Corpus: Mozilla Readability's 130 labelled test pages, copied gzipped into
# bench/content/readability/ (see its PROVENANCE.md). Method and figures:
# docs/src/benchmarks/content.md.
#
# 1. crates/skitter/examples/content_eval.rs extracts every page PASSES times
#    (thread CPU clock around the extract calls only) and prints skitter's
#    macro P/R/F1 and pages per CPU second.
# 2. bench/content/eval.py, in a venv with trafilatura (pinned below), runs
#    trafilatura.extract on the same pages (time.process_time around the
#    calls only), scores both tools with the same code, and prints the speed
#    ratio.
#
# Usage: scripts/bench-content.sh [--smoke] [PASSES=5]
# Creates target/content-venv (pip install trafilatura) on first use, or uses
# $CONTENT_VENV. --smoke: 12 pages, one pass, the debug build; when pip is
# unavailable, trafilatura is skipped (said loudly) and skitter's figures stand
# alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

smoke=0
if [[ ${1:-} == --smoke ]]; then
    smoke=1
    shift
fi
passes=${1:-5}
pages=bench/content/readability/pages
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cargo_args=(--quiet -p skitter --example content_eval)
extra=(--passes "$passes")
if [[ $smoke == 1 ]]; then
    extra=(--passes 1 --limit 12)
    mkdir -p "$out/pages"
    for d in $(ls "$pages" | head -12); do ln -s "$root/$pages/$d" "$out/pages/$d"; done
    pages=$out/pages
else
    cargo_args=(--release "${cargo_args[@]}")
fi

skitter_line=$(cargo run "${cargo_args[@]}" -- "$pages" "$out/skitter.jsonl" "${extra[@]}")
echo "$skitter_line"
skitter_rate=$(sed -E 's/.* ([0-9]+) pages\/cpu-s$/\1/' <<<"$skitter_line")

venv=${CONTENT_VENV:-${CARGO_TARGET_DIR:-target}/content-venv}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import trafilatura, lxml.html' 2>/dev/null; then
    python3 -m venv "$venv" >/dev/null 2>&1 &&
        "$venv/bin/pip" install --quiet 'trafilatura==2.3.1' lxml_html_clean >/dev/null 2>&1 || true
fi
if ! "$venv/bin/python" -c 'import trafilatura, lxml.html' 2>/dev/null; then
    if [[ $smoke == 1 ]]; then
        echo "!!! SKIPPING trafilatura: no venv with trafilatura at $venv and pip could not make one;"
        echo "!!! the figures above are skitter's alone."
        exit 0
    fi
    echo "trafilatura unavailable: pip install trafilatura==2.3.1 into $venv (or set CONTENT_VENV)" >&2
    exit 2
fi

tr_passes=$((smoke == 1 ? 1 : 2))
SKITTER_CONTENT_SPEED="$skitter_rate pages/cpu-s" "$venv/bin/python" bench/content/eval.py \
    "$pages" "$out/skitter.jsonl" --trafilatura --passes "$tr_passes" | tee "$out/eval"
tr_rate=$(sed -nE 's/^trafilatura-rate ([0-9.]+)$/\1/p' "$out/eval")
python3 -c "print(f'speed: skitter {$skitter_rate} pages/cpu-s, trafilatura {$tr_rate:.0f} pages/cpu-s, ratio {$skitter_rate / $tr_rate:.1f}x')"
