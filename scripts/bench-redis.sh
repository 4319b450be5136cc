#!/usr/bin/env bash
# Does a shared Redis crawl scale out? Crawls the local test site (with
# latency, so the crawl is bound by waiting, as a real one is) once with one
# worker and once with two, each worker with the same --max-tasks, and prints
# both wall times and their ratio (target: two workers <= 0.6 x one).
# Everything runs on loopback: a private redis-server, `skitter testsite`, and
# the crawlers; every process this script starts is stopped by its PID.
#
# Usage: scripts/bench-redis.sh [--smoke]
# Environment: SKITTER (binary; default: cargo build --release --features
# testsite), PAGES (2000), LATENCY (50ms), MAX_TASKS (20, per worker), PER_HOST
# (100), REDIS_PORT (16479).
# --smoke: 200 pages at 5ms (PAGES and LATENCY still win), a few seconds, for CI
# to check that the script still runs and prints its figures.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
defaults=(2000 50ms)
if [ "${1:-}" = --smoke ]; then
    defaults=(200 5ms)
fi
pages=${PAGES:-${defaults[0]}}
latency=${LATENCY:-${defaults[1]}}
max_tasks=${MAX_TASKS:-20}
per_host=${PER_HOST:-100}
port=${REDIS_PORT:-16479}

if [ -z "${SKITTER:-}" ]; then
    (cd "$root" && cargo build --release --quiet -p skitter-cli --features testsite)
    SKITTER="${CARGO_TARGET_DIR:-$root/target}/release/skitter"
fi
command -v redis-server >/dev/null || { echo "bench-redis: redis-server is not installed" >&2; exit 1; }
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "bench-redis: port $port is taken; set REDIS_PORT" >&2
    exit 1
fi

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work" --daemonize no >"$work/redis.log" 2>&1 &
pids+=($!)
redis="redis://127.0.0.1:$port/"

# The site prints its URL on its first line and serves until killed.
"$SKITTER" testsite --pages "$pages" --latency "$latency" --ignore-stdin >"$work/site.txt" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do
    site=$(head -n1 "$work/site.txt" 2>/dev/null || true)
    [ -n "$site" ] && break
    sleep 0.05
done
[ -n "$site" ] || { echo "bench-redis: the test site did not start" >&2; exit 1; }
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }

# crawl_with N NAME: one `crawl --redis` plus N-1 `worker`s; sets `elapsed` to
# the wall time from the first start to the last exit.
crawl_with() {
    local n=$1 name=$2 start waiters=()
    start=$(now)
    "$SKITTER" -q crawl --redis "$redis" --crawl "$name" --max-tasks "$max_tasks" \
        --per-host "$per_host" --report none "$site" &
    waiters+=($!)
    pids+=($!)
    if [ "$n" -gt 1 ]; then
        # Bounded: a status that never answers (a renamed flag) must fail, not hang.
        local tries=0
        until "$SKITTER" -q status --redis "$redis" --crawl "$name" >/dev/null 2>&1; do
            tries=$((tries + 1))
            if [ "$tries" -ge 500 ]; then
                "$SKITTER" -q status --redis "$redis" --crawl "$name" >&2 || true
                echo "bench-redis: crawl $name never showed up in status" >&2
                exit 1
            fi
            sleep 0.02
        done
        for _ in $(seq 2 "$n"); do
            "$SKITTER" -q worker --redis "$redis" --crawl "$name" --max-tasks "$max_tasks" \
                --report none &
            waiters+=($!)
            pids+=($!)
        done
    fi
    for pid in "${waiters[@]}"; do wait "$pid"; done
    elapsed=$(calc "$(now) - $start")
}

# check NAME: the crawl fetched every page once (html = pages + the root).
check() {
    local html
    html=$("$SKITTER" status --redis "$redis" --crawl "$1" --json |
        sed -n 's/.*"html":\([0-9]*\).*/\1/p')
    if [ "$html" != "$((pages + 1))" ]; then
        echo "bench-redis: crawl $1 fetched $html HTML pages, expected $((pages + 1))" >&2
        exit 1
    fi
}

crawl_with 1 bench-one
one=$elapsed
check bench-one
crawl_with 2 bench-two
two=$elapsed
check bench-two
for name in bench-one bench-two; do
    "$SKITTER" -q redis-clean --redis "$redis" --crawl "$name" >/dev/null
done

printf 'site: %s pages, %s latency; each worker --max-tasks %s --per-host %s\n' \
    "$pages" "$latency" "$max_tasks" "$per_host"
printf 'one worker:  %.2f s\n' "$one"
printf 'two workers: %.2f s\n' "$two"
printf 'ratio:       %.2f (target <= 0.60)\n' "$(calc "$two / $one")"
