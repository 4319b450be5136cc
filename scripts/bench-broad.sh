#!/usr/bin/env bash
# A broad crawl against a deep one (issue 15): the same number of pages on one
# host, and spread over HOSTS virtual hosts of PAGES pages each (the test site's
# --vhosts, names resolved by its DNS server, links across hosts by a power
# law). Per-host politeness does not bind (--per-host is the task cap), so the
# ratio shows what many hosts cost the crawler itself: name lookups, per-host
# state, connections. Interleaved ROUNDS times; prints median pages/s of each,
# their ratio, and peak RSS with the bytes it costs per host.
#
# Usage: scripts/bench-broad.sh [--smoke] [HOSTS=10000] [PAGES=9] [ROUNDS=3]
# Needs a release build: cargo build --release -p skitter-cli
# --smoke: 50 hosts of 4 pages, one round, for CI to check the script runs.
set -euo pipefail

if [[ ${1:-} == --smoke ]]; then
    set -- 50 4 1
fi
hosts=${1:-10000}
pages=${2:-9}
rounds=${3:-3}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release, or set SKITTER)" >&2; exit 2; }
# One host with as many pages (the site's `/` counts as a page of each host).
deep_pages=$(( hosts * (pages + 1) - 1 ))

run() {
    "$bin" bench -q --json "$@" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
print(round(d['pages_per_sec']), round(d['peak_rss_mb'] or 0, 1))"
}

deep=(); broad=(); deep_rss=(); broad_rss=()
for round in $(seq "$rounds"); do
    read -r rate rss < <(run --pages "$deep_pages")
    deep+=("$rate"); deep_rss+=("$rss")
    read -r rate rss < <(run --pages "$pages" --vhosts "$hosts")
    broad+=("$rate"); broad_rss+=("$rss")
    echo "round $round: one host ${deep[-1]} pages/s (${deep_rss[-1]} MB), $hosts hosts ${broad[-1]} pages/s (${broad_rss[-1]} MB)" >&2
done
python3 - "$hosts" "${deep[*]}" "${broad[*]}" "${deep_rss[*]}" "${broad_rss[*]}" <<'PY'
import statistics, sys
hosts = int(sys.argv[1])
deep, broad = ([float(x) for x in a.split()] for a in sys.argv[2:4])
deep_rss, broad_rss = ([float(x) for x in a.split()] for a in sys.argv[4:6])
d, b = statistics.median(deep), statistics.median(broad)
dr, br = statistics.median(deep_rss), statistics.median(broad_rss)
print(f"median: one host {d:.0f} pages/s, {hosts} hosts {b:.0f} pages/s, ratio {b / d:.3f}; "
      f"peak RSS {dr:.1f} MB vs {br:.1f} MB ({max(br - dr, 0) * 1e6 / hosts:.0f} B more per host)")
PY
