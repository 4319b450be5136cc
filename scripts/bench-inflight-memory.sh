#!/usr/bin/env bash
# Measures what one request in flight costs in peak RSS (issue 2's memory figure).
#
# Runs `skitter bench` with 1 s latency and --max-tasks 10000 on 50,000 pages,
# and the same site and pages at --max-tasks 100 (without latency: at 100 tasks
# and 1 s per response that crawl would take over eight minutes, and its memory
# does not depend on the latency). Prints both peak RSS figures and
# (peak10000 - peak100) / 9900 in KB (1 KB = 1000 bytes), per round.
#
# Usage: scripts/bench-inflight-memory.sh [--smoke] [ROUNDS=3]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: one round of 300 pages at 200 against 10 tasks (50 ms latency), a few
# seconds, for CI to check that the script still runs and prints its figures.
set -euo pipefail

# pages, latency of the many-tasks run, many tasks, few tasks
setup=(50000 1s 10000 100)
if [[ ${1:-} == --smoke ]]; then
    shift
    setup=(300 50ms 200 10)
    set -- "${1:-1}"
fi
rounds=${1:-3}
pages=${setup[0]} latency=${setup[1]} many_tasks=${setup[2]} few_tasks=${setup[3]}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }

figure() { # KEY, then bench flags
    local key=$1
    shift
    "$bin" bench -q --json "$@" | python3 -c "import json, sys; d = json.load(sys.stdin); assert d['correct'], d; print(d['$key'])"
}

for round in $(seq "$rounds"); do
    many=$(figure peak_rss_mb --pages "$pages" --latency "$latency" --max-tasks "$many_tasks")
    few=$(figure peak_rss_mb --pages "$pages" --max-tasks "$few_tasks")
    extra=$((many_tasks - few_tasks))
    python3 -c "print(f'round $round: peak RSS {float($many):.1f} MB at {$many_tasks:,} in flight, {float($few):.1f} MB at {$few_tasks:,}: {(float($many) - float($few)) * 1e6 / $extra / 1000:.1f} KB per extra request in flight')"
done
