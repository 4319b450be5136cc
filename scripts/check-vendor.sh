#!/usr/bin/env bash
# Checks that vendor/NAME is the crates.io crate NAME-VERSION plus vendor/NAME.patch.
# Usage: scripts/check-vendor.sh
# Needs the two crates in the local Cargo registry; the workspace build does not
# fetch them (it uses vendor/), so fetch them once from a scratch project that
# depends on hyper = "=1.12.0" and hyper-util = "=0.1.21". A developer's check
# after an upgrade, not part of CI (CI has no network).
set -euo pipefail
cd "$(dirname "$0")/.."
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
status=0
for entry in hyper:1.12.0 hyper-util:0.1.21; do
    name="${entry%%:*}"
    version="${entry#*:}"
    pristine=$(find "$registry" -maxdepth 2 -type d -name "$name-$version" | head -n 1)
    if [[ -z "$pristine" ]]; then
        echo "check-vendor: $name-$version is not in $registry (fetch it: cargo fetch)" >&2
        status=1
        continue
    fi
    work=$(mktemp -d)
    cp -r "$pristine" "$work/$name"
    (cd "$work/$name" && patch --quiet -p1 < "$OLDPWD/vendor/$name.patch")
    if diff -r "$work/$name" "vendor/$name" > "$work/diff"; then
        echo "check-vendor: vendor/$name = $name-$version + vendor/$name.patch"
    else
        echo "check-vendor: vendor/$name differs from $name-$version + its patch:" >&2
        head -n 40 "$work/diff" >&2
        status=1
    fi
    rm -rf "$work"
done
exit "$status"
