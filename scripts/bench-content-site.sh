#!/usr/bin/env bash
# Pages as Markdown on real sites (issue 33): crawls documentation that
# nobody here wrote — the Debian python3.11-doc, postgresql-doc-15 and
# sphinx-doc packages (about 1,900 pages), served by nginx on loopback — once plainly and once with `--markdown DIR`, ROUNDS
# times interleaved, and prints the median pages/s and crawler CPU seconds of
# each and their ratio (the issue's target: >= 0.7x). Then it runs trafilatura
# (PyPI, in a local venv) over the same HTML files, timing only its extract
# calls with time.process_time, beside skitter's CPU per page for the same
# pages from the crawl (the crawler's whole CPU time with --markdown minus
# without, per page), for the speed ratio (target >= 5x). Before that, it
# checks the last Markdown tree against its HTML (bench/content/check-docs.py:
# code blocks, tables, navigation) and prints its totals.
#
# Usage: scripts/bench-content-site.sh [--smoke] [ROUNDS=5]
# Needs nginx, and the docs: $DOCS (a folder holding python3.11/html,
# postgresql-doc-15/html and sphinx-doc/html), else they are fetched with `apt-get download` into
# target/realsite (needs the Debian mirror). SKITTER defaults to
# target/release/skitter. --smoke: one round against whatever HTML is at hand
# (the Readability corpus pages, ungzipped), for CI; the figures mean nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
rounds=${1:-5}
skitter=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $skitter ]] || { echo "no binary at $skitter (cargo build --release -p skitter-cli)" >&2; exit 2; }
work=$(mktemp -d)
# shellcheck source=scripts/lib-docs-server.sh
source "$root/scripts/lib-docs-server.sh"
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

if [[ $smoke == 1 ]]; then
    rounds=1
    docs=$work/docs
    mkdir -p "$docs/site"
    n=0
    for d in bench/content/readability/pages/*/; do
        gunzip -c "$d/source.html.gz" >"$docs/site/$(basename "$d").html"
        n=$((n + 1)); [[ $n -ge 20 ]] && break
    done
    # Pages in Sphinx's and DocBook's markup (bench/content/docs-fixture), for the docs check below.
    cp -r bench/content/docs-fixture/sphinx-doc bench/content/docs-fixture/postgresql-doc-15 bench/content/docs-fixture/rust-doc "$docs/"
    { echo "<html><body>"; for f in "$docs"/site/*.html; do echo "<a href=\"$(basename "$f")\">$(basename "$f")</a>"; done
      echo '<a href="../sphinx-doc/html/basics.html">basics</a> <a href="../postgresql-doc-15/html/app-demo.html">demo</a> <a href="../postgresql-doc-15/html/demo-calls.html">calls</a> <a href="../postgresql-doc-15/html/demo-functions.html">functions</a> <a href="../postgresql-doc-15/html/demo-chapter.html">chapter</a> <a href="../sphinx-doc/html/objects.html">objects</a> <a href="../rust-doc/html/std/demo/fn.demo_min.html">demo_min</a>'
      echo "</body></html>"; } >"$docs/site/index.html"
    starts=(site/index.html)
else
    docs=${DOCS:-${CARGO_TARGET_DIR:-target}/realsite/root/usr/share/doc}
    if [[ ! -d $docs/python3.11/html ]]; then
        mkdir -p target/realsite && (cd target/realsite && apt-get download python3.11-doc postgresql-doc-15 sphinx-doc >/dev/null &&
            for d in *.deb; do dpkg-deb -x "$d" root; done)
        docs=target/realsite/root/usr/share/doc
    fi
    starts=(python3.11/html/index.html postgresql-doc-15/html/index.html sphinx-doc/html/index.html)
fi
docs=$(cd "$docs" && pwd)

serve_docs "$docs" "${starts[0]}" "$smoke"
urls=()
for s in "${starts[@]}"; do urls+=("http://127.0.0.1:$port/$s"); done

# run [FLAGS…]: one crawl; prints "pages wall-s cpu-s".
run() {
    rm -rf "$work/md"
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$skitter" crawl -q --max-tasks 16 --report json "$@" "${urls[@]}" >"$work/report.json"
    python3 - "$work/report.json" "$work/time" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, user, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
print(r["counters"]["html"], wall, user + sys_)
PY
}

plain=() md=()
for i in $(seq "$rounds"); do
    plain+=("$(run)")
    md+=("$(run --markdown "$work/md")")
    echo "round $i: plain ${plain[-1]}  markdown ${md[-1]}"
done
files=$(find "$work/md" -name '*.md' | wc -l)
summary=$(python3 - "$files" "${plain[@]}" -- "${md[@]}" <<'PY'
import statistics, sys
args = sys.argv[2:]
cut = args.index("--")
def med(rows, k): return statistics.median(float(r.split()[k]) for r in rows)
plain, md = args[:cut], args[cut + 1:]
pages = int(plain[0].split()[0])
p_rate, m_rate = pages / med(plain, 1), pages / med(md, 1)
p_cpu, m_cpu = med(plain, 2), med(md, 2)
print(f"pages {pages}, markdown files {sys.argv[1]}")
print(f"plain    {p_rate:.0f} pages/s  cpu {p_cpu:.3f} s ({p_cpu / pages * 1e6:.0f} us/page)")
print(f"markdown {m_rate:.0f} pages/s  cpu {m_cpu:.3f} s ({m_cpu / pages * 1e6:.0f} us/page)")
extra = max(m_cpu - p_cpu, 1e-9) / pages
print(f"markdown / plain: pages/s ratio {m_rate / p_rate:.2f}, extra cpu per page {extra * 1e6:.0f} us")
print(f"EXTRA {extra}")
PY
)
grep -v '^EXTRA' <<<"$summary"
extra=$(sed -n 's/^EXTRA //p' <<<"$summary")

# The last tree against its HTML (bench/content/check-docs.py): every code
# block and table of each page's main content kept, none of the site's
# navigation, by each generator's own markup. A full run prints the totals
# (the figures go in the docs); the smoke run checks the fixture pages
# (their lists too) and fails when the check does, so the check cannot rot.
venv=${CONTENT_VENV:-${CARGO_TARGET_DIR:-target}/content-venv}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import trafilatura, lxml.html' 2>/dev/null; then
    python3 -m venv "$venv" >/dev/null 2>&1 &&
        "$venv/bin/pip" install --quiet 'trafilatura==2.3.1' lxml_html_clean >/dev/null 2>&1 || true
fi
check_py=python3
"$check_py" -c 'import lxml.html' 2>/dev/null || check_py=$venv/bin/python
tree=$(find "$work/md" -mindepth 1 -maxdepth 1 -type d | head -1)
if ! "$check_py" -c 'import lxml.html' 2>/dev/null; then
    echo "!!! SKIPPING the docs check: no python with lxml (pip could not make $venv)"
elif [[ $smoke == 0 ]]; then
    "$check_py" bench/content/check-docs.py "$docs" "$tree" | tail -1 || true
else
    "$check_py" bench/content/check-docs.py --strict-lists "$docs" "$tree"
fi

# trafilatura on the same pages, timing only its extract calls.
if ! "$venv/bin/python" -c 'import trafilatura' 2>/dev/null; then
    echo "!!! SKIPPING trafilatura: no venv with it at $venv and pip could not make one"
    exit 0
fi
for s in "${starts[@]}"; do find "$docs/$(dirname "$s")" -name '*.html'; done >"$work/files"
"$venv/bin/python" - "$work/files" "$extra" <<'PY'
import sys, time, trafilatura
files = open(sys.argv[1]).read().split()
pages = [open(f, "rb").read() for f in files]
t = time.process_time()
for html in pages:
    trafilatura.extract(html, output_format="markdown", include_links=True, include_tables=True, include_images=True)
cpu = time.process_time() - t
per = cpu / len(pages)
print(f"trafilatura {len(pages)} pages {cpu:.2f} cpu-s {per * 1e6:.0f} us/page {len(pages) / cpu:.0f} pages/cpu-s")
print(f"skitter's markdown (whole crawler, extra cpu per page) vs trafilatura: {per / float(sys.argv[2]):.1f}x less cpu per page")
PY
