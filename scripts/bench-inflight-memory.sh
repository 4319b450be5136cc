#!/usr/bin/env bash
# Measures what one request in flight costs in peak RSS (issue 2's memory figure).
#
# Runs `skitter bench` with 1 s latency and --max-tasks 10000 on 50,000 pages,
# and the same site and pages at --max-tasks 100 (without latency: at 100 tasks
# and 1 s per response that crawl would take over eight minutes, and its memory
# does not depend on the latency). Prints both peak RSS figures and
# (peak10000 - peak100) / 9900 in KB (1 KB = 1000 bytes), per round.
#
# Usage: scripts/bench-inflight-memory.sh [ROUNDS=3]
# Needs a release build: cargo build --release -p skitter-cli
set -euo pipefail

rounds=${1:-3}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release, or set SKITTER)" >&2; exit 2; }

figure() { # KEY, then bench flags
    local key=$1
    shift
    "$bin" bench -q --json "$@" | python3 -c "import json, sys; d = json.load(sys.stdin); assert d['correct'], d; print(d['$key'])"
}

for round in $(seq "$rounds"); do
    many=$(figure peak_rss_mb --pages 50000 --latency 1s --max-tasks 10000)
    few=$(figure peak_rss_mb --pages 50000 --max-tasks 100)
    python3 -c "print(f'round $round: peak RSS {float($many):.1f} MB at 10,000 in flight, {float($few):.1f} MB at 100: {(float($many) - float($few)) * 1e6 / 9900 / 1000:.1f} KB per extra request in flight')"
done
