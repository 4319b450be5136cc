#!/usr/bin/env bash
# Rendering against a bare Chromium (issue 35's last target): the CPU per page
# skitter's renderer costs, against Debian's Chromium driven by a minimal
# DevTools client (puppeteer-core: open, navigate, read the DOM, tabs reused)
# over the same pages; and --render auto's wall against never's plus the
# renders at the bare cost.
#
# On the test site of scripts/bench-render.sh (PAGES pages, --fanout 5,
# --latency LATENCY, --script-share SHARE), per round:
#   always  skitter crawl --render always from the root: the pages it renders
#           are the list every other run uses
#   same    skitter crawl --render never with those pages as its roots: the
#           same pages without rendering, so always - same is the renders' cost
#   bare    node scripts/lib-bare-chromium.mjs over that list with as many
#           tabs as --render-tasks: skitter's Chromium arguments, navigate,
#           load event, the same settle rule (1 s of virtual page time under
#           pauseIfNetworkFetchesPending), page.content()
#   never   skitter crawl --render never from the root
#   auto    skitter crawl --render auto from the root
# Every run's CPU is that of its whole process tree (skitter or node, and every
# Chromium process), by scripts/lib-cputree.py: `perf stat -e task-clock`,
# whose counters follow every task whoever reaps it. /usr/bin/time is not used:
# the CPU of the renderers of a browser skitter ends (by killing its process
# group) never reaches the crawl's rusage, which showed under a third of the
# tree's CPU; its figure is printed beside as `rusage`.
#
# Prints per round and as medians: pages rendered by each, CPU per rendered
# page (skitter: (always - same) / rendered, and raw always / rendered; bare:
# its tree / rendered), skitter / bare against the target <= 1.5x, and auto's
# wall against never's + (pages auto rendered x bare wall per page per tab /
# tabs) x 1.3, the bare wall per page per tab being the bare render loop's
# wall / pages x tabs (Chromium's start not included).
#
# Usage: scripts/bench-render-bare.sh [--smoke]
# Env: PAGES (300), ROUNDS (2), SHARE (0.1), LATENCY (20ms), TASKS (50),
# RENDER_TASKS (4), PUPPETEER_CORE_VERSION (24.43.1, installed with npm into
# target/bare-npm and kept there).
# Needs chromium (or $SKITTER_CHROMIUM), node and npm, python3, perf for exact
# figures (without it the sum of /proc samples, a little low, is used and
# said), and a release build with --features testsite (--smoke: the debug
# build, 20 pages, one round; the figures mean nothing; without chromium,
# node or npm it prints "SKIPPED bench-render-bare.sh: why" and passes, but
# not under CI=true). As root, both browsers keep their sandbox in a user
# namespace (unshare --map-user), as skitter does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

pages=${PAGES:-300}
rounds=${ROUNDS:-2}
profile=release
smoke=0
if [[ ${1:-} == --smoke ]]; then
    smoke=1
    pages=20
    rounds=1
    profile=debug
fi
share=${SHARE:-0.1}
latency=${LATENCY:-20ms}
tasks=${TASKS:-50}
tabs=${RENDER_TASKS:-4}
version=${PUPPETEER_CORE_VERSION:-24.43.1}
chromium=${SKITTER_CHROMIUM:-chromium}

# missing WHY: a smoke run says so loudly and passes; a real run fails, and
# so does any run under CI=true, where .ci/run installs all of it.
missing() {
    if [[ $smoke == 1 && ${CI:-} != true ]]; then
        echo "SKIPPED bench-render-bare.sh: $1" >&2
        echo "SKIPPED bench-render-bare.sh: $1"
        exit 0
    fi
    echo "$1" >&2
    exit 2
}
command -v "$chromium" >/dev/null || missing "no Chromium ($chromium; apt-get install chromium, or set SKITTER_CHROMIUM)"
for tool in node npm python3; do
    command -v "$tool" >/dev/null || missing "$tool is needed (apt-get install nodejs npm python3)"
done

source "$(dirname "$0")/lib-bench.sh"
bench_bin "$profile"

# puppeteer-core, pinned, installed once into target/.
npm_dir=${CARGO_TARGET_DIR:-$root/target}/bare-npm
have=$(node -p "require('$npm_dir/node_modules/puppeteer-core/package.json').version" 2>/dev/null || true)
if [[ $have != "$version" ]]; then
    echo "(installing puppeteer-core@$version into $npm_dir)"
    mkdir -p "$npm_dir"
    npm install --prefix "$npm_dir" --no-save --no-audit --no-fund --loglevel=error \
        "puppeteer-core@$version" >&2
fi
export NODE_PATH=$npm_dir/node_modules

# The bare browser keeps its sandbox the way skitter's does: as root, in a
# user namespace where it is uid 1000 (crates/skitter/src/render/process.rs).
bare_chromium=$(command -v "$chromium")
if [[ $(id -u) == 0 ]]; then
    if unshare --user --map-user=1000 --map-group=1000 true 2>/dev/null; then
        bare_chromium=$work/chromium-userns
        printf '#!/bin/sh\nexec unshare --user --map-user=1000 --map-group=1000 %q "$@"\n' \
            "$(command -v "$chromium")" >"$bare_chromium"
        chmod +x "$bare_chromium"
    else
        echo "(no user namespace: the bare Chromium runs with --no-sandbox; see render_unsandboxed in skitter's report)"
        export BARE_NO_SANDBOX=1
    fi
fi

# skitter's Chromium arguments, read from its source so the bare browser's
# cannot drift from them: process.rs's BASE_ARGS (puppeteer adds its own
# --remote-debugging-*) and browser.rs's --disable-gpu (its closed proxy is
# left out: the bare browser fetches the pages itself).
BARE_ARGS=$(
    sed -n '/^const BASE_ARGS/,/^];/p' crates/skitter/src/render/process.rs | grep -o '"--[^"]*"' | tr -d '"' | grep -v '^--remote-debugging-port'
    sed -n '/^const NO_NETWORK/,/^];/p' crates/skitter/src/render/browser.rs | grep -o '"--disable-gpu"' | tr -d '"'
)
export BARE_ARGS
[[ $(wc -l <<<"$BARE_ARGS") -ge 20 ]] || { echo "cannot read skitter's Chromium arguments from crates/skitter/src/render/ (got: $BARE_ARGS)" >&2; exit 1; }

start_site --pages "$pages" --fanout 5 --latency "$latency" --script-share "$share"
echo "== $pages pages, $share built by script, latency $latency, --max-tasks $tasks, --render-tasks $tabs (bare: $tabs tabs), puppeteer-core $version, $("$chromium" --version 2>/dev/null | head -n1)"

# crawl NAME MODE ROOTS...: one skitter crawl, its report in $work/NAME.json,
# its tree's CPU in $work/NAME.cpu.
crawl() {
    local name=$1 mode=$2
    shift 2
    python3 scripts/lib-cputree.py "$work/$name.cpu" -- "$bin" -q crawl "$@" --render "$mode" \
        --render-tasks "$tabs" --max-tasks "$tasks" --per-host "$tasks" --no-trap-rules \
        --no-progress --report json >"$work/$name.json"
}

for round in $(seq "$rounds"); do
    crawl "always.$round" always "$origin/"
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("\n".join(p["url"] for p in r["pages"] if p.get("rendered")))' "$work/always.$round.json" >"$work/urls.$round"
    mapfile -t urls <"$work/urls.$round"
    if [[ ${#urls[@]} -eq 0 ]]; then
        echo "skitter --render always rendered no page; its counters:" >&2
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["counters"])' "$work/always.$round.json" >&2
        exit 1
    fi
    crawl "same.$round" never "${urls[@]}"
    python3 scripts/lib-cputree.py "$work/bare.$round.cpu" -- \
        node scripts/lib-bare-chromium.mjs "$work/urls.$round" "$tabs" "$bare_chromium" >"$work/bare.$round.json"
    crawl "never.$round" never "$origin/"
    crawl "auto.$round" auto "$origin/"
    python3 - "$work" "$round" "$tabs" "$pages" "$share" <<'PY'
import json, sys
work, rnd, tabs, pages, share = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
load = lambda name: json.load(open(f"{work}/{name}.{rnd}.json"))
cpu = lambda name: json.load(open(f"{work}/{name}.{rnd}.cpu"))
rendered = lambda name: load(name)["counters"].get("rendered", 0)
always, same, bare, never, auto = (cpu(n) for n in ("always", "same", "bare", "never", "auto"))
bare_run = load("bare")
r_s, r_b, r_a = rendered("always"), bare_run["rendered"], rendered("auto")
same_pages = sum(1 for p in load("same")["pages"] if p.get("kind") == "html")
if r_s == 0 or r_b == 0:
    sys.exit(f"nothing rendered: skitter {r_s}, bare {r_b} ({bare_run['errors']})")
# The test site's script-built pages (crates/skitter-testsite/src/script.rs, is_scripted).
scripted = sum(1 for i in range(1, pages)
               if ((i * 0x9E3779B97F4A7C15) % (1 << 64)) >> 40 < share * (1 << 24))
s_iso = (always["cpu"] - same["cpu"]) / r_s
s_raw = always["cpu"] / r_s
b_pp = bare["cpu"] / r_b
per_tab = bare_run["loop_wall"] / r_b * tabs
bound = never["wall"] + (r_a * per_tab / tabs) * 1.3
ms = lambda s: f"{s * 1000:.1f} ms"
kinds = lambda c: ", ".join(f"{k} {v:.2f}" for k, v in sorted(c["by_kind"].items(), key=lambda kv: -kv[1]) if v >= 0.01)
print(f"-- round {rnd} (CPU: {always['method']})")
for name, c in (("always", always), ("same", same), ("bare", bare), ("never", never), ("auto", auto)):
    print(f"{name:6} wall {c['wall']:7.2f} s  CPU {c['cpu']:7.2f} s (rusage {c['cpu_rusage']:.2f})  [{kinds(c)}]")
    if c["lingered"]:
        print(f"WARNING: {c['lingered']} processes of the {name} run outlived it by 10 s and were killed")
print(f"rendered: skitter {r_s} ({same_pages} HTML pages in the same crawl without), bare {r_b} "
      f"(failed {bare_run['failed']}, node's own CPU {bare_run['node_cpu']:.2f} s, "
      f"render loop {bare_run['loop_wall']:.2f} s, median ms per step {bare_run['median_ms']})")
print(f"CPU per rendered page: skitter {ms(s_iso)} (raw {ms(s_raw)}), bare {ms(b_pp)}; "
      f"skitter / bare {s_iso / b_pp:.2f}x (raw {s_raw / b_pp:.2f}x), target <= 1.5x")
auto_found = sum(1 for p in load("auto")["pages"] if "/p/" in p["url"] and p.get("kind") == "html")
print(f"auto: found {auto_found}/{pages} pages, rendered {r_a} ({scripted} built by script: "
      f"{r_a - scripted} false positives, documented: none on this site), wall {auto['wall']:.2f} s; "
      f"bound: never {never['wall']:.2f} s + ({r_a} x {ms(per_tab)} / {tabs}) x 1.3 = {bound:.2f} s; "
      f"auto / bound {auto['wall'] / bound:.2f}")
json.dump({"iso": s_iso, "raw": s_raw, "bare": b_pp, "auto": auto["wall"], "bound": bound,
           "r_s": r_s, "r_b": r_b, "r_a": r_a},
          open(f"{work}/fig.{rnd}", "w"))
PY
done

python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
figs = [json.load(open(f"{work}/fig.{r}")) for r in range(1, rounds + 1)]
med = lambda k: statistics.median(f[k] for f in figs)
ratio = med("iso") / med("bare")
print(f"median of {rounds}: CPU per rendered page skitter {med('iso') * 1000:.1f} ms "
      f"(raw {med('raw') * 1000:.1f} ms), bare {med('bare') * 1000:.1f} ms: "
      f"ratio {ratio:.2f}x (raw {med('raw') / med('bare'):.2f}x), target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'}")
print(f"median of {rounds}: auto wall {med('auto'):.2f} s, bound {med('bound'):.2f} s: "
      f"ratio {med('auto') / med('bound'):.2f}, target <= 1: {'met' if med('auto') <= med('bound') else 'NOT met'}")
PY
