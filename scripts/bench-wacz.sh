#!/usr/bin/env bash
# Measures --wacz (issue 34's targets): packing a 20,000-page crawl adds at
# most 10% to its wall time, and memory while packing stays under 64 MB
# beyond the crawl's.
#
# 1. Crawls the test site (PAGES pages of 4 KiB) ROUNDS times each way,
#    interleaved: plain, with --warc, and with --wacz. Prints each run's wall
#    time, CPU seconds (user + system, the crawler's process alone) and peak
#    RSS (/usr/bin/time -v) and the WACZ's size, then the medians and the
#    ratios to the plain crawl. On a machine shared with other work the CPU
#    seconds are the steadier figure.
# 2. Packs the same crawl's WARC (written with --warc) with `skitter wacz
#    create`, alone: the pack time and the packer's own peak RSS.
# 3. Packs a synthetic WARC of CAPTURES tiny resource records (an index far
#    larger than a 20,000-page crawl's) the same way: the packer's peak RSS
#    with many captures, which the external sort of the index keeps flat.
#
# Usage: scripts/bench-wacz.sh [--smoke]
# Env: PAGES (20000), ROUNDS (3), CAPTURES (1000000), TASKS (100), LATENCY
# (0s: the site answers at once, so the crawl is bound by the CPU; e.g. 20ms
# for a crawl bound by the site's answers, as a crawl of a real site is).
# Needs /usr/bin/time (Debian's `time`) and a release build: cargo build
# --release -p skitter-cli --features testsite (--smoke uses the debug build).
set -euo pipefail

pages=${PAGES:-20000}
rounds=${ROUNDS:-3}
captures=${CAPTURES:-1000000}
tasks=${TASKS:-100}
latency=${LATENCY:-0s}
profile=release
if [[ ${1:-} == --smoke ]]; then
    pages=300
    rounds=1
    captures=20000
    profile=debug
fi
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
source "$(dirname "$0")/lib-bench.sh"
bench_bin "$profile"

# measure NAME CMD...: runs CMD under /usr/bin/time -v; "wall_s rss_mb cpu_s".
measure() {
    local name=$1
    shift
    /usr/bin/time -v "$@" >"$work/$name.out" 2>"$work/$name.time"
    python3 - "$work/$name.time" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
secs = 0.0
for part in wall.split(":"):
    secs = secs * 60 + float(part)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
cpu = sum(float(re.search(rf"{k} time \(seconds\): (\S+)", t).group(1)) for k in ("User", "System"))
print(f"{secs:.2f} {rss / 1024:.1f} {cpu:.2f}")
PY
}

start_site --pages "$pages" --latency "$latency"
crawl=("$bin" -q crawl "$origin/" --max-tasks "$tasks" --per-host "$tasks" --no-trap-rules --no-progress)
echo "== $pages pages, --max-tasks $tasks, site latency $latency, $rounds rounds, $bin"
plain=()
warc=()
wacz=()
for round in $(seq "$rounds"); do
    read -r w r c < <(measure plain "${crawl[@]}")
    plain+=("$w $r $c")
    rm -f "$work/round.warc.gz"
    read -r w r c < <(measure warc "${crawl[@]}" --warc "$work/round.warc.gz")
    warc+=("$w $r $c")
    rm -f "$work/site.wacz"
    read -r w r c < <(measure wacz "${crawl[@]}" --wacz "$work/site.wacz")
    wacz+=("$w $r $c")
    size=$(stat -c %s "$work/site.wacz")
    echo "round $round (wall s, peak MB, CPU s): plain ${plain[-1]}; --warc ${warc[-1]}; --wacz $w $r $c, WACZ $((size / 1024)) KiB"
done
python3 - "${plain[@]}" -- "${warc[@]}" -- "${wacz[@]}" <<'PY'
import statistics, sys
runs = [[]]
for a in sys.argv[1:]:
    if a == "--":
        runs.append([])
    else:
        runs[-1].append(tuple(map(float, a.split())))
med = [[statistics.median(r[i] for r in mode) for i in range(3)] for mode in runs]
(pw, pr, pc), (aw, ar, ac), (ww, wr, wc) = med
print(f"median: plain {pw:.2f} s {pr:.1f} MB {pc:.2f} CPU s; --warc {aw:.2f} s {ar:.1f} MB {ac:.2f} CPU s; "
      f"--wacz {ww:.2f} s {wr:.1f} MB {wc:.2f} CPU s")
print(f"--wacz: wall ratio {ww / pw:.3f} (target <= 1.10), CPU ratio {wc / pc:.3f}, RSS +{wr - pr:.1f} MB; "
      f"--warc: wall ratio {aw / pw:.3f}, CPU ratio {ac / pc:.3f}")
PY

# The pack alone, on the crawl's own WARC.
"${crawl[@]}" --warc "$work/crawl.warc.gz" >/dev/null
read -r w r _ < <(measure pack "$bin" wacz create "$work/crawl.warc.gz" -o "$work/pack.wacz")
echo "pack: $pages pages' WARC ($(($(stat -c %s "$work/crawl.warc.gz") / 1024)) KiB) packed in $w s, peak RSS $r MB"
stop_site

# Many captures: a WARC of tiny resource records, written by Python (one gzip
# member each, as any web archive tool writes them).
python3 - "$work/many.warc.gz" "$captures" <<'PY'
import gzip, hashlib, base64, sys, uuid
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as out:
    for i in range(n):
        body = b"capture %d\n" % i
        digest = base64.b32encode(hashlib.sha1(body).digest()).decode()
        head = (
            "WARC/1.1\r\nWARC-Type: resource\r\n"
            f"WARC-Record-ID: <urn:uuid:{uuid.UUID(int=i)}>\r\n"
            f"WARC-Target-URI: http://example.com/{i * 7919 % n}/page\r\n"
            "WARC-Date: 2026-01-01T00:00:00Z\r\n"
            f"WARC-Payload-Digest: sha1:{digest}\r\nWARC-Block-Digest: sha1:{digest}\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        out.write(gzip.compress(head + body + b"\r\n\r\n", compresslevel=1))
PY
read -r w r _ < <(measure many "$bin" wacz create "$work/many.warc.gz" -o "$work/many.wacz")
echo "pack: $captures captures ($(($(stat -c %s "$work/many.warc.gz") / 1048576)) MiB WARC) packed in $w s, peak RSS $r MB"
