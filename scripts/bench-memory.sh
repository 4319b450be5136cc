#!/usr/bin/env bash
# Measures whether a crawl's memory stays flat as it grows: crawls the local test
# site (loopback only) at each size with the default --memory-budget and a text
# report, and prints pages/s and peak RSS for each, then checks the report: one
# line per URL, sorted by URL, as many as `Done:` says, every page fetched.
#
# Usage: scripts/bench-memory.sh [--smoke] [PAGES...]   (default 100000 1000000 10000000)
# Needs a release build: cargo build --release -p skitter-cli --features testsite
# The 10,000,000-page crawl takes 10-15 minutes at ~15,000 pages/s and writes
# about 3 GB of report spill files to the temporary directory (TMPDIR) and a
# 0.7 GB report into a scratch directory there; both are removed at the end.
# --smoke: one crawl of 2,000 pages, for CI to check that the script still runs.
set -euo pipefail

sizes=(100000 1000000 10000000)
if [[ ${1:-} == --smoke ]]; then
    shift
    sizes=(2000)
fi
[[ $# -gt 0 ]] && sizes=("$@")
source "$(dirname "$0")/lib-bench.sh"
bench_bin release

printf '%12s %10s %12s %10s %s\n' pages pages/s "peak RSS MB" "wall s" report
failed=0
for pages in "${sizes[@]}"; do
    start_site --pages "$pages"

    status=0
    /usr/bin/time -v "$bin" crawl "$origin/" --max-tasks 100 --per-host 100 --no-progress \
        --report text >"$work/report" 2>"$work/time" || status=$?
    stop_site

    rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$work/time")
    rate=$(sed -n 's/^Finished .*(\([0-9.]*\) urls\/sec)$/\1/p' "$work/report")
    # The per-URL lines sit between the header and the `Finished` line.
    awk '/^Finished / { exit } NR > 1 { print $1 }' "$work/report" >"$work/urls"
    lines=$(wc -l <"$work/urls")
    done_n=$(sed -n 's/^Done: //p' "$work/report")
    html=$(awk '$2 == "html" { print $1 }' "$work/report")
    verdict=ok
    if [[ $status != 0 ]]; then
        verdict="crawl exited $status"
    elif [[ $lines != "$done_n" ]]; then
        verdict="$lines lines for Done: $done_n"
    elif [[ $html != $((pages + 1)) ]]; then
        verdict="html $html, expected $((pages + 1))"
    elif ! LC_ALL=C sort -c "$work/urls" 2>/dev/null; then
        verdict="lines not sorted by URL"
    fi
    printf '%12s %10s %12s %10s %s\n' "$pages" "${rate:-?}" "$((${rss_kb:-0} / 1024))" \
        "${wall:-?}" "$verdict ($lines lines)"
    if [[ $verdict != ok ]]; then
        failed=1
        grep -v -E '^\s+[A-Z].*: ' "$work/time" | head -n 20 >&2 || true
    fi
done
exit "$failed"
