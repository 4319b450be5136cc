#!/usr/bin/env bash
# Bytes moved by a second `skitter fetch --if-modified` run versus the first:
# the local test site (loopback only) serves N pages of which SHARE change
# between passes; run 1 downloads everything, the site moves to its next pass,
# run 2 revalidates. Prints both runs' summaries (body bytes, change classes)
# and the size of each run's WARC, for the server honouring validators (304s)
# and for one ignoring them (every body sent again, unchanged ones found by digest).
#
# Usage: scripts/bench-if-modified.sh [--smoke] [N=2000] [SHARE=0.05]
# Needs a build of the CLI: cargo build -p skitter-cli --features testsite (or
# set SKITTER).
# --smoke: 200 pages, a few seconds, for CI to check that the script still runs.
set -euo pipefail

if [[ ${1:-} == --smoke ]]; then
    shift
    set -- 200 "${1:-0.05}"
fi

n=${1:-2000}
share=${2:-0.05}
source "$(dirname "$0")/lib-bench.sh"
bench_bin debug

for mode in honour ignore; do
    start_site --pages "$n" --change "$share" --validators "$mode"
    rm -rf "$work/out"
    echo "== $n pages, $share changed per pass, validators $mode"
    for run in 1 2; do
        "$bin" fetch "$origin/p/[0-$((n - 1))]" -o "$work/out" --if-modified \
            --warc "$work/run$run.warc" --no-progress -c 50 --per-host 50 2>"$work/sum$run"
        echo "-- run $run: WARC $(stat -c %s "$work/run$run.warc") bytes"
        grep -E 'URLs in|change:' "$work/sum$run"
        # The site's next pass: 5% of the pages change.
        [[ $run == 1 ]] && "$bin" fetch "$origin/_testsite/next-pass" --no-progress 2>/dev/null
    done
    stop_site
done
