#!/usr/bin/env bash
# Measures what syncing the outputs before each completion costs (hardening
# item 6, "power cut"): `skitter bench --state DIR --outputs DIR` (the state, a
# WARC + CDXJ + JSONL) with the binary from before the change and the one from
# after, interleaved ROUNDS times so both see the same machine; prints the median
# pages/s and CPU seconds of each and their ratio. The site and the crawler share
# the machine's cores, so run it on an otherwise idle machine.
#
# Usage: BEFORE=path/to/old/skitter scripts/bench-power.sh [--smoke] [ROUNDS=7]
# AFTER (or SKITTER) defaults to target/release/skitter; BEFORE to AFTER (which
# only checks the script runs). Both need --features testsite, e.g.
#   git -C /work/main worktree add /tmp/before <commit before the change> &&
#   cargo build --release -p skitter-cli --features testsite --manifest-path /tmp/before/Cargo.toml
# --smoke: one round of 300 pages, for CI to check that the script still runs.
set -euo pipefail

sizes=()
if [[ ${1:-} == --smoke ]]; then
    shift
    sizes=(--pages 300)
    set -- "${1:-1}"
fi
rounds=${1:-7}
after=${AFTER:-${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}}
before=${BEFORE:-$after}
for bin in "$before" "$after"; do
    [[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite)" >&2; exit 2; }
    "$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run BIN: one crawl with a fresh state and outputs; prints "pages/s cpu-s".
run() {
    rm -rf "$work/state" "$work/out"
    "$1" bench -q --json ${sizes[@]+"${sizes[@]}"} --state "$work/state" --outputs "$work/out" |
        python3 -c "import json, sys; d = json.load(sys.stdin); assert d['correct'], d; print(round(d['pages_per_sec']), round(d['cpu_secs'], 2))"
}

old=()
new=()
for round in $(seq "$rounds"); do
    old+=("$(run "$before")")
    new+=("$(run "$after")")
    echo "round $round: before ${old[-1]}, after ${new[-1]} (pages/s cpu-s)" >&2
done
python3 - "$(printf '%s\n' "${old[@]}")" "$(printf '%s\n' "${new[@]}")" <<'PY'
import statistics, sys
def medians(text):
    rows = [line.split() for line in text.splitlines()]
    return (statistics.median(float(r[0]) for r in rows),
            statistics.median(float(r[1]) for r in rows))
(b, bc), (a, ac) = medians(sys.argv[1]), medians(sys.argv[2])
print(f"median: before {b:.0f} pages/s {bc:.2f} cpu-s, after {a:.0f} pages/s {ac:.2f} cpu-s, "
      f"ratio {a / b:.3f} (syncing the outputs costs {100 * (1 - a / b):.1f}% of pages/s)")
PY
