#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into docs/book/ and checks that every relative
# link and #anchor in README.md and docs/src/ leads somewhere. CI runs it.
#
#   scripts/docs.sh
#
# mdBook is installed from crates.io into target/tools on first use (only the
# HTML renderer: no `serve`/`watch`, which the build does not need), so a fresh
# clone needs nothing but cargo and a package registry. MDBOOK=PATH uses another.
# The command-line reference in docs/src/reference/ is not written here: a unit
# test of skitter-cli keeps it equal to the clap definitions (SKITTER_BLESS=1
# rewrites it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

version=0.5.4
tools="$root/target/tools"
mdbook=${MDBOOK:-$tools/bin/mdbook}
if ! [[ -x $mdbook ]] || ! "$mdbook" --version 2>/dev/null | grep -qF "v$version"; then
    echo "== installing mdbook $version into $tools"
    cargo install mdbook --version "=$version" --locked --no-default-features --root "$tools"
    mdbook="$tools/bin/mdbook"
fi

echo "== mdbook build docs"
"$mdbook" build docs

echo "== links in README.md and docs/src"
python3 scripts/check-links.py

echo "== the example Prometheus alert rules (docs/src/guide/watch/) load"
if command -v promtool >/dev/null 2>&1; then
    promtool check rules docs/src/guide/watch/skitter-alerts.yml
elif [[ -n ${CI:-} ]]; then
    echo "promtool is missing (apt-get install prometheus)" >&2
    exit 1
else
    echo "*** SKIPPED: promtool is not installed (apt-get install prometheus) ***"
fi
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' docs/src/guide/watch/skitter-grafana.json
