#!/usr/bin/env bash
# Measures `skitter fetch` on a huge URL list: peak memory (RSS) and wall time.
#
# Starts the local test site (loopback only), writes N URLs cycling over its
# pages to a file, fetches them all with --concurrency C and no outputs, and
# prints the figures /usr/bin/time reports. Memory should stay flat in N: the
# input is streamed, never loaded.
#
# Usage: scripts/bench-fetch.sh [--smoke] [N=1000000] [C=100]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: 300 URLs over 100 pages at -c 20, a few seconds, for CI to check that
# the script still runs and prints its figures (the figures mean nothing then).
set -euo pipefail

defaults=(1000000 100 1000) # N, C, pages
if [[ ${1:-} == --smoke ]]; then
    shift
    defaults=(300 20 100)
fi
n=${1:-${defaults[0]}}
concurrency=${2:-${defaults[1]}}
pages=${defaults[2]}
source "$(dirname "$0")/lib-bench.sh"
bench_bin release

start_site --pages "$pages"

awk -v n="$n" -v p="$pages" -v o="$origin" 'BEGIN { for (i = 0; i < n; i++) printf "%s/p/%d\n", o, i % p }' >"$work/urls.txt"
echo "fetching $n URLs from $origin with --concurrency $concurrency" >&2

# A failed fetch (bad flags, a page not fetched) fails the script: figures from a
# run that did not do the work would mislead.
status=0
/usr/bin/time -v "$bin" fetch --input "$work/urls.txt" --concurrency "$concurrency" \
    --per-host "$concurrency" --no-progress 2>"$work/time" || status=$?
grep -E '^ *[0-9]+ URLs in|^  (ok|not found|http|error|skipped)' "$work/time" || true
grep -E 'Maximum resident set size|Elapsed \(wall clock\)|User time|System time' "$work/time"
if [[ $status != 0 ]]; then
    echo "bench-fetch: skitter fetch exited with status $status:" >&2
    grep -v -E '^\s+[A-Z].*: ' "$work/time" | head -n 20 >&2 || true
    exit 1
fi
