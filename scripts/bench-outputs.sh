#!/usr/bin/env bash
# Measures what writing WARC + CDXJ + JSONL costs (issue 4's speed figure).
#
# Runs the default `skitter bench` (20,000 pages of 4 KiB, --max-tasks 100)
# without outputs and with --outputs (bench.warc.gz + bench.cdxj + bench.jsonl), interleaved
# ROUNDS times so both see the same machine, then prints the median pages/s of
# each and their ratio. The site and the crawler share the machine's cores, so
# run it on an otherwise idle machine.
#
# Usage: scripts/bench-outputs.sh [--smoke] [ROUNDS=7]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: one round of 300 pages, a few seconds, for CI to check that the script
# still runs and prints its figures.
set -euo pipefail

sizes=()
if [[ ${1:-} == --smoke ]]; then
    shift
    sizes=(--pages 300)
    set -- "${1:-1}"
fi
rounds=${1:-7}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rate() {
    "$bin" bench -q --json ${sizes[@]+"${sizes[@]}"} "$@" | python3 -c "import json, sys; d = json.load(sys.stdin); assert d['correct'], d; print(round(d['pages_per_sec']))"
}

plain=()
outputs=()
for round in $(seq "$rounds"); do
    plain+=("$(rate)")
    rm -rf "$work/out"
    outputs+=("$(rate --outputs "$work/out")")
    echo "round $round: plain ${plain[-1]} pages/s, with outputs ${outputs[-1]} pages/s" >&2
done
python3 - "${plain[*]}" "${outputs[*]}" <<'PY'
import statistics, sys
plain = [int(x) for x in sys.argv[1].split()]
outputs = [int(x) for x in sys.argv[2].split()]
p, o = statistics.median(plain), statistics.median(outputs)
print(f"median: plain {p:.0f} pages/s, with WARC + JSONL {o:.0f} pages/s, "
      f"ratio {o / p:.3f} (outputs cost {100 * (1 - o / p):.1f}% of pages/s)")
PY
