#!/usr/bin/env bash
# What --wacz adds to a crawl of a real site over a network path (issue 34's
# target: packing a 20,000-page crawl adds at most 10% to its wall time).
#
# The Debian rust-doc package (about 21,600 pages nobody here wrote) is served
# by nginx on loopback behind `skitter testsite --relay`, a delay line that
# holds every byte for half of RTT in each direction (a network path of that
# round-trip time; `tc netem` is not available in this container). Per round,
# interleaved, skitter crawls it
#   plain:   skitter crawl -q --max-tasks 16 --per-host 16 --include PREFIX --report json
#   --wacz:  the same with --wacz FILE
# and the script prints each run's wall time and CPU seconds (user + system,
# /usr/bin/time, the crawler's process alone), the medians and --wacz's wall
# over plain's. Correctness: both crawls must report the same HTML pages, and
# every WACZ must pass `skitter wacz validate` (and the Webrecorder validator
# when WACZ_VALIDATOR names its `wacz` program).
#
# Usage: scripts/bench-wacz-realsite.sh [--smoke] [ROUNDS=3]
# Env: RTT (20ms), SKITTER (target/release/skitter, built with --features
# testsite), DOCS (a folder holding rust-doc/html; else as
# scripts/bench-realsite.sh finds it). --smoke: one round against a small
# generated tree, for CI; the figures mean nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
rounds=${1:-3}
rtt=${RTT:-20ms}
skitter=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $skitter ]] || { echo "no binary at $skitter (cargo build --release -p skitter-cli --features testsite)" >&2; exit 2; }
"$skitter" testsite --help >/dev/null 2>&1 || { echo "$skitter has no testsite command (build it with --features testsite)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
# shellcheck source=scripts/lib-docs-server.sh
source "$root/scripts/lib-docs-server.sh"
relay_pid=
cleanup() {
    [[ -n $relay_pid ]] && kill "$relay_pid" 2>/dev/null || true
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

[[ $smoke == 1 ]] && rounds=1
rust_docs "$smoke"

serve_docs "$docs" "rust-doc/html/index.html" "$smoke"
# The delay line in front of nginx; it prints its URL first. A fifo keeps
# its standard input open (it stops when that closes) until cleanup.
mkfifo "$work/relay-in"
"$skitter" testsite --relay "127.0.0.1:$port" --rtt "$rtt" <"$work/relay-in" >"$work/relay-out" 2>&1 &
relay_pid=$!
exec 3>"$work/relay-in"
for _ in $(seq 100); do [[ -s $work/relay-out ]] && break; sleep 0.05; done
origin=$(head -1 "$work/relay-out")
[[ $origin == http://* ]] || { echo "the relay did not start: $(cat "$work/relay-out")" >&2; exit 1; }
start=${origin%/}/rust-doc/html/index.html
curl -sf -o /dev/null "$start" || { echo "no answer through the relay for $start" >&2; exit 1; }
if [[ $smoke == 0 ]]; then
    # One crawl not measured: nginx's and the kernel's caches warm for both.
    "$skitter" crawl -q --max-tasks 16 --per-host 16 --include "^${start%index.html}" "$start" >/dev/null
fi

# crawl NAME [FLAGS]: prints "html-pages wall-s cpu-s".
crawl() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$skitter" crawl -q --max-tasks 16 --per-host 16 --include "^${start%index.html}" --report json "$@" "$start" >"$work/$name.json"
    python3 - "$work/$name.json" "$work/time" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
print(r["counters"]["html"], wall, user + sys_)
PY
}

plain=() wacz=()
for i in $(seq "$rounds"); do
    plain+=("$(crawl plain)")
    wacz+=("$(crawl wacz --wacz "$work/site.wacz")")
    "$skitter" wacz validate "$work/site.wacz" >"$work/validate" || { cat "$work/validate" >&2; exit 1; }
    if [[ -n ${WACZ_VALIDATOR:-} ]]; then
        "$WACZ_VALIDATOR" validate -f "$work/site.wacz" >"$work/validate" 2>&1 || { cat "$work/validate" >&2; exit 1; }
    fi
    size=$(stat -c %s "$work/site.wacz")
    rm -f "$work/site.wacz"
    echo "round $i: plain ${plain[-1]}  --wacz ${wacz[-1]} ($((size / 1048576)) MiB, valid)   (pages wall-s cpu-s)"
done
python3 - "$rtt" "${plain[@]}" -- "${wacz[@]}" <<'PY'
import statistics, sys
rtt, args = sys.argv[1], sys.argv[2:]
cut = args.index("--")
plain, wacz = args[:cut], args[cut + 1:]
def med(rows, k): return statistics.median(float(r.split()[k]) for r in rows)
pages = {int(r.split()[0]) for r in plain + wacz}
if len(pages) != 1:
    sys.exit(f"the crawls found different numbers of HTML pages: {sorted(pages)}")
print(f"{pages.pop():,} HTML pages through a {rtt} round trip, 16 in flight")
print(f"plain   wall {med(plain, 1):.2f} s  cpu {med(plain, 2):.2f} s")
print(f"--wacz  wall {med(wacz, 1):.2f} s  cpu {med(wacz, 2):.2f} s")
# /usr/bin/time reports hundredths: a smoke run's wall may read 0.
print(f"--wacz / plain wall: {med(wacz, 1) / max(med(plain, 1), 0.01):.3f}x (target <= 1.10x)")
PY
