#!/usr/bin/env bash
# Stragglers (issue 38's target): a crawl that also meets URLs that hang must
# end within 1.5x the time of the same crawl without them.
#
# Starts `skitter testsite --pages PAGES` and crawls it with `--delay DELAY`
# (so the clean crawl takes about PAGES x DELAY, 90 s by default, as in the
# issue's report), then again with three stragglers as extra roots: `/hang`
# (accepts and never answers), `/slowbody` (sends its headers and a few bytes,
# then nothing) and `/hostile/trickle/3` (a byte every 3 s, without end):
#
#   elsewhere   each straggler on a server of its own (the issue's case: a
#               crawl spanning hosts that hang)
#   same host   the stragglers on the crawled site itself: they also hold the
#               host's politeness slots while they hang, and a host starts in
#               slow start with one slot (see the book's Retries section)
#
# Prints each wall time, its ratio to the clean crawl, and each straggler's
# attempts and error. With BEFORE=path/to/older/skitter the stragglers runs are
# repeated with that binary, for a before/after in one run. The timeouts are
# skitter's defaults (read 30 s, total 120 s, 4 tries); what stragglers cost
# does not depend on the machine's speed, so the figure holds on a busy one.
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
line = f"{label:<10} {r['elapsed']:8.1f} s  {len(r['pages'])} URLs"
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

# The stragglers' own servers (one each), stopped with the script.
others=()
other_pids=()
trap 'kill "${other_pids[@]}" 2>/dev/null || true; cleanup' EXIT
for i in 1 2 3; do
    "$bin" testsite --pages 1 --ignore-stdin >"$work/other$i" 2>/dev/null &
    other_pids+=($!)
done
start_site --pages "$pages"
for i in 1 2 3; do
    for _ in $(seq 100); do
        [[ -s $work/other$i ]] && break
        sleep 0.1
    done
    o=$(head -n1 "$work/other$i")
    [[ $o == http://127.0.0.1:* ]] || { echo "straggler site $i did not start" >&2; exit 1; }
    others+=("${o%/}")
done

echo "== $pages pages, --delay $delay${timeouts:+, ${timeouts[*]}}"
crawl "$bin" "$work/clean.json" "$origin/"
figure clean "$work/clean.json"
for where in elsewhere same; do
    if [[ $where == same ]]; then
        stragglers=("$origin/hang" "$origin/slowbody" "$origin/hostile/trickle/3")
        label="same host"
    else
        stragglers=("${others[0]}/hang" "${others[1]}/slowbody" "${others[2]}/hostile/trickle/3")
        label=elsewhere
    fi
    crawl "$bin" "$work/$where.json" "$origin/" "${stragglers[@]}"
    figure "$label" "$work/$where.json" "$work/clean.json"
    if [[ -n $before ]]; then
        crawl "$before" "$work/before-$where.json" "$origin/" "${stragglers[@]}"
        figure "  before" "$work/before-$where.json" "$work/clean.json"
    fi
done
