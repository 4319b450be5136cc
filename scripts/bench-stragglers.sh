#!/usr/bin/env bash
# Stragglers (issue 38's target): a crawl whose site also has URLs that hang
# must end within 1.5x the time of the same crawl without them.
#
# Starts `skitter testsite --pages PAGES` and crawls it twice with
# `--delay DELAY` (so the clean crawl takes about PAGES x DELAY, 90 s by
# default, as in the issue's report): clean from `/`, then from `/` plus three
# stragglers: `/hang` (accepts and never answers), `/slowbody` (sends its
# headers and a few bytes, then nothing) and `/hostile/trickle/3` (a byte every
# 3 s, without end). Prints both wall times, their ratio, and each
# straggler's attempts and error. With BEFORE=path/to/older/skitter the
# hostile crawl is also run with that binary, for a before/after in one run.
# The crawl's timeouts are skitter's defaults (read 30 s, total 120 s,
# 4 tries); the stragglers' cost does not depend on the machine, so the
# figure holds on a busy one too.
#
# Usage: scripts/bench-stragglers.sh [--smoke]
# Env: PAGES (300), DELAY (300ms), BEFORE (none).
# --smoke: 30 pages, no delay, timeouts scaled down 30x (read 1 s, total 4 s):
# seconds, for CI to check the script still runs.
# Needs a release build: cargo build --release -p skitter-cli --features testsite
set -euo pipefail

pages=${PAGES:-300}
delay=${DELAY:-300ms}
timeouts=()
if [[ ${1:-} == --smoke ]]; then
    pages=30
    delay=0s
    timeouts=(--read-timeout 1s --timeout 4s --connect-timeout 1s)
fi
source "$(dirname "$0")/lib-bench.sh"
bench_bin release
before=${BEFORE:-}

crawl() { # BINARY OUT.json ROOTS...
    local b=$1 out=$2
    shift 2
    "$b" -q crawl "$@" --delay "$delay" "${timeouts[@]}" --no-progress --report json >"$out"
}

figure() { # LABEL REPORT.json [CLEAN.json]
    python3 - "$@" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
assert r["todo"] == 0 and not r.get("stopped"), r.get("stopped")
line = f"{label:<16} {r['elapsed']:8.1f} s  {len(r['pages'])} URLs"
if len(sys.argv) > 3:
    clean = json.load(open(sys.argv[3]))
    line += f"  ratio {r['elapsed'] / clean['elapsed']:.2f}"
print(line)
for p in r["pages"]:
    if p.get("error") and any(s in p["url"] for s in ("/hang", "/slowbody", "/trickle")):
        path = p["url"].split("/", 3)[3]
        print(f"    /{path}: {p['attempts']} attempts, {p['error']['message'][-90:]}")
PY
}

start_site --pages "$pages"
echo "== $pages pages, --delay $delay${timeouts:+, ${timeouts[*]}}"
crawl "$bin" "$work/clean.json" "$origin/"
figure clean "$work/clean.json"
stragglers=("$origin/hang" "$origin/slowbody" "$origin/hostile/trickle/3")
crawl "$bin" "$work/hostile.json" "$origin/" "${stragglers[@]}"
figure "with stragglers" "$work/hostile.json" "$work/clean.json"
if [[ -n $before ]]; then
    crawl "$before" "$work/before.json" "$origin/" "${stragglers[@]}"
    figure "before ($(basename "$before"))" "$work/before.json" "$work/clean.json"
fi
