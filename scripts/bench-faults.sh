#!/usr/bin/env bash
# Throughput under faults (issue 13's figures): `skitter bench --faults` crawls
# the test site clean and then with each fault mode below, and prints both
# pages/s and their ratio. A run is INCORRECT (and this script fails) unless
# every page was fetched and every failing URL recovered.
#
#   503-once   10% of URLs answer 503 once (no Retry-After), then 200
#   500-twice  10% of URLs answer 500 twice, then 200
#   resets     10% of URLs reset the connection once
#   429-rate   the site answers 429 above 2,000 requests/s (skitter must settle
#              at or below it and complete)
#   outage     every response is 503 for 2 s, 0.3 s into the crawl (skitter backs
#              off host-wide and resumes, losing nothing)
#   broad      20,000 hosts of 10 pages, each faulty on its own: pages 503,
#              robots.txt 503, host names SERVFAIL (see the end of the script)
#   broad-429  the same, each host also answering 429 above 5 requests/s
# each at 0 ms latency (--max-tasks 100) and the 503 case also at 50 ms latency
# (--max-tasks 500). The site and the crawler share the machine's cores, so run
# it on an otherwise idle machine.
#
# Usage: scripts/bench-faults.sh [--smoke]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: 300 pages per run, seconds, for CI to check the script still runs.
set -euo pipefail

pages=(--pages 20000)
broad=(--pages 9 --vhosts 20000)
if [[ ${1:-} == --smoke ]]; then
    pages=(--pages 300)
    broad=(--pages 4 --vhosts 50)
fi
site=("${pages[@]}")
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }

run() {
    local name=$1
    shift
    "$bin" bench -q --json "${site[@]}" "$@" | python3 -c '
import json, sys
name = sys.argv[1]
d = json.load(sys.stdin)
c, f = d["clean"], d["faults"]
assert c["correct"] and f["correct"], d
why = ", ".join("%s x%d" % (r, n) for r, n in sorted((f.get("throttled") or {}).items())) or "none"
if f.get("throttled_hosts", 0) > 1:
    why += " over %d hosts" % f["throttled_hosts"]
print("%-10s clean %7.0f pages/s  faults %7.0f pages/s  ratio %.3f  wall %.2f s  retries %d  throttled: %s"
      % (name, c["pages_per_sec"], f["pages_per_sec"], d["ratio"], f["wall_secs"], f["retries"], why))
' "$name"
}

run 503-once --faults fail=0.1,times=1,status=503,seed=1
run 500-twice --faults fail=0.1,times=2,status=500,seed=2
run resets --faults fail=0.1,times=1,reset=1,seed=3
run 429-rate --faults rate=2000
run outage --faults outage=300ms+2s
run 503-50ms --latency 50ms --max-tasks 500 --faults fail=0.1,times=1,status=503,seed=1
# A broad crawl (20,000 hosts of 10 pages, found from each other) where every
# host is faulty on its own: a fifth of each host's pages 503 twice, each
# robots.txt 503 twice, a tenth of the host names SERVFAIL for their first
# four queries; then the same with each host also answering 429 above 5
# requests/s.
site=("${broad[@]}")
run broad --faults fail=0.2,times=2,status=503,robots=2,dns=0.1,dns-times=4,seed=7
run broad-429 --faults fail=0.2,times=2,status=503,robots=2,dns=0.1,dns-times=4,rate=5,seed=7
