#!/usr/bin/env bash
# The headless-browser check of the HTML report.
#
#   scripts/chromium-check.sh install            install Debian's chromium if missing (root)
#   scripts/chromium-check.sh test               install, then run the report's browser test
#   scripts/chromium-check.sh screenshot IN OUT  render IN (an .html file) to OUT (.png)
#
# The test itself (crates/skitter/tests/it/report_html.rs) fails without chromium when
# CI is set and is skipped loudly otherwise, so CI must run `install` first.
set -euo pipefail
cd "$(dirname "$0")/.."

install() {
    if command -v chromium >/dev/null 2>&1; then
        return
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
}

case "${1:-}" in
install)
    install
    ;;
test)
    install
    cargo test -p skitter --test it -- report_html::
    ;;
screenshot)
    in=$(realpath "${2:?input .html}")
    out=$(realpath -m "${3:?output .png}")
    profile=$(mktemp -d)
    trap 'rm -rf "$profile"' EXIT
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --window-size=1200,1600 \
        --screenshot="$out" "file://$in" 2>/dev/null
    echo "$out"
    ;;
*)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
