#!/bin/sh
# Puts ReplayWeb.page (the npm package `replaywebpage`: its built ui.js and
# sw.js) into target/replay-npm, for the test that opens a crawl's WACZ in it
# in headless Chromium (crates/skitter-cli/tests/it/wacz_replay.rs). The test
# looks for the files in $SKITTER_REPLAYWEB, else in target/replay-npm.
# scripts/test.sh runs this when they are missing; .ci/run always does.
#
# `npm pack`, not `npm install`: the two files are bundles that hold every
# dependency, so the package's own dependency tree (hundreds of packages, for
# building it) is not needed. The version is pinned so a new release cannot
# change what the test checks.
#
# Usage: scripts/replayweb.sh [dir]    (REPLAYWEBPAGE_VERSION to pick another)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-"$root/target/replay-npm"}
version=${REPLAYWEBPAGE_VERSION:-2.5.3}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "replaywebpage@$version" >/dev/null)
tar -xzf "$tmp"/replaywebpage-*.tgz -C "$tmp"
for file in ui.js sw.js; do
    if [ ! -s "$tmp/package/$file" ]; then
        echo "replayweb.sh: replaywebpage@$version has no $file" >&2
        exit 1
    fi
done
mkdir -p "$dest"
cp "$tmp/package/ui.js" "$tmp/package/sw.js" "$tmp/package/LICENSE" "$dest/"
echo "$version" >"$dest/VERSION"
echo "ReplayWeb.page $version installed in $dest (export SKITTER_REPLAYWEB=$dest to use another place)"
