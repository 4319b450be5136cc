#!/bin/sh
# Creates target/validators-venv with the two WARC validators the WARC tests run:
# warcio (webrecorder) and fastwarc (chatnoir-eval / Resiliparse). The test
# `crates/skitter/tests/warc_validate.rs` looks for their binaries in
# $SKITTER_VALIDATORS, else in target/validators-venv/bin.
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
"$venv/bin/python" -m pip install --quiet warcio fastwarc

for tool in warcio fastwarc; do
    if [ ! -x "$venv/bin/$tool" ]; then
        echo "validators.sh: $tool was not installed into $venv/bin" >&2
        exit 1
    fi
done
echo "validators installed in $venv/bin (export SKITTER_VALIDATORS=$venv/bin to use another place)"
