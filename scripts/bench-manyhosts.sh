#!/usr/bin/env bash
# skitter beside wget2 on several real sites at once (issue 35's "many
# hosts"): four Debian documentation packages (rust-doc, python3.11-doc,
# postgresql-doc-15, sphinx-doc; about 23,500 HTML pages nobody here wrote)
# as virtual hosts of one nginx, named rust.docs.test, python.docs.test,
# postgres.docs.test and sphinx.docs.test by a local name server
# (scripts/lib-dns-responder.py: those four names are 127.0.0.1, every other
# name does not exist). All of it runs in a network and mount namespace of the
# script's own (`unshare -m -n`): only its loopback exists there, and
# /etc/resolv.conf points at the local name server, so both tools look the
# names up the same way and no packet can leave the machine, whatever the
# pages link to.
#
# Per round, interleaved:
#   skitter crawl -q --max-tasks 64 --per-host 16 ROOTS... --report json
#   wget2 -r -l inf --max-threads 16, one process per site, the four at once
# and prints each one's wall time and CPU (user+sys, /usr/bin/time), the
# medians, and skitter's wall over wget2's. The issue's target: skitter <= 0.5x
# `wget2 -H`'s wall. wget2 -H is not what runs: Debian's wget2 1.99.1 with
# `-H -D the,four,names` still queues the pages' links to other hosts (Adding
# URL: https://www.python.org/ ...) and retries each failed one, so on a
# machine without the web it did not finish in 5 minutes a site that takes it
# 0.4 s without -H. Four wget2 processes at once are wget2 at its best on four
# hosts, each with skitter's per-host concurrency. Correctness: skitter must
# report every HTML page wget2 saved, site by site (a difference over 1% fails
# the script).
#
# Usage: scripts/bench-manyhosts.sh [--smoke] [ROUNDS=3]
# Needs root (unshare -m -n, bind mounts), nginx, wget2, python3 and
# /usr/bin/time. The docs: DOCS (a folder holding rust-doc/html,
# python3.11/html, postgresql-doc-15/html and sphinx-doc/html), else
# /usr/share/doc where the packages are installed, else `apt-get download`
# of the missing ones into target/realsite (needs the Debian mirror), which
# runs before the script leaves the machine's network.
# SKITTER defaults to target/release/skitter; WGET2_TMP=/dev/shm puts wget2's
# files on tmpfs (docs/src/benchmarks/real-sites.md says why). --smoke: one round against small
# generated sites, to check the script; the figures mean nothing.
set -euo pipefail
args=("$@")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
rounds=${1:-3}
[[ $smoke == 1 ]] && rounds=1
skitter=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $skitter ]] || { echo "no binary at $skitter (cargo build --release -p skitter-cli)" >&2; exit 2; }
for tool in wget2 /usr/bin/time unshare ip python3 curl; do
    command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install wget2 time util-linux iproute2 curl)" >&2; exit 2; }
done
if ! command -v nginx >/dev/null; then
    # A smoke run checks the script, not a figure: Python's server will do.
    [[ $smoke == 1 ]] || { echo "nginx is needed (apt-get install nginx-light)" >&2; exit 2; }
    echo "(smoke: nginx is not installed; serving each site with python3 -m http.server on a port of its own)"
fi
names=(rust python postgres sphinx)

if [[ -z ${SKITTER_MANYHOSTS_INSIDE:-} ]]; then
    # Outside the namespace, where the Debian mirror may be reached: find the
    # docs, or fetch them.
    if [[ $(id -u) != 0 ]] || ! unshare -m -n true 2>/dev/null; then
        why="it needs a network and mount namespace of its own (unshare -m -n, as root with CAP_SYS_ADMIN), which this machine does not allow"
        if [[ $smoke == 1 ]]; then
            echo "SKIPPED bench-manyhosts.sh: $why" >&2
            echo "SKIPPED bench-manyhosts.sh: $why"
            exit 0
        fi
        echo "$why" >&2
        exit 2
    fi
    declare -A dirs=([rust]=rust-doc/html [python]=python3.11/html [postgres]=postgresql-doc-15/html [sphinx]=sphinx-doc/html)
    declare -A packages=([rust]=rust-doc [python]=python3.11-doc [postgres]=postgresql-doc-15 [sphinx]=sphinx-doc)
    roots_found=
    if [[ $smoke == 0 ]]; then
        for n in "${names[@]}"; do
            found=
            for base in ${DOCS:-} /usr/share/doc "${CARGO_TARGET_DIR:-target}/realsite/root/usr/share/doc"; do
                [[ -f $base/${dirs[$n]}/index.html ]] && { found=$base/${dirs[$n]}; break; }
            done
            if [[ -z $found ]]; then
                mkdir -p target/realsite
                (cd target/realsite && apt-get download "${packages[$n]}" >/dev/null && dpkg-deb -x "${packages[$n]}"_*.deb root)
                found=${CARGO_TARGET_DIR:-target}/realsite/root/usr/share/doc/${dirs[$n]}
            fi
            [[ -f $found/index.html ]] || { echo "no ${dirs[$n]}/index.html for ${packages[$n]}" >&2; exit 2; }
            roots_found+="$(cd "$found" && pwd):"
        done
    fi
    export SKITTER_MANYHOSTS_INSIDE=1 SKITTER_MANYHOSTS_DOCS=$roots_found
    exec unshare -m -n --propagation private "$0" "${args[@]}"
fi

# Inside: nothing but this loopback.
ip link set lo up
work=$(mktemp -d)
# shellcheck source=scripts/lib-docs-server.sh
source "$root/scripts/lib-docs-server.sh"
wget2_root=$(wget2_trees "$work")
pids=()
cleanup() {
    [[ ${#pids[@]} -gt 0 ]] && kill "${pids[@]}" 2>/dev/null || true
    rm -rf "$work" "$wget2_root"
}
trap cleanup EXIT
# nginx's worker drops to an unprivileged user: it must read the smoke pages.
chmod 755 "$work"

declare -A docroot
if [[ $smoke == 1 ]]; then
    for n in "${names[@]}"; do
        d=$work/docs/$n
        mkdir -p "$d/sub"
        for i in $(seq 0 29); do
            { echo "<html><body><h1>$n $i</h1>"; for j in 1 2 3; do echo "<a href=\"p$(( (i * 7 + j) % 30 )).html\">next</a>"; done
              echo "<a href=\"https://www.python.org/\">a site elsewhere</a></body></html>"; } >"$d/sub/p$i.html"
        done
        echo '<html><body><a href="sub/p0.html">start</a></body></html>' >"$d/index.html"
        docroot[$n]=$d
    done
else
    IFS=: read -r -a found <<<"${SKITTER_MANYHOSTS_DOCS%:}"
    for i in "${!names[@]}"; do docroot[${names[$i]}]=${found[$i]}; done
fi

declare -A ports
if command -v nginx >/dev/null; then
    port=$(free_port)
    servers=
    for n in "${names[@]}"; do
        ports[$n]=$port
        servers+="  server { listen 127.0.0.1:$port; server_name $n.docs.test; root ${docroot[$n]}; }"$'\n'
    done
    write_nginx_conf "$servers"
    nginx -c "$work/nginx.conf" &
    pids+=($!)
else
    for n in "${names[@]}"; do
        ports[$n]=$(free_port)
        python3 -m http.server --bind 127.0.0.1 --directory "${docroot[$n]}" "${ports[$n]}" >/dev/null 2>&1 &
        pids+=($!)
    done
fi

# The local resolver: the four names, and nothing else.
hostnames=()
for n in "${names[@]}"; do hostnames+=("$n.docs.test"); done
python3 "$root/scripts/lib-dns-responder.py" 127.0.0.1 53 "${hostnames[@]}" &
pids+=($!)
echo "nameserver 127.0.0.1" >"$work/resolv.conf"
mount --bind "$work/resolv.conf" /etc/resolv.conf

roots=()
for n in "${names[@]}"; do roots+=("http://$n.docs.test:${ports[$n]}/index.html"); done
for r in "${roots[@]}"; do
    served=0
    for _ in $(seq 50); do curl -sf -o /dev/null "$r" && { served=1; break; }; sleep 0.1; done
    [[ $served == 1 ]] || { echo "the server or the name server does not answer $r ($(tail -3 "$work/nginx-error.log" 2>/dev/null))" >&2; exit 1; }
done

# Each prints "wall-s cpu-s pages-per-host,..." (hosts in the order of $names).
crawl_skitter() {
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$skitter" crawl -q --max-tasks 64 --per-host 16 --report json "${roots[@]}" >"$work/report.json"
    python3 - "$work/report.json" "$work/time" "${names[@]}" <<'PY'
import json, sys
from urllib.parse import urlsplit
r = json.load(open(sys.argv[1]))
wall, user, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
per = {n: 0 for n in sys.argv[3:]}
for u in r["pages"]:
    if u.get("kind") == "html":
        per[urlsplit(u["url"]).hostname.split(".")[0]] += 1
print(wall, user + sys_, ",".join(str(per[n]) for n in sys.argv[3:]))
PY
}
# Round N's wget2 writes its own tree (see wget2_trees).
crawl_wget2() {
    local dir="$wget2_root/$1"
    mkdir "$dir"
    (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$work/time" bash -c '
        for r in "$@"; do wget2 -q -r -l inf --max-threads 16 --no-robots "$r" & done
        wait' wget2s "${roots[@]}" || true)
    local per=
    for n in "${names[@]}"; do
        per+=${per:+,}$(find "$dir/$n.docs.test:${ports[$n]}" "$dir/$n.docs.test" -name '*.html' 2>/dev/null | wc -l)
    done
    echo "$(tail -1 "$work/time" | awk '{print $1, $2 + $3}') $per"
}

s=() w=()
for i in $(seq "$rounds"); do
    s+=("$(crawl_skitter)")
    w+=("$(crawl_wget2 "$i")")
    echo "round $i (wall-s cpu-s HTML pages of ${names[*]}): skitter ${s[-1]}; wget2 ${w[-1]}"
done
python3 - "${s[@]}" -- "${w[@]}" <<'PY'
import statistics, sys
args = sys.argv[1:]
cut = args.index("--")
sk, wg = args[:cut], args[cut + 1:]
def med(rows, k): return statistics.median(float(r.split()[k]) for r in rows)
def pages(rows): return [int(p) for p in rows[0].split()[2].split(",")]
sp, wp = pages(sk), pages(wg)
print(f"HTML pages per site: skitter {sp} ({sum(sp):,}), wget2 {wp} ({sum(wp):,})")
for name, rows, n in (("skitter", sk, sum(sp)), ("wget2 x4", wg, sum(wp))):
    print(f"{name:9} wall {med(rows, 0):.2f} s  cpu {med(rows, 1):.2f} s  ({med(rows, 1) / max(n, 1) * 1e6:.0f} us/page)")
# /usr/bin/time reports hundredths: a smoke run's wall may read 0.
print(f"skitter / wget2 wall: {med(sk, 0) / max(med(wg, 0), 0.01):.2f}x (target <= 0.5x)")
for site, (a, b) in enumerate(zip(sp, wp)):
    if abs(a - b) > max(1, b // 100):
        sys.exit(f"site {site}: skitter found {a} HTML pages, wget2 saved {b}")
PY
