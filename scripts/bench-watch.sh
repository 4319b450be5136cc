#!/usr/bin/env bash
# Measures what the --metrics endpoint costs a crawl (issue 36's target: scraped
# every second, at most 3% of `skitter bench`'s pages/s).
#
# Runs the default `skitter bench` (20,000 pages of 4 KiB, --max-tasks 100)
# plain and with --metrics while a scraper GETs /metrics every INTERVAL seconds
# (default 1; SCRAPE_INTERVAL=0.1 for a harder case) and /api/status as often,
# interleaved ROUNDS times so both see the same machine, then prints the median
# pages/s of each, their ratio and how many scrapes were answered.
#
# Usage: scripts/bench-watch.sh [--smoke] [ROUNDS=7]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: one round of 300 pages, for CI to check that the script still runs.
set -euo pipefail

# BENCH_ARGS: more `skitter bench` options for both runs (e.g. --pages 5000).
read -r -a sizes <<< "${BENCH_ARGS:-}"
if [[ ${1:-} == --smoke ]]; then
    shift
    sizes+=(--pages 300)
    set -- "${1:-1}"
fi
rounds=${1:-7}
interval=${SCRAPE_INTERVAL:-1}
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Scrapes http://127.0.0.1:$1 every $interval s until killed; the answered
# scrapes are counted in $2.
scraper() {
    # exec: the background job is python itself, so the kill below reaches it.
    exec python3 - "$1" "$interval" "$2" <<'PY'
import sys, time, urllib.request
port, interval, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
answered = 0
while True:
    for path in ("/metrics", "/api/status"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                r.read()
                answered += 1
                open(out, "w").write(str(answered))
        except OSError:
            pass
    time.sleep(interval)
PY
}

rate() {
    "$bin" bench -q --json ${sizes[@]+"${sizes[@]}"} "$@" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['correct'], d
print(round(d['pages_per_sec']))"
}

plain=()
watched=()
scrapes=()
for round in $(seq "$rounds"); do
    plain+=("$(rate)")
    port=$(free_port)
    echo 0 > "$tmp/scrapes"
    scraper "$port" "$tmp/scrapes" &
    pid=$!
    watched+=("$(rate --metrics "127.0.0.1:$port")")
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    scrapes+=("$(cat "$tmp/scrapes")")
    echo "round $round: plain ${plain[-1]} pages/s, scraped ${watched[-1]} pages/s (${scrapes[-1]} answers)" >&2
done
python3 - "${plain[*]}" "${watched[*]}" "${scrapes[*]}" "$interval" <<'PY'
import statistics, sys
plain = [int(x) for x in sys.argv[1].split()]
watched = [int(x) for x in sys.argv[2].split()]
answers = sum(int(x) for x in sys.argv[3].split())
p, w = statistics.median(plain), statistics.median(watched)
print(f"median: plain {p:.0f} pages/s, with --metrics scraped every {sys.argv[4]} s {w:.0f} pages/s, "
      f"ratio {w / p:.3f} (the endpoint costs {100 * (1 - w / p):.1f}% of pages/s; {answers} scrapes answered)")
PY

# What one scrape costs the crawler's process: a crawl held paused (so it
# spends nothing else), SCRAPES GETs of /metrics, its CPU time before and after.
scrapes=${SCRAPES:-2000}
[[ ${sizes[*]} == *300* ]] && scrapes=200
site_port=$(free_port)
"$bin" testsite --port "$site_port" --pages 2000 --latency 1s >/dev/null 2>&1 &
site=$!
port=$(free_port)
"$bin" -q crawl "http://127.0.0.1:$site_port/" --metrics "127.0.0.1:$port" \
    --control-token bench-watch-token-0123 --report none >/dev/null 2>&1 &
crawler=$!
python3 - "$port" "$crawler" "$scrapes" <<'PY'
import json, os, sys, time, urllib.request
port, pid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = f"http://127.0.0.1:{port}"
for _ in range(200):
    try:
        urllib.request.urlopen(base + "/api/status", timeout=2).read()
        break
    except OSError:
        time.sleep(0.05)
req = urllib.request.Request(base + "/control/pause", method="POST",
                             headers={"Authorization": "Bearer bench-watch-token-0123"})
urllib.request.urlopen(req, timeout=5).read()
while json.load(urllib.request.urlopen(base + "/api/status", timeout=5))["in_flight"]:
    time.sleep(0.05)
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
size = len(urllib.request.urlopen(base + "/metrics", timeout=5).read())
before, t0 = cpu(), time.monotonic()
for _ in range(n):
    urllib.request.urlopen(base + "/metrics", timeout=5).read()
spent, wall = cpu() - before, time.monotonic() - t0
print(f"per scrape: {1e6 * spent / n:.0f} us of the crawler's CPU, {size} bytes of metrics, "
      f"{n} scrapes in {wall:.1f} s ({n / wall:.0f}/s)")
PY
kill "$crawler" "$site" 2>/dev/null || true
wait "$crawler" "$site" 2>/dev/null || true
