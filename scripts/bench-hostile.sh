#!/usr/bin/env bash
# What hostile pages cost a crawl (issue 38's "hostile benchmark"): each case
# below is crawled with default settings, and the script prints the crawl's
# wall time, CPU time (user + system), peak RSS, URLs in its report, and
# whether it ended by itself within LIMIT seconds. With BEFORE=path/to/older/skitter
# every case also runs with that binary (against the same test site, served
# by this build), for a before/after in one run.
#
#   pager      /pager/0: an endless pager, the same page under every number
#   links      /hostile/links/1000000 with --max-pages 1: one page of a
#              million distinct links (gated, de-duplicated, queued)
#   gzipbomb   /hostile/gzipbomb/4096: a gzip body inflating to 4 GiB
#   stacked    /hostile/stacked/64: 1 MiB wrapped in 64 stored gzip layers
#   nested     /hostile/noscript/10240: 10 MiB of nested <noscript>
#   robots-503 a site whose robots.txt answers 503 to every request
#
# Usage: scripts/bench-hostile.sh [--smoke]
# Env: LIMIT (120: seconds before a crawl that has not ended is stopped),
#      BEFORE (none).
# --smoke: small sizes and a 20 s limit, for CI to check the script still runs.
# Needs a release build: cargo build --release -p skitter-cli --features testsite
set -euo pipefail

limit=${LIMIT:-120}
links=1000000 bomb=4096 stacked=64 nested=10240
if [[ ${1:-} == --smoke ]]; then
    limit=20 links=1000 bomb=4 stacked=3 nested=64
fi
source "$(dirname "$0")/lib-bench.sh"
bench_bin release
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
before=${BEFORE:-}

# case NAME ORIGIN PATH [FLAGS...]: crawls ORIGIN/PATH with each binary.
case_() {
    local name=$1 origin=$2 path=$3
    shift 3
    local b label
    for b in "$bin" ${before:+"$before"}; do
        label=after
        [[ $b == "$before" && $b != "$bin" ]] && label=before
        local status=0
        /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
            timeout -s INT "$limit" "$b" -q crawl "$origin$path" "$@" \
            --no-progress --report json >"$work/report.json" 2>"$work/err" || status=$?
        python3 - "$name" "$label" "$status" "$limit" "$work/time" "$work/report.json" <<'PY'
import json, sys
name, label, status, limit, timef, reportf = sys.argv[1:]
wall, user, sys_, rss = open(timef).read().split()[-4:]
try:
    r = json.load(open(reportf))
    urls = len(r["pages"])
    ended = "ended" if not r.get("stopped") else "stopped: " + str(r["stopped"])
except (ValueError, KeyError):
    urls, ended = "?", "no report"
if status == "124" or (isinstance(ended, str) and "nterrupt" in ended):
    ended = f"DID NOT END in {limit} s (interrupted)"
cpu = float(user) + float(sys_)
print(f"{name:<10} {label:<6} wall {float(wall):7.2f} s  cpu {cpu:7.2f} s  "
      f"rss {int(rss) / 1024:7.1f} MB  urls {urls:>8}  {ended}")
PY
    done
}

start_site --pages 10
case_ pager "$origin" /pager/0
case_ links "$origin" "/hostile/links/$links" --max-pages 1
case_ gzipbomb "$origin" "/hostile/gzipbomb/$bomb"
case_ stacked "$origin" "/hostile/stacked/$stacked"
case_ nested "$origin" "/hostile/noscript/$nested"
stop_site
start_site --pages 10 --faults robots=1000000000
case_ robots-503 "$origin" /
