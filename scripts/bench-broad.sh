#!/usr/bin/env bash
# A broad crawl against a deep one (issue 15): the same number of pages on one
# host, and spread over HOSTS virtual hosts of PAGES pages each (the test site's
# --vhosts, names resolved by its DNS server, links across hosts by a power
# law). Per-host politeness does not bind (--per-host is the task cap), so the
# ratio shows what many hosts cost the crawler itself: name lookups, per-host
# state, connections. Interleaved ROUNDS times; prints median pages/s of each,
# their ratio, and peak RSS with the bytes it costs per host (broad against
# deep) and per URL (deep against a 10-page crawl).
#
# --delay mode: one crawl of HOSTS hosts with --delay 1s per host (politeness
# binds): pages/s against the hosts ready per second (HOSTS while every host
# has work; issue 15 asks that they be about equal, the scheduler never idling
# while a host is ready), and the wall time against its floor, PAGES + 1 s.
# A host's first request needs no gap and the site's broken /P/ links count as
# pages too, so a short run comes out a little above 1.
#
# Usage: scripts/bench-broad.sh [--smoke] [HOSTS=10000] [PAGES=9] [ROUNDS=3]
#        scripts/bench-broad.sh --delay [--smoke] [HOSTS=500] [PAGES=9]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: 50 hosts of 4 pages, one round (with --delay: 20 hosts of 2 pages,
# 200 ms apart), for CI to check the script runs.
set -euo pipefail

delay=
if [[ ${1:-} == --delay ]]; then
    shift
    delay=1s
fi
if [[ ${1:-} == --smoke ]]; then
    if [[ -n $delay ]]; then set -- 20 2; delay=200ms; else set -- 50 4 1; fi
fi
hosts=${1:-10000}
pages=${2:-9}
rounds=${3:-3}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }

if [[ -n $delay ]]; then
    hosts=${1:-500}
    "$bin" bench -q --json --pages "$pages" --vhosts "$hosts" --delay "$delay" \
        --max-tasks "$hosts" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
gap = d['delay_ms'] / 1000
rate, ready = d['pages_per_sec'], d['ready_hosts_per_sec']
floor = ($pages + 1) * gap
print(f'delay {gap:g}s: {d[\"hosts\"]} hosts, {rate:.0f} pages/s against {ready:.0f} ready hosts/s, '
      f'ratio {rate / ready:.3f}; wall {d[\"wall_secs\"]:.1f} s against a floor of {floor:.1f} s; '
      f'peak RSS {d[\"peak_rss_mb\"] or 0:.1f} MB')"
    exit 0
fi
# One host with as many pages (the site's `/` counts as a page of each host).
deep_pages=$(( hosts * (pages + 1) - 1 ))

run() {
    "$bin" bench -q --json "$@" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
print(round(d['pages_per_sec']), round(d['peak_rss_mb'] or 0, 1))"
}

# The crawler's own floor, for the bytes each URL adds.
read -r _ base_rss < <(run --pages 10)
deep=(); broad=(); deep_rss=(); broad_rss=()
for round in $(seq "$rounds"); do
    read -r rate rss < <(run --pages "$deep_pages")
    deep+=("$rate"); deep_rss+=("$rss")
    read -r rate rss < <(run --pages "$pages" --vhosts "$hosts")
    broad+=("$rate"); broad_rss+=("$rss")
    echo "round $round: one host ${deep[-1]} pages/s (${deep_rss[-1]} MB), $hosts hosts ${broad[-1]} pages/s (${broad_rss[-1]} MB)" >&2
done
python3 - "$hosts" "${deep[*]}" "${broad[*]}" "${deep_rss[*]}" "${broad_rss[*]}" "$base_rss" "$deep_pages" <<'PY'
import statistics, sys
hosts = int(sys.argv[1])
deep, broad = ([float(x) for x in a.split()] for a in sys.argv[2:4])
deep_rss, broad_rss = ([float(x) for x in a.split()] for a in sys.argv[4:6])
base_rss, urls = float(sys.argv[6]), int(sys.argv[7]) + 1
d, b = statistics.median(deep), statistics.median(broad)
dr, br = statistics.median(deep_rss), statistics.median(broad_rss)
print(f"median: one host {d:.0f} pages/s, {hosts} hosts {b:.0f} pages/s, ratio {b / d:.3f}; "
      f"peak RSS {dr:.1f} MB vs {br:.1f} MB ({max(br - dr, 0) * 1e6 / hosts:.0f} B more per host, "
      f"{max(dr - base_rss, 0) * 1e6 / urls:.0f} B per URL over a 10-page crawl's {base_rss:.1f} MB)")
PY
