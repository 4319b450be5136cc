#!/usr/bin/env bash
# Measures --render (issue 17's targets) on a test site where SHARE of the
# pages build their links in JavaScript (inline, by fetching JSON, or after a
# 100 ms timer) and every other page carries a small script too.
#
# Crawls the same site with --render never, auto and always and prints, per
# mode: pages found (of the site's), pages rendered and why, wall time and
# pages/s. Targets: auto finds every page (never misses those only script
# links lead to), renders no more than the script-built pages plus the
# documented false positives (docs/src/guide/render.md, "Render pages that need
# JavaScript"), and runs at >= 0.5x never's pages/s. always is printed beside.
#
# Usage: scripts/bench-render.sh [--smoke]
# Env: PAGES (2000), SHARE (0.1), LATENCY (20ms), TASKS (50), RENDER_TASKS (4),
# MODES ("never auto always"; never and auto are what the ratio needs, always
# takes minutes).
# Needs Chromium (chromium on PATH or $SKITTER_CHROMIUM) and a release build:
# cargo build --release -p skitter-cli --features testsite (--smoke uses the
# debug build).
set -euo pipefail

pages=${PAGES:-2000}
profile=release
if [[ ${1:-} == --smoke ]]; then
    pages=60
    profile=debug
fi
share=${SHARE:-0.1}
latency=${LATENCY:-20ms}
tasks=${TASKS:-50}
render_tasks=${RENDER_TASKS:-4}
modes=${MODES:-never auto always}
source "$(dirname "$0")/lib-bench.sh"
bench_bin "$profile"

start_site --pages "$pages" --fanout 5 --latency "$latency" --script-share "$share"
echo "== $pages pages, $share built by script, latency $latency, --max-tasks $tasks, --render-tasks $render_tasks"
for mode in $modes; do
    "$bin" -q crawl "$origin/" --render "$mode" --render-tasks "$render_tasks" \
        --max-tasks "$tasks" --per-host "$tasks" --no-trap-rules --no-progress \
        --report json >"$work/$mode.json"
    python3 - "$mode" "$work/$mode.json" "$pages" <<'PY'
import json, sys
mode, path, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(path))
c = r["counters"]
found = sum(1 for p in r["pages"] if "/p/" in p["url"] and p.get("kind") == "html")
why = " ".join(f"{k[9:]}={v}" for k, v in sorted(c.items()) if k.startswith("rendered_"))
secs = r["elapsed"]
print(f"{mode:6} found {found}/{pages} pages, rendered {c.get('rendered', 0)} ({why or '-'}), "
      f"failed {c.get('render_failed', 0)}, {secs:.2f} s, {found / max(secs, 1e-9):.0f} pages/s")
print(json.dumps({"found": found, "secs": secs}), file=open(path + ".fig", "w"))
PY
done
python3 - "$work" <<'PY'
import json, os, sys
figs = {m: json.load(open(p)) for m in ("never", "auto", "always")
        if os.path.exists(p := os.path.join(sys.argv[1], m + ".json.fig"))}
speed = lambda f: f["found"] / max(f["secs"], 1e-9)
if "never" in figs:
    print(", ".join(f"{m} / never: pages/s ratio {speed(figs[m]) / max(speed(figs['never']), 1e-9):.2f}"
                    for m in ("auto", "always") if m in figs))
PY
