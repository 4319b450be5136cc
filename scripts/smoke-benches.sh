#!/usr/bin/env bash
# Runs every benchmark in its smoke mode (a few hundred pages, seconds each) and
# checks that each exits 0 and prints its figures. The figures of a smoke run mean
# nothing; the point is that a benchmark nobody runs cannot rot unnoticed (a
# renamed flag, a changed JSON field). CI runs this after the tests.
#
#   scripts/smoke-benches.sh
#
# Covers every scripts/bench-*.sh (run with --smoke, against the debug binary the
# tests build, which has the `testsite` feature they all need, or $SKITTER) and
# every `cargo bench` target of crates/skitter (run with SKITTER_BENCH_SMOKE=1
# through `cargo test --bench`, which builds in the test profile and so needs no
# release build). A bench script or target without a figure pattern below fails
# the run: add one when adding a benchmark.
# bench-redis.sh and bench-cluster.sh need redis-server (and redis-cli), bench-fetch.sh needs /usr/bin/time, the
# items_db bench PostgreSQL, bench-render.sh chromium, bench-wacz.sh /usr/bin/time, bench-content.sh python3 (and pip for trafilatura),
# bench-check.sh python3 (and lychee, optional: skipped loudly without it), bench-realsite.sh nginx and wget2, bench-wacz-realsite.sh nginx and /usr/bin/time, bench-manyhosts.sh wget2, iproute2 and unshare -m -n,
# bench-render-bare.sh chromium, node and npm (it installs puppeteer-core into target/bare-npm; perf, if it works, for exact CPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [[ -z ${SKITTER:-} ]]; then
    export SKITTER=${CARGO_TARGET_DIR:-$root/target}/debug/skitter
    # Built when missing, or when a plain `cargo build` left one without the feature.
    if ! "$SKITTER" testsite --help >/dev/null 2>&1; then
        cargo build --quiet -p skitter-cli --features testsite
    fi
fi

# What each benchmark prints when it worked (an extended regex, on one line).
declare -A figures=(
    [bench-check.sh]='^folder [0-9]+ pages -c [0-9]+: skitter [0-9.]+ s'
    [bench-broad.sh]='^median: one host [0-9]+ pages/s, [0-9]+ hosts [0-9]+ pages/s, ratio [0-9.]+.* per host, [0-9]+ B per URL'
    [bench-broad.sh-delay]='^delay [0-9.]+s: [0-9]+ hosts, [0-9]+ pages/s against [0-9]+ ready hosts/s, ratio [0-9.]+'
    [bench-faults.sh]='^broad-429 +clean +[0-9]+ pages/s +faults +[0-9]+ pages/s +ratio [0-9.]+'
    [bench-content.sh]='^skitter: [0-9]+ pages, macro P [0-9.]+ R [0-9.]+ F1 [0-9.]+ .*; .* [0-9]+ pages/cpu-s'
    [bench-content-site.sh]='^markdown / plain: pages/s ratio [0-9.]+, extra cpu per page [0-9]+ us'
    [bench-markdown.sh]='^median: plain [0-9]+ pages/s, with Markdown [0-9]+ pages/s, ratio [0-9.]+'
    [bench-extract.sh]='^median: plain [0-9]+ pages/s, with 5 CSS fields [0-9]+ pages/s, ratio [0-9.]+'
    [bench-watch.sh]='^median: plain [0-9]+ pages/s, with --metrics scraped every [0-9.]+ s [0-9]+ pages/s, ratio [0-9.]+'
    [bench-fetch.sh]='Maximum resident set size \(kbytes\): [0-9]+'
    [bench-if-modified.sh]='^-- run 2: WARC [0-9]+ bytes'
    [bench-recrawl.sh]='^pass 2 / pass 1: bytes [0-9.]+%, speed-up [0-9.]+x'
    [bench-memory.sh]='^ +2000 +[0-9.]+ +[0-9]+ +[0-9.]+ ok \('
    [bench-realsite.sh]='^skitter / wget2 wall: [0-9.]+x'
    # Skipped, loudly, where no network namespace can be made.
    [bench-manyhosts.sh]='^skitter / wget2 wall: [0-9.]+x|^SKIPPED bench-manyhosts.sh: '
    [bench-inflight-memory.sh]='round 1: peak RSS [0-9.]+ MB .* KB per extra request in flight'
    [bench-proxies.sh]='^proxies-check [0-9]+ proxies .*elapsed [0-9.]+ s, ideal [0-9.]+ s, ratio [0-9.]+'
    [bench-power.sh]='^median: before [0-9]+ pages/s [0-9.]+ cpu-s, after [0-9]+ pages/s [0-9.]+ cpu-s, ratio [0-9.]+'
    [bench-outputs.sh]='^median: plain [0-9]+ pages/s, with WARC \+ JSONL [0-9]+ pages/s, ratio [0-9.]+'
    [bench-redis.sh]='^ratio: +[0-9.]+'
    [bench-cluster.sh]='^ratio: +[0-9.]+ \(target <= 0.30\)'
    [bench-dependent.sh]='^chains [0-9]+ x [0-9]+ pages -c [0-9]+: elapsed [0-9.]+ s, ideal [0-9.]+ s, ratio [0-9.]+'
    [bench-stragglers.sh]='^same host +[0-9.]+ s +[0-9]+ URLs +ratio [0-9.]+'
    [bench-hostile.sh]='^robots-503 +after +wall +[0-9.]+ s +cpu +[0-9.]+ s +rss +[0-9.]+ MB'
    [bench-wacz-realsite.sh]='^--wacz / plain wall: [0-9.]+x'
    [bench-wacz.sh]='^pack: [0-9]+ captures \([0-9]+ MiB WARC\) packed in [0-9.]+ s, peak RSS [0-9.]+ MB'
    [bench-render.sh]='^auto / never: pages/s ratio [0-9.]+, always / never: pages/s ratio [0-9.]+'
    # Skipped, loudly, without chromium, node or npm (a failure under CI=true).
    [bench-render-bare.sh]='^median of [0-9]+: CPU per rendered page skitter -?[0-9.]+ ms .* bare [0-9.]+ ms: ratio -?[0-9.]+x|^SKIPPED bench-render-bare.sh: '
    [items_db]='^postgres [0-9]+ items, batched: [0-9]+ items/s'
    [frontier]='^pop\+complete [0-9]+ URLs: .*/s'
    [probe]='^probe [0-9]+ names, .*: [0-9]+ resolved in [0-9.]+ s; ideal .*ratio [0-9.]+'
)

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=()

# check NAME COMMAND...: runs it, shows its output, and checks status and figures.
check() {
    local name=$1 status=0 start
    shift
    echo "--- $name: $*"
    start=$(date +%s)
    "$@" >"$out/$name" 2>&1 || status=$?
    cat "$out/$name"
    local pattern=${figures[$name]:-}
    if [[ -z $pattern ]]; then
        echo "FAIL $name: no figure pattern in scripts/smoke-benches.sh" >&2
        failed+=("$name")
    elif [[ $status != 0 ]]; then
        echo "FAIL $name: exited with status $status" >&2
        failed+=("$name")
    elif ! grep -Eq "$pattern" "$out/$name"; then
        echo "FAIL $name: printed no figures matching /$pattern/" >&2
        failed+=("$name")
    else
        echo "ok $name ($(($(date +%s) - start)) s)"
    fi
}

for script in scripts/bench-*.sh; do
    check "$(basename "$script")" "$script" --smoke
done
check bench-broad.sh-delay scripts/bench-broad.sh --delay --smoke
for bench in crates/skitter/benches/*.rs; do
    name=$(basename "$bench" .rs)
    if [[ $name == frontier ]]; then
        for kind in memory disk hosts; do
            check "$name" env SKITTER_BENCH_SMOKE=1 cargo test --quiet -p skitter --bench "$name" -- "$kind"
        done
    else
        check "$name" env SKITTER_BENCH_SMOKE=1 cargo test --quiet -p skitter --bench "$name"
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "smoke-benches: ${#failed[@]} failed: ${failed[*]}" >&2
    exit 1
fi
echo "smoke-benches: every benchmark ran and printed its figures"
