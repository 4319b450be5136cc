#!/usr/bin/env bash
# skitter beside wget2 on a real documentation site (issue 35): the Debian
# rust-doc package (the Rust books and standard library docs, about 21,000
# pages nobody here wrote), served by nginx on loopback. Per round, crawled
# interleaved by
#   skitter crawl -q --max-tasks 16 --per-host 16 --include PREFIX --report json
#     (no outputs; the --include regex is wget2's --no-parent)
#   wget2 -r -l inf --no-parent --max-threads 16 (writes every file, as wget2 must)
# and prints each tool's wall time, its CPU time (user+sys, from
# /usr/bin/time) per page, and the medians with skitter's wall over wget2's.
# Issue 35's targets: skitter <= 90 us of CPU per page and <= 0.4x wget2's wall.
# Correctness: skitter must report every HTML page wget2 saved (their counts
# are printed; a difference of more than 1% fails the script).
#
# Usage: scripts/bench-realsite.sh [--smoke] [ROUNDS=3]
# Needs nginx (the smoke run falls back to python3 -m http.server), wget2 and
# /usr/bin/time; the docs at $DOCS (a folder holding
# rust-doc/html), else /usr/share/doc/rust-doc/html (apt-get install rust-doc),
# else `apt-get download rust-doc` into target/realsite (needs the Debian
# mirror). SKITTER defaults to target/release/skitter; WGET2_TMP=/dev/shm puts
# wget2's files on tmpfs (docs/src/benchmarks/real-sites.md says why). --smoke: one round
# against a small generated tree, for CI; the figures mean nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
rounds=${1:-3}
skitter=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $skitter ]] || { echo "no binary at $skitter (cargo build --release -p skitter-cli)" >&2; exit 2; }
for tool in wget2 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install wget2 time)" >&2; exit 2; }
done
work=$(mktemp -d)
# shellcheck source=scripts/lib-docs-server.sh
source "$root/scripts/lib-docs-server.sh"
wget2_root=$(wget2_trees "$work")
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work" "$wget2_root"
}
trap cleanup EXIT

[[ $smoke == 1 ]] && rounds=1
rust_docs "$smoke"

serve_docs "$docs" "rust-doc/html/index.html" "$smoke"
start=http://127.0.0.1:$port/rust-doc/html/index.html

# Each prints "pages wall-s cpu-s".
crawl_skitter() {
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$skitter" crawl -q --max-tasks 16 --per-host 16 --include "^${start%index.html}" --report json "$start" >"$work/report.json"
    python3 - "$work/report.json" "$work/time" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
print(r["counters"]["html"], wall, user + sys_)
PY
}
# Round N's wget2 writes its own tree (see wget2_trees).
crawl_wget2() {
    local dir="$wget2_root/$1"
    mkdir "$dir"
    (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$work/time" wget2 -q -r -l inf --no-parent --max-threads 16 --no-robots "$start" || true)
    local pages
    pages=$(find "$dir" -name '*.html' | wc -l)
    echo "$pages $(tail -1 "$work/time" | awk '{print $1, $2 + $3}')"
}

s=() w=()
for i in $(seq "$rounds"); do
    s+=("$(crawl_skitter)")
    w+=("$(crawl_wget2 "$i")")
    echo "round $i: skitter ${s[-1]}  wget2 ${w[-1]}   (pages wall-s cpu-s)"
done
python3 - "${s[@]}" -- "${w[@]}" <<'PY'
import statistics, sys
args = sys.argv[1:]
cut = args.index("--")
sk, wg = args[:cut], args[cut + 1:]
def med(rows, k): return statistics.median(float(r.split()[k]) for r in rows)
sp, wp = int(sk[0].split()[0]), int(wg[0].split()[0])
print(f"pages: skitter {sp:,} HTML pages, wget2 {wp:,} .html files")
print(f"skitter  wall {med(sk, 1):.2f} s  cpu {med(sk, 2):.2f} s  ({med(sk, 2) / sp * 1e6:.0f} us/page)")
print(f"wget2    wall {med(wg, 1):.2f} s  cpu {med(wg, 2):.2f} s  ({med(wg, 2) / max(wp, 1) * 1e6:.0f} us/page)")
# /usr/bin/time reports hundredths: a smoke run's wall may read 0.
print(f"skitter / wget2 wall: {med(sk, 1) / max(med(wg, 1), 0.01):.2f}x (target <= 0.4x); cpu per page target <= 90 us")
if abs(sp - wp) > max(1, wp // 100):
    sys.exit(f"page counts differ by more than 1%: skitter {sp}, wget2 {wp}")
PY
