#!/usr/bin/env bash
# A shared crawl on a Redis Cluster (issue 15): starts a three-master cluster
# on loopback, crawls the test site's virtual hosts (with latency, so the crawl
# is bound by waiting, as a real broad crawl is) once with one process and once
# with four (`crawl --redis` plus `worker`s, each with the same --max-tasks),
# and prints both wall times and their ratio (target: four <= 0.30 x one).
# Then measures Redis memory per seen and per queued URL, summed over the
# masters (INFO memory used_memory), by seeding URLS URLs over 10,000 hosts
# (crates/skitter/examples/redis_cluster_bench.rs); bytes per URL are flat in
# the size (compact listpack buckets), so 10M URLs cost 10x the 1M figure.
# Every process this script starts is stopped by its PID.
#
# Usage: scripts/bench-cluster.sh [--smoke]
# Environment: SKITTER (binary; default target/release/skitter), HOSTS (1000),
# PAGES (9 per host besides /), LATENCY (20ms), MAX_TASKS (10, per process),
# URLS (1000000), SHARDS (16), REDIS_PORT (17101; the masters take it and the
# next two, and their cluster bus ports 10000 above).
# Needs a release build (cargo build --release -p skitter-cli --features
# testsite); the memory step builds its example with cargo. --smoke: 20 hosts of
# 4 pages at 5ms and 20,000 URLs with the debug build, a few seconds, for CI to
# check the script.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
defaults=(1000 9 20ms 1000000 release)
if [[ ${1:-} == --smoke ]]; then
    defaults=(20 4 5ms 20000 debug)
fi
hosts=${HOSTS:-${defaults[0]}}
pages=${PAGES:-${defaults[1]}}
latency=${LATENCY:-${defaults[2]}}
urls=${URLS:-${defaults[3]}}
profile=${defaults[4]}
max_tasks=${MAX_TASKS:-10}
shards=${SHARDS:-16}
base_port=${REDIS_PORT:-17101}

source "$root/scripts/lib-bench.sh"
bench_bin "$profile"
for tool in redis-server redis-cli; do
    command -v "$tool" >/dev/null || { echo "bench-cluster: $tool is not installed" >&2; exit 1; }
done

ports=("$base_port" "$((base_port + 1))" "$((base_port + 2))")
for port in "${ports[@]}" "$((base_port + 10000))" "$((base_port + 10001))" "$((base_port + 10002))"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "bench-cluster: port $port is taken; set REDIS_PORT" >&2
        exit 1
    fi
done

redis_pids=()
stop_cluster() {
    for pid in "${redis_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${redis_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap 'stop_cluster; cleanup' EXIT

for port in "${ports[@]}"; do
    mkdir -p "$work/redis-$port"
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --save '' \
        --appendonly no --dir "$work/redis-$port" --daemonize no \
        >"$work/redis-$port.log" 2>&1 &
    redis_pids+=($!)
done
for port in "${ports[@]}"; do
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.05
    done
done
redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes \
    >"$work/cluster-create.log" 2>&1 || { cat "$work/cluster-create.log" >&2; exit 1; }
for _ in $(seq 200); do
    ok=0
    for port in "${ports[@]}"; do
        redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
    done
    [[ $ok == 3 ]] && break
    sleep 0.1
done
[[ $ok == 3 ]] || { echo "bench-cluster: the cluster never became ok" >&2; exit 1; }
redis="redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"

# The site prints its origin, then `dns IP:PORT`, then the first host's URL.
start_site --pages "$pages" --vhosts "$hosts" --latency "$latency"
for _ in $(seq 100); do
    [[ $(wc -l <"$work/site") -ge 3 ]] && break
    sleep 0.05
done
dns=$(sed -n 's/^dns //p' "$work/site")
site=$(sed -n 3p "$work/site")
[[ -n $dns && $site == http://h0.* ]] || { echo "bench-cluster: no virtual hosts" >&2; exit 1; }

now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }

# crawl_with N NAME: one `crawl --redis` plus N-1 `worker`s; sets `elapsed` to
# the wall time from the first start to the last exit.
crawl_with() {
    local n=$1 name=$2 start waiters=() tries=0
    start=$(now)
    "$bin" -q crawl --redis "$redis" --crawl "$name" --redis-shards "$shards" \
        --span-hosts --domains sites.test --allow-private --dns-server "$dns" \
        --max-tasks "$max_tasks" --per-host 2 --report none "$site" &
    waiters+=($!)
    if [[ $n -gt 1 ]]; then
        # Bounded: a status that never answers (a renamed flag) must fail, not hang.
        until "$bin" -q status --redis "$redis" --crawl "$name" >/dev/null 2>&1; do
            tries=$((tries + 1))
            if [[ $tries -ge 500 ]]; then
                "$bin" -q status --redis "$redis" --crawl "$name" >&2 || true
                echo "bench-cluster: crawl $name never showed up in status" >&2
                exit 1
            fi
            sleep 0.02
        done
        for _ in $(seq 2 "$n"); do
            "$bin" -q worker --redis "$redis" --crawl "$name" --max-tasks "$max_tasks" \
                --report none &
            waiters+=($!)
        done
    fi
    for pid in "${waiters[@]}"; do wait "$pid"; done
    elapsed=$(calc "$(now) - $start")
}

# check NAME: the crawl fetched every page once (html = hosts x (pages + 1)).
check() {
    local html
    html=$("$bin" status --redis "$redis" --crawl "$1" --json |
        sed -n 's/.*"html":\([0-9]*\).*/\1/p')
    if [[ $html != "$((hosts * (pages + 1)))" ]]; then
        echo "bench-cluster: crawl $1 fetched $html HTML pages, expected $((hosts * (pages + 1)))" >&2
        exit 1
    fi
}

crawl_with 1 bench-one
one=$elapsed
check bench-one
crawl_with 4 bench-four
four=$elapsed
check bench-four
for name in bench-one bench-four; do
    "$bin" -q redis-clean --redis "$redis" --crawl "$name" >/dev/null
done
stop_site

release_flag=()
[[ $profile == release ]] && release_flag=(--release)
(cd "$root" && cargo build --quiet "${release_flag[@]}" -p skitter --example redis_cluster_bench)
example="${CARGO_TARGET_DIR:-$root/target}/$profile/examples/redis_cluster_bench"
masters="redis://127.0.0.1:${ports[0]}/,redis://127.0.0.1:${ports[1]}/,redis://127.0.0.1:${ports[2]}/"
"$example" "$redis" "$masters" "$urls" "$shards" | tee "$work/memory"

printf 'site: %s hosts x %s pages, %s latency; each process --max-tasks %s --per-host 2; %s shards on 3 masters\n' \
    "$hosts" "$((pages + 1))" "$latency" "$max_tasks" "$shards"
printf 'one process:    %.2f s\n' "$one"
printf 'four processes: %.2f s\n' "$four"
printf 'ratio:          %.2f (target <= 0.30)\n' "$(calc "$four / $one")"
