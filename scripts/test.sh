#!/usr/bin/env bash
# The README's test command: every test, with the checks that need outside tools
# able to run, and a summary of any that could not.
#
#   scripts/test.sh [ARGS...]      ARGS go to `cargo test --workspace --features skitter-cli/testsite`
#
# 1. Installs the Python tools the WARC tests run (warcio, fastwarc, cdxj-indexer, pywb, wacz)
#    into target/validators-venv with scripts/validators.sh, unless they are there.
#    Without a package registry that fails; the run goes on (under CI it stops).
# 2. Puts ReplayWeb.page (npm's replaywebpage: ui.js, sw.js) into target/replay-npm
#    with scripts/replayweb.sh, unless it is there (same rule when it fails).
# 3. Runs `cargo test --workspace --features skitter-cli/testsite ARGS`: the CLI's
#    `bench` and `testsite` commands (and their unit tests) are only built with it.
# 4. Prints the checks that could not run (a missing validator, redis-server or
#    chromium). Tests record them in $SKITTER_SKIPPED, because cargo's harness
#    hides what a passing test prints. Under CI (CI set) such a test fails instead.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# install WHAT SCRIPT DEST: runs SCRIPT DEST; a failure stops the run under CI
# and only warns elsewhere (the checks that need WHAT are then skipped, loudly).
install() {
    local what=$1 script=$2 dest=$3
    echo "== installing $what into $dest ($script)"
    if ! "$script" "$dest"; then
        if [[ -n ${CI:-} ]]; then
            echo "test.sh: $what could not be installed, and CI needs it" >&2
            exit 1
        fi
        echo "test.sh: $what could not be installed (no package registry?);" \
            "the checks that need it will be skipped" >&2
    fi
}

venv="$root/target/validators-venv"
export SKITTER_VALIDATORS=${SKITTER_VALIDATORS:-$venv/bin}
missing=()
for tool in warcio fastwarc cdxj-indexer wb-manager wacz; do
    [[ -x $SKITTER_VALIDATORS/$tool ]] || missing+=("$tool")
done
[[ ${#missing[@]} -eq 0 ]] || install "${missing[*]}" scripts/validators.sh "$venv"

# ReplayWeb.page (npm), which the WACZ replay test opens in Chromium.
replay=${SKITTER_REPLAYWEB:-$root/target/replay-npm}
[[ -s $replay/ui.js && -s $replay/sw.js ]] || install ReplayWeb.page scripts/replayweb.sh "$replay"
export SKITTER_REPLAYWEB=$replay

skipped=$(mktemp)
trap 'rm -f "$skipped"' EXIT
export SKITTER_SKIPPED=$skipped
cargo test --workspace --features skitter-cli/testsite "$@"
status=$?

echo
if [[ -s $skipped ]]; then
    count=$(sort -u "$skipped" | wc -l)
    echo "************************************************************************"
    echo "test.sh: $count check(s) did NOT run; the tests that own them passed without them:"
    sort -u "$skipped" | sed 's/^/  - /'
    echo "Install what is named above (or run as root: .ci/run installs everything)."
    echo "************************************************************************"
else
    echo "test.sh: no check was skipped for want of an outside program"
fi
exit "$status"
