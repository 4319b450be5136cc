#!/usr/bin/env bash
# `skitter check` beside lychee (issue 37's target: at most 0.5x lychee's wall
# time, with the same findings or each difference explained).
#
# Two jobs, each run by both tools at the same concurrency, interleaved ROUNDS
# times so both see the same machine; the median wall time of each and their
# ratio are printed, then the findings of the last round compared:
#
#   folder  a generated docs tree of PAGES HTML files, each with 20 relative
#           links (some to fragments, some broken) and 4 links to "another
#           site" (the local test site on 127.0.0.1, some of them 404s):
#           `skitter check DIR --base URL` against `lychee DIR`.
#   site    the local test site of PAGES pages crawled and checked:
#           `skitter check URL` against lychee given every page's URL (lychee
#           does not crawl; given the pages, it fetches each, reads its links
#           and checks them, which is the same work).
#
# Usage: scripts/bench-check.sh [--smoke] [ROUNDS=5] [PAGES=2000]
# Needs a release build (cargo build --release -p skitter-cli --features
# testsite) and lychee (cargo install lychee --locked; $LYCHEE, or on PATH, or
# /work/tools/lychee/bin/lychee). Without lychee a measuring run fails; the
# smoke run says SKIPPED loudly (and in $SKITTER_SKIPPED) and measures skitter
# alone.
# --smoke: one round of 200 pages, for CI to check that the script still runs.
set -euo pipefail

smoke=0
if [[ ${1:-} == --smoke ]]; then
    smoke=1
    shift
    set -- 1 200
fi
rounds=${1:-5}
pages=${2:-2000}
concurrency=32
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (build with --release --features testsite, or set SKITTER)" >&2; exit 2; }
"$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }
lychee=${LYCHEE:-$(command -v lychee || echo /work/tools/lychee/bin/lychee)}
if [[ ! -x $lychee ]]; then
    # Loud, and recorded where scripts/test.sh collects skips; the smoke run
    # goes on without lychee (it is optional there), a measuring run does not.
    echo "SKIPPED: lychee not found (cargo install lychee --locked): skitter is measured alone" >&2
    [[ -n ${SKITTER_SKIPPED:-} ]] && echo "bench-check.sh: lychee not installed" >>"$SKITTER_SKIPPED"
    [[ $smoke == 0 ]] && { echo "FAIL: a measuring run needs lychee" >&2; exit 1; }
    lychee=""
fi
tmp=$(mktemp -d)
site_pid=""
cleanup() {
    [[ -n $site_pid ]] && kill "$site_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The test site, on a port it picks, printed on its first line.
"$bin" testsite --pages "$pages" --ignore-stdin </dev/null >"$tmp/site.out" 2>&1 &
site_pid=$!
for _ in $(seq 100); do
    port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$tmp/site.out" | head -1 | cut -d: -f2 || true)
    [[ -n $port ]] && break
    sleep 0.1
done
[[ -n ${port:-} ]] || { echo "the test site did not start: $(cat "$tmp/site.out")" >&2; exit 1; }
origin="http://127.0.0.1:$port"

# The docs tree: page i links pages i+1..i+20 (mod PAGES), every fifth to a
# fragment; page i's 7th link is to a missing page and its 9th to a missing
# fragment when i % 50 == 0; 4 links to the test site, the 4th a 404 when
# i % 100 == 0.
python3 - "$tmp/docs" "$pages" "$origin" <<'PY'
import os, sys
root, pages, origin = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(root)
for i in range(pages):
    lines = ["<!doctype html>", f"<title>Page {i}</title>", f"<h1 id=\"top-{i}\">Page {i}</h1>"]
    for k in range(1, 21):
        j = (i + k) % pages
        href = f"p{j}.html"
        if k % 5 == 0:
            href += f"#top-{j}"
        if i % 50 == 0 and k == 7:
            href = f"missing{i}.html"
        if i % 50 == 0 and k == 9:
            href = f"p{j}.html#nowhere"
        lines.append(f"<p><a href=\"{href}\">link {k}</a></p>")
    for k in range(4):
        path = f"/p/{(i * 4 + k) % pages}"
        if i % 100 == 0 and k == 3:
            path = f"/gone/{i}"
        lines.append(f"<p><a href=\"{origin}{path}\">elsewhere {k}</a></p>")
    with open(os.path.join(root, f"p{i}.html"), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
# Every page of the site, for lychee's site job.
{ echo "$origin/"; seq 0 $((pages - 1)) | sed "s|^|$origin/p/|"; } >"$tmp/urls.txt"

# wall SECONDS of a command, its stdout kept in FILE.
timed() {
    local file=$1 start end
    shift
    start=$(date +%s.%N)
    "$@" >"$file" 2>"$file.err" || true
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.3f}')"
}

skitter_folder() {
    timed "$tmp/sk-folder.json" "$bin" check -q "$tmp/docs" --base https://docs.bench.test/ \
        --max-tasks $concurrency --external-tasks $concurrency --per-host $concurrency \
        --allow-private --format json
}
lychee_folder() {
    timed "$tmp/ly-folder.json" "$lychee" --no-progress --cache=false --max-concurrency $concurrency \
        --host-concurrency $concurrency --host-request-interval 0s \
        --include-fragments --format json "$tmp/docs"
}
skitter_site() {
    timed "$tmp/sk-site.json" "$bin" check -q "$origin/" --max-tasks $concurrency --no-progress \
        --per-host $concurrency --no-sitemaps --format json
}
lychee_site() {
    timed "$tmp/ly-site.json" "$lychee" --no-progress --cache=false --max-concurrency $concurrency \
        --host-concurrency $concurrency --host-request-interval 0s \
        --include-fragments --format json --files-from "$tmp/urls.txt"
}

declare -A walls
for job in folder site; do
    for round in $(seq "$rounds"); do
        s=$("skitter_$job")
        walls[skitter-$job]+="$s "
        l=""
        if [[ -n $lychee ]]; then
            l=$("lychee_$job")
            walls[lychee-$job]+="$l "
        fi
        echo "round $round $job: skitter ${s}s${l:+, lychee ${l}s}" >&2
    done
done

python3 - "$tmp" "${walls[skitter-folder]}" "${walls[lychee-folder]:-}" \
    "${walls[skitter-site]}" "${walls[lychee-site]:-}" "$concurrency" "$pages" <<'PY'
import json, os, statistics, sys
tmp = sys.argv[1]
conc, pages = sys.argv[6], sys.argv[7]
def med(s):
    xs = [float(x) for x in s.split()]
    return statistics.median(xs) if xs else None

def skitter_broken(path):
    with open(path) as f:
        report = json.load(f)
    out = set()
    for link in report["links"]:
        if isinstance(link["state"], dict) and "broken" in link["state"]:
            out.add(link["url"])
    return out

def lychee_broken(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path) as f:
        report = json.load(f)
    out = set()
    for _, items in report.get("error_map", {}).items():
        for item in items:
            out.add(item["url"])
    return out

for job, s, l in (("folder", sys.argv[2], sys.argv[3]), ("site", sys.argv[4], sys.argv[5])):
    sk, ly = med(s), med(l)
    line = f"{job} {pages} pages -c {conc}: skitter {sk:.2f} s"
    if ly:
        line += f", lychee {ly:.2f} s, ratio {sk / ly:.2f} (target <= 0.5)"
    print(line)
    ours = skitter_broken(f"{tmp}/sk-{job}.json")
    theirs = lychee_broken(f"{tmp}/ly-{job}.json")
    print(f"  skitter: {len(ours)} broken links")
    if theirs is not None:
        # lychee reports local files as file:// URLs; skitter as URLs under --base.
        norm = lambda u: u.replace("https://docs.bench.test/", "file://" + tmp + "/docs/")
        ours_n = {norm(u) for u in ours}
        print(f"  lychee: {len(theirs)} broken links")
        only_ours = sorted(ours_n - theirs)
        only_theirs = sorted(theirs - ours_n)
        print(f"  only skitter: {len(only_ours)}, only lychee: {len(only_theirs)}")
        for u in only_ours[:5]:
            print(f"    only skitter: {u}")
        for u in only_theirs[:5]:
            print(f"    only lychee: {u}")
PY
