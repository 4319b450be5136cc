# Serves a folder of documentation on a free loopback port for the real-site
# bench scripts; source it after `set -euo pipefail` (not a bench itself, so its
# name is not bench-*). The caller owns $work (a scratch directory) and its
# cleanup, which must kill $server_pid when set.
#
#   free_port                   prints a loopback port free now
#   write_nginx_conf SERVERS    $work/nginx.conf with those server blocks
#   serve_docs DIR PATH SMOKE   nginx (in the foreground, as our child) serving DIR;
#                               sets $port and $server_pid and waits until PATH
#                               answers. When nginx is missing, SMOKE=1 serves with
#                               python3 -m http.server (a smoke run checks the
#                               script, not a figure); otherwise it exits 2.
#   wget2_trees WORK            prints a new folder for wget2's trees (one per
#                               round, named by the caller): under $WGET2_TMP
#                               if set (say /dev/shm), else under WORK
#   rust_docs SMOKE             sets $docs to a folder holding rust-doc/html:
#                               with SMOKE=1 a small generated tree under $work;
#                               else $DOCS, /usr/share/doc, or Debian's rust-doc
#                               downloaded into target/realsite (needs the mirror)

server_pid=

# free_port: a loopback port free now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# write_nginx_conf SERVERS: $work/nginx.conf for nginx in the foreground, one
# worker, no access log, with the given server blocks.
write_nginx_conf() {
    cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
$1
}
CONF
}

serve_docs() {
    local docs=$1 path=$2 smoke=$3
    port=$(free_port)
    # nginx's worker drops to an unprivileged user when started as root (as in
    # CI): it must be able to read the pages under $work.
    chmod 755 "$work"
    write_nginx_conf "  server { listen 127.0.0.1:$port; root $docs; }"
    if command -v nginx >/dev/null; then
        nginx -c "$work/nginx.conf" &
        server_pid=$!
    elif [[ $smoke == 1 ]]; then
        echo "(smoke: nginx is not installed; serving with python3 -m http.server)"
        python3 -m http.server --bind 127.0.0.1 --directory "$docs" "$port" >/dev/null 2>&1 &
        server_pid=$!
    else
        echo "nginx is needed (apt-get install nginx-light)" >&2
        exit 2
    fi
    local served=0
    for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/$path" && { served=1; break; }; sleep 0.1; done
    [[ $served == 1 ]] || { echo "the server does not answer for $path (nginx log: $(tail -3 "$work/nginx-error.log" 2>/dev/null))" >&2; exit 1; }
}

# wget2_trees WORK: where the rounds' wget2 trees go. WGET2_TMP on tmpfs is
# wget2 at its best, no file system in the way. Each round writes a tree of
# its own, all removed only when the caller ends: a tree removed just before
# the next round's was written made that round's wget2 about twice as slow
# on this machine's ext4, whose inode allocation passes over every inode
# freed in the last 5-35 s (docs/src/benchmarks/content.md, "What binds: the
# kernel's inode allocation"), so wget2 was measured at its worst.
wget2_trees() {
    mktemp -d "${WGET2_TMP:-$1}/wget2.XXXXXX"
}

rust_docs() {
    if [[ $1 == 1 ]]; then
        docs=$work/docs
        mkdir -p "$docs/rust-doc/html/sub"
        for i in $(seq 0 49); do
            { echo "<html><title>page $i</title><body><h1>page $i</h1>"; for j in 1 2 3; do echo "<a href=\"p$(( (i * 7 + j) % 50 )).html\">next</a>"; done; echo "</body></html>"; } >"$docs/rust-doc/html/sub/p$i.html"
        done
        echo '<html><body><a href="sub/p0.html">start</a></body></html>' >"$docs/rust-doc/html/index.html"
    elif [[ -n ${DOCS:-} ]]; then
        docs=$DOCS
    elif [[ -d /usr/share/doc/rust-doc/html ]]; then
        docs=/usr/share/doc
    else
        docs=${CARGO_TARGET_DIR:-target}/realsite/root/usr/share/doc
        if [[ ! -d $docs/rust-doc/html ]]; then
            mkdir -p target/realsite && (cd target/realsite && apt-get download rust-doc >/dev/null && dpkg-deb -x rust-doc_*.deb root)
        fi
    fi
    docs=$(cd "$docs" && pwd)
    [[ -f $docs/rust-doc/html/index.html ]] || { echo "no rust-doc/html/index.html under $docs" >&2; exit 2; }
}
