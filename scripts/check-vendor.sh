#!/usr/bin/env bash
# Checks that vendor/NAME is the crates.io crate NAME-VERSION plus vendor/NAME.patch.
# Usage: scripts/check-vendor.sh   (CI runs it; run it after upgrading either crate)
# The pristine crates come from the local Cargo registry. The workspace build
# never puts them there (it uses vendor/), so when one is missing it is fetched
# once from crates.io through a scratch project that depends on exactly these
# versions; with both already in the registry the check runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
crates=(hyper:1.12.0 hyper-util:0.1.21)
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"

pristine_dir() {
    find "$registry" -maxdepth 2 -type d -name "$1-$2" 2>/dev/null | head -n 1
}

missing=()
for entry in "${crates[@]}"; do
    [[ -n "$(pristine_dir "${entry%%:*}" "${entry#*:}")" ]] || missing+=("$entry")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    scratch=$(mktemp -d)
    mkdir "$scratch/src"
    touch "$scratch/src/lib.rs"
    {
        printf '[package]\nname = "check-vendor-scratch"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n[dependencies]\n'
        for entry in "${missing[@]}"; do
            printf '%s = "=%s"\n' "${entry%%:*}" "${entry#*:}"
        done
    } > "$scratch/Cargo.toml"
    echo "check-vendor: fetching ${missing[*]} from crates.io"
    # `cargo fetch` only downloads; `cargo metadata` unpacks into registry/src.
    (cd "$scratch" && cargo fetch --quiet && cargo metadata --format-version 1 > /dev/null)
    rm -rf "$scratch"
fi

status=0
for entry in "${crates[@]}"; do
    name="${entry%%:*}"
    version="${entry#*:}"
    pristine=$(pristine_dir "$name" "$version")
    if [[ -z "$pristine" ]]; then
        echo "check-vendor: $name-$version is not in $registry and could not be fetched" >&2
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
