#!/usr/bin/env bash
# Measures an incremental recrawl (issue 16's targets): a first pass over a
# versioned test site, then `--recrawl` after PAGES * CHANGE pages changed.
#
# For each validator mode (`honour`: the site answers conditional requests
# with 304; `ignore`: it always sends the body) it starts
# `skitter testsite --pages PAGES --latency LATENCY --change CHANGE`, crawls it
# into a fresh --state, moves the site to its next pass, recrawls, and prints
# per pass: wall time, body bytes received (the report's *_bytes counters;
# response heads, about the same in both passes, are not counted), 304s, and
# the change counters. Targets (honour): pass 2 moves <= 10% of pass 1's body
# bytes and runs >= 3x faster; (ignore): unchanged pages are still found, by
# payload digest.
#
# With BANDWIDTH (e.g. 400K) the site also moves each body at that many bytes
# per second after the latency, so a body costs transfer time and a 304 does
# not. Without it (the default) every request costs the same LATENCY whether
# it carries a body or not, so a 304 saves no time, only bytes: pass 2 (more
# requests than pass 1) cannot then be faster than pass 1 once both reach the
# latency floor, URLs * LATENCY / TASKS (about 1.0 s and 1.07 s here).
#
# Usage: scripts/bench-recrawl.sh [--smoke]
# Env: PAGES (20000), LATENCY (5ms), CHANGE (0.05), TASKS (100), BANDWIDTH (none).
# Needs a release build: cargo build --release -p skitter-cli --features testsite
set -euo pipefail

pages=${PAGES:-20000}
if [[ ${1:-} == --smoke ]]; then
    pages=300
fi
latency=${LATENCY:-5ms}
change=${CHANGE:-0.05}
tasks=${TASKS:-100}
bandwidth=${BANDWIDTH:-}
source "$(dirname "$0")/lib-bench.sh"
bench_bin release

crawl() { # ORIGIN STATE [FLAGS...]
    local origin=$1 state=$2
    shift 2
    "$bin" -q crawl "$origin/" --state "$state" --max-tasks "$tasks" --per-host "$tasks" \
        --no-trap-rules --no-progress --report json "$@"
}

summary() { # LABEL REPORT.json
    python3 - "$1" "$2" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
c = r["counters"]
body = sum(v for k, v in c.items() if k.endswith("_bytes"))
n304 = sum(1 for p in r["pages"] if p.get("status") == 304)
changes = " ".join(f"{k[7:]}={v}" for k, v in sorted(c.items()) if k.startswith("change_"))
assert r["todo"] == 0 and not r.get("stopped"), r.get("stopped")
print(f"{label}: {r['elapsed']:.2f} s, {len(r['pages'])} URLs, {body} body bytes, "
      f"{n304} x 304 {changes}".rstrip())
print(json.dumps({"secs": r["elapsed"], "bytes": body}), file=open(path + ".fig", "w"))
PY
}

for mode in honour ignore; do
    start_site --pages "$pages" --latency "$latency" --change "$change" \
        --validators "$mode" ${bandwidth:+--bandwidth "$bandwidth"}
    echo "== validators $mode: $pages pages, latency $latency${bandwidth:+, bandwidth $bandwidth/s}," \
        "change $change, --max-tasks $tasks"
    crawl "$origin" "$work/state-$mode" >"$work/p1.json"
    summary "pass 1" "$work/p1.json"
    curl -fsS "$origin/_testsite/next-pass" >/dev/null
    crawl "$origin" "$work/state-$mode" --recrawl >"$work/p2.json"
    summary "pass 2" "$work/p2.json"
    python3 - "$work/p1.json.fig" "$work/p2.json.fig" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"pass 2 / pass 1: bytes {100 * b['bytes'] / max(a['bytes'], 1):.1f}%, "
      f"speed-up {a['secs'] / max(b['secs'], 1e-9):.1f}x")
PY
    "$bin" status "$work/state-$mode" | sed -n '/^pass/,/^ *pending/p' | grep -v pending || true
    stop_site
done
