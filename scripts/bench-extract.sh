#!/usr/bin/env bash
# Measures what structured extraction costs (issue 19's target: five CSS fields
# from every page cost at most 15% of `skitter bench`'s pages/s).
#
# Runs the default `skitter bench` (20,000 pages of 4 KiB, --max-tasks 100)
# plain and with --fields (five CSS fields per page: title, h1, a regex-typed
# integer, the first link as a URL, the paragraph's text), interleaved ROUNDS
# times so both see the same machine, then prints the median pages/s of each
# and their ratio. A run with --fields must extract one item per HTML page.
#
# Usage: scripts/bench-extract.sh [--smoke] [ROUNDS=7]
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

rate() {
    "$bin" bench -q --json ${sizes[@]+"${sizes[@]}"} "$@" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
if '--fields' in sys.argv[1:]:
    assert d['items'] == d['pages'] and d['extract_errors'] == 0, d
print(round(d['pages_per_sec']))" "$@"
}

plain=()
fields=()
for round in $(seq "$rounds"); do
    plain+=("$(rate)")
    fields+=("$(rate --fields)")
    echo "round $round: plain ${plain[-1]} pages/s, with 5 fields ${fields[-1]} pages/s" >&2
done
python3 - "${plain[*]}" "${fields[*]}" <<'PY'
import statistics, sys
plain = [int(x) for x in sys.argv[1].split()]
fields = [int(x) for x in sys.argv[2].split()]
p, f = statistics.median(plain), statistics.median(fields)
print(f"median: plain {p:.0f} pages/s, with 5 CSS fields {f:.0f} pages/s, "
      f"ratio {f / p:.3f} (extraction costs {100 * (1 - f / p):.1f}% of pages/s)")
PY
