#!/usr/bin/env bash
# Measures what the Markdown tree costs (issue 33's target: `skitter bench`
# with --markdown at >= 0.7x its pages/s without).
#
# Runs the default `skitter bench` (20,000 pages of 4 KiB, --max-tasks 100)
# plain and with --markdown DIR (every page extracted to Markdown and written
# as a file), interleaved ROUNDS times so both see the same machine, then
# prints the median pages/s of each and their ratio, and the median CPU time
# the crawler spent per page (user + system, the site excluded): on a machine
# shared with other work the CPU figure is the steadier one. A run with
# --markdown must give every HTML page its content (the bench checks it).
#
# Usage: scripts/bench-markdown.sh [--smoke] [ROUNDS=7]
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() {
    "$bin" bench -q --json ${sizes[@]+"${sizes[@]}"} "$@" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
if '--markdown' in sys.argv[1:]:
    assert d['content_pages'] == d['pages'], d
print(round(d['pages_per_sec']), round(d['cpu_secs'] / d['pages'] * 1e6))" "$@"
}

plain=()
markdown=()
plain_cpu=()
markdown_cpu=()
for round in $(seq "$rounds"); do
    read -r rate_p cpu_p < <(rate)
    read -r rate_m cpu_m < <(rate --markdown "$tmp/md-$round")
    plain+=("$rate_p")
    plain_cpu+=("$cpu_p")
    markdown+=("$rate_m")
    markdown_cpu+=("$cpu_m")
    # Each round's tree is kept until the end: removing 20,000 files makes
    # ext4 scan the freed inodes when the next round creates its files
    # (`recently_deleted`), a cost of this script's cleanup, not of --markdown.
    echo "round $round: plain $rate_p pages/s ($cpu_p us CPU a page)," \
        "with Markdown $rate_m pages/s ($cpu_m us)" >&2
done
python3 - "${plain[*]}" "${markdown[*]}" "${plain_cpu[*]}" "${markdown_cpu[*]}" <<'PY'
import statistics, sys
plain, md, plain_cpu, md_cpu = ([int(x) for x in a.split()] for a in sys.argv[1:5])
p, m = statistics.median(plain), statistics.median(md)
pc, mc = statistics.median(plain_cpu), statistics.median(md_cpu)
print(f"median: plain {p:.0f} pages/s, with Markdown {m:.0f} pages/s, "
      f"ratio {m / p:.3f} (target >= 0.7); CPU a page: plain {pc:.0f} us, "
      f"with Markdown {mc:.0f} us, ratio {pc / mc:.3f}")
PY
