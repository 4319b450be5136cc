#!/usr/bin/env bash
# Measures the proxy verifier and crawling through a proxy pool, on loopback.
#
# 1. `skitter proxies check` over N test proxies (`skitter testsite --proxies`:
#    good, dead = nothing listening, slow = answer after a minute, refuse = 403),
#    at -c C --timeout T against a page of the test site. Prints the elapsed
#    time, the ideal and their ratio (issue 19's target: at most 1.2).
#
#    The ideal is what a perfect scheduler with C slots needs: every slow proxy
#    holds a slot for exactly T, so they take ceil(S / C) waves of T; the good,
#    dead and refusing ones answer at once, taking (G x the good ones' median
#    latency) / C of slot time on top. ideal = ceil(S / C) x T + G x p50 / C.
#
# 2. Crawl pages/s of the same site directly and through a pool of 4 good
#    proxies (round-robin), --max-tasks 100.
#
# Usage: scripts/bench-proxies.sh [--smoke]
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# --smoke: 100 proxies at -c 20 --timeout 500ms and 200 pages, a few seconds,
# for CI to check that the script still runs (the figures mean nothing then).
set -euo pipefail

good=700 dead=100 slow=100 refuse=100 concurrency=200 timeout_s=2 pages=5000
if [[ ${1:-} == --smoke ]]; then
    good=70 dead=10 slow=10 refuse=10 concurrency=20 timeout_s=0.5 pages=200
fi
total=$((good + dead + slow + refuse))
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# start_site NAME ARGS...: a test site (and its proxies) in the background;
# sets $origin once it serves and its proxy list, if any, is written.
start_site() {
    local name=$1
    shift
    "$bin" testsite --ignore-stdin "$@" >"$work/$name.url" 2>/dev/null &
    pids+=($!)
    for _ in $(seq 100); do
        [[ -s $work/$name.url ]] && { [[ $* != *--proxies* ]] || [[ -s $work/$name.list ]]; } && break
        sleep 0.1
    done
    origin=$(head -n1 "$work/$name.url")
    [[ $origin == http://127.0.0.1:* ]] || { echo "test site $name did not start" >&2; exit 1; }
}

now() { date +%s.%N; }

# 1. The verifier.
start_site check --pages 10 --proxies "good=$good,dead=$dead,slow=$slow,refuse=$refuse" \
    --proxy-slow 60s --proxy-list-out "$work/check.list"
sleep 0.5 # the last proxies' listeners
start=$(now)
status=0
"$bin" proxies check "$work/check.list" --test-url "${origin}p/1" -c "$concurrency" \
    --timeout "${timeout_s}s" -o "$work/good.list" >"$work/check.out" 2>"$work/check.err" || status=$?
end=$(now)
# Status 1 (some bad) is expected; 2 or 130 is a failure.
if [[ $status -gt 1 ]]; then
    echo "bench-proxies: proxies check exited with $status:" >&2
    head -n 20 "$work/check.err" >&2
    exit 1
fi
summary=$(tail -n1 "$work/check.err")
echo "$summary"
good_found=$(grep -c '^+ ' "$work/check.out" || true)
if [[ $good_found != "$good" ]]; then
    echo "bench-proxies: INCORRECT: $good_found good proxies found, $good expected" >&2
    exit 1
fi
p50=$(sed -E 's/.*p50 ([0-9.]+)ms.*/\1/' <<<"$summary")
awk -v s="$start" -v e="$end" -v slow="$slow" -v c="$concurrency" -v t="$timeout_s" \
    -v g="$good" -v p50="$p50" -v n="$total" 'BEGIN {
    elapsed = e - s
    waves = int((slow + c - 1) / c)
    ideal = waves * t + g * p50 / 1000 / c
    printf "proxies-check %d proxies (good %d, slow %d) -c %d --timeout %ss: elapsed %.3f s, ideal %.3f s, ratio %.3f\n",
        n, g, slow, c, t, elapsed, ideal, elapsed / ideal
}'

# 2. Crawling through a pool of 4 against direct.
start_site crawl --pages "$pages" --proxies good=4 --proxy-list-out "$work/crawl.list"
rate() {
    "$bin" crawl --max-tasks 100 --per-host 100 --ignore-robots --report text -q "$@" "$origin" |
        sed -n -E 's/^Finished ([0-9]+) urls.* \(([0-9.]+) urls\/sec\)$/\1 \2/p'
}
read -r direct_n direct_rate <<<"$(rate)"
read -r pool_n pool_rate <<<"$(rate --proxy-list "$work/crawl.list")"
if [[ $direct_n != "$pool_n" || $direct_n -le $pages ]]; then
    echo "bench-proxies: INCORRECT: $direct_n URLs direct, $pool_n through the pool" >&2
    exit 1
fi
awk -v d="$direct_rate" -v p="$pool_rate" -v n="$direct_n" 'BEGIN {
    printf "crawl %d URLs: direct %.0f pages/s, through 4 proxies %.0f pages/s, ratio %.3f\n", n, d, p, p / d
}'
