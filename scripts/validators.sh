#!/bin/sh
# Creates target/validators-venv with the outside tools the WARC tests run: the
# two WARC validators warcio (webrecorder) and fastwarc (chatnoir-eval /
# Resiliparse), cdxj-indexer (pywb's CDXJ indexer, with the surt library that
# makes pywb's URL keys), and pywb itself (the revisit replay test; `wb-manager`
# marks it installed), and the `wacz` tools (py-wacz: `wacz validate`, the
# Webrecorder WACZ validator). The tests (`warc_validate.rs`, `crawl_outputs.rs`,
# `cdx_pywb.rs`, `warc_revisit.rs`, `wacz.rs`, the CLI's `resume.rs`) look for them in
# $SKITTER_VALIDATORS, else in target/validators-venv/bin. scripts/test.sh runs
# this when one is missing.
#
# Usage: scripts/validators.sh [venv-dir]    (PYTHON=python3.11 to pick an interpreter)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-"$root/target/validators-venv"}
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet warcio fastwarc cdxj-indexer pywb wacz

for tool in warcio fastwarc cdxj-indexer wb-manager wacz; do
    if [ ! -x "$venv/bin/$tool" ]; then
        echo "validators.sh: $tool was not installed into $venv/bin" >&2
        exit 1
    fi
done
echo "validators installed in $venv/bin (export SKITTER_VALIDATORS=$venv/bin to use another place)"
