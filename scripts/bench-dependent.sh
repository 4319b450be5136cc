#!/usr/bin/env bash
# Measures requests that depend on other responses (issue 32) against the test
# site with a latency L on every response:
#
# 1. the flags downloader: N two-step items (metadata.json, then the image
#    named by it) at -c C. Ideal: every request takes L and C run at once,
#    so N x 2 x L / C.
# 2. pagination: K chains of P pages (`/paged/json/…`, followed by --next
#    json:/next) at -c C. Pages of a chain are sequential, chains parallel:
#    ideal = max(P x L, K x P x L / C).
#
# Prints each run's wall time, the ideal and their ratio (target <= 1.2).
# --per-host is C, so the host cap is not what is measured (a new host
# still starts at one request and doubles per clean answer, as always).
#
# Usage: scripts/bench-dependent.sh [--smoke]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: 100 items and 10 chains of 5 pages at -c 10, L = 20 ms, against the
# debug build, for CI to check that the script still runs (figures mean nothing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib-bench.sh"

items=1000 chains=100 pages=50 concurrency=50 latency_ms=50 build=release
if [[ ${1:-} == --smoke ]]; then
    items=100 chains=10 pages=5 concurrency=10 latency_ms=20 build=debug
fi
bench_bin "$build"
start_site --pages 10 --latency "${latency_ms}ms"

now() { date +%s.%N; }

# run NAME IDEAL_S ARGS...: runs `skitter fetch ARGS`, prints the figures.
run() {
    local name=$1 ideal=$2 start end status=0
    shift 2
    start=$(now)
    "$bin" fetch -c "$concurrency" --per-host "$concurrency" --no-progress "$@" \
        2>"$work/$name.err" || status=$?
    end=$(now)
    if [[ $status -ne 0 ]]; then
        echo "bench-dependent: $name exited with $status:" >&2
        head -n 20 "$work/$name.err" >&2
        exit 1
    fi
    awk -v s="$start" -v e="$end" -v i="$ideal" -v n="$name" 'BEGIN {
        printf "%s: elapsed %.3f s, ideal %.3f s, ratio %.3f (target <= 1.2)\n", n, e - s, i, (e - s) / i
    }'
}

# 1. Two requests per item.
ideal=$(awk -v n="$items" -v l="$latency_ms" -v c="$concurrency" 'BEGIN { print n * 2 * l / 1000 / c }')
run "flags $items items x 2 steps -c $concurrency" "$ideal" \
    "$origin/flags/n[1-$items]/metadata.json" --let country=json:/country --then 'n{1}.gif' \
    -o "$work/flags" --name-template '{country}.gif'
saved=$(find "$work/flags" -type f | wc -l)
if [[ $saved -ne $items ]]; then
    echo "bench-dependent: INCORRECT: $saved flags saved, $items expected" >&2
    exit 1
fi

# 2. Chains of pages.
ideal=$(awk -v k="$chains" -v p="$pages" -v l="$latency_ms" -v c="$concurrency" 'BEGIN {
    chain = p * l / 1000; all = k * p * l / 1000 / c
    print (chain > all ? chain : all)
}')
run "chains $chains x $pages pages -c $concurrency" "$ideal" \
    "$origin/paged/json/[1-$chains]/$pages" --next json:/next
name="chains $chains x $pages pages -c $concurrency"
followed=$(sed -n -E 's/^ +chain pages +([0-9]+)$/\1/p' "$work/$name.err")
if [[ $followed -ne $((chains * pages)) ]]; then
    echo "bench-dependent: INCORRECT: ${followed:-no} chain pages, $((chains * pages)) expected" >&2
    exit 1
fi
