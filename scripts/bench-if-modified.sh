#!/usr/bin/env bash
# Bytes moved by a second `skitter fetch --if-modified` run versus the first:
# the local test site (loopback only) serves N pages of which SHARE change
# between passes; run 1 downloads everything, the site moves to its next pass,
# run 2 revalidates. Prints both runs' summaries (body bytes, change classes)
# and the size of each run's WARC, for the server honouring validators (304s)
# and for one ignoring them (every body sent again, unchanged ones found by digest).
#
# Usage: scripts/bench-if-modified.sh [--smoke] [N=2000] [SHARE=0.05]
# Needs a build of the CLI: cargo build -p skitter-cli (or set SKITTER).
# --smoke: 200 pages, a few seconds, for CI to check that the script still runs.
set -euo pipefail

if [[ ${1:-} == --smoke ]]; then
    shift
    set -- 200 "${1:-0.05}"
fi

n=${1:-2000}
share=${2:-0.05}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/debug/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (cargo build -p skitter-cli, or set SKITTER)" >&2; exit 2; }

work=$(mktemp -d)
site_pid=
cleanup() {
    [[ -n $site_pid ]] && kill "$site_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

for mode in honour ignore; do
    "$bin" testsite --pages "$n" --change "$share" --validators "$mode" --ignore-stdin >"$work/site" 2>/dev/null &
    site_pid=$!
    for _ in $(seq 50); do
        [[ -s $work/site ]] && break
        sleep 0.1
    done
    origin=$(head -n1 "$work/site")
    origin=${origin%/}
    [[ $origin == http://127.0.0.1:* ]] || { echo "test site did not start" >&2; exit 1; }
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
    kill "$site_pid"
    wait "$site_pid" 2>/dev/null || true
    site_pid=
    : >"$work/site"
done
