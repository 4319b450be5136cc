# Shared pieces of the bench scripts that start the local test site; source it
# after `set -euo pipefail` (not a bench itself, so its name is not bench-*).
#
#   bench_bin release|debug   $bin: $SKITTER, else that build of the CLI; exits 2 if missing
#                             or built without the `testsite` feature
#   $work                     a scratch directory, removed on exit with the test site
#   start_site ARGS...        `skitter testsite ARGS --ignore-stdin` in the background;
#                             sets $origin (http://127.0.0.1:PORT, no trailing slash)
#   stop_site                 stops it

bench_bin() {
    bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/$1/skitter}
    local build="build with --release --features testsite"
    [[ $1 == debug ]] && build="cargo build -p skitter-cli --features testsite"
    [[ -x $bin ]] || { echo "no binary at $bin ($build, or set SKITTER)" >&2; exit 2; }
    "$bin" testsite --help >/dev/null 2>&1 || { echo "$bin has no testsite command (build it with --features testsite)" >&2; exit 2; }
}

work=$(mktemp -d)
site_pid=
cleanup() {
    [[ -n $site_pid ]] && kill "$site_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

start_site() {
    : >"$work/site"
    "$bin" testsite "$@" --ignore-stdin >"$work/site" 2>/dev/null &
    site_pid=$!
    # A large site takes a moment to start: wait up to 10 s for its origin.
    for _ in $(seq 100); do
        [[ -s $work/site ]] && break
        sleep 0.1
    done
    origin=$(head -n1 "$work/site")
    origin=${origin%/}
    [[ $origin == http://127.0.0.1:* ]] || { echo "test site did not start" >&2; exit 1; }
}

stop_site() {
    kill "$site_pid" 2>/dev/null || true
    wait "$site_pid" 2>/dev/null || true
    site_pid=
}
