#!/usr/bin/env bash
# Checks that a WACZ past 4 GiB is written in zip64 form and reads back:
# issue 34's "WACZ size limited only by the disk". Not a test of the suite
# (it writes about 9 GiB and takes a minute or two); run by hand.
#
# 1. Writes a WARC of SIZE_GIB (4.5) GiB: one HTML page (the WACZ's page
#    list needs one) and N resource records of 512 MiB of one byte pattern.
# 2. Packs it with `skitter wacz create`, then checks the WACZ with
#    `skitter wacz validate` and with Python's zipfile (zip64 end records,
#    the WARC member's size and CRC read back in full), and with the
#    Webrecorder validator when it is installed (scripts/validators.sh).
#
# Usage: scripts/check-wacz-large.sh [DIR]   (DIR: where the files go; default a temp dir)
set -euo pipefail
bin=${SKITTER:-${CARGO_TARGET_DIR:-target}/release/skitter}
[[ -x $bin ]] || { echo "no binary at $bin (cargo build --release -p skitter-cli, or set SKITTER)" >&2; exit 2; }
size_gib=${SIZE_GIB:-4.5}
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
trap 'rm -f "$dir/big.warc" "$dir/big.wacz"' EXIT
python3 - "$dir/big.warc" "$size_gib" <<'PY'
import sys, uuid
path, gib = sys.argv[1], float(sys.argv[2])
chunk = 512 << 20
n = int(gib * (1 << 30)) // chunk + 1
def record(kind, uri, ctype, block):
    head = (f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\n"
            f"WARC-Date: 2026-12-06T00:00:00Z\r\nWARC-Target-URI: {uri}\r\n"
            f"Content-Type: {ctype}\r\nContent-Length: {len(block)}\r\n\r\n").encode()
    return head, block
with open(path, "wb") as f:
    body = b"<html><head><title>Large</title></head><body><p>The one page of a large archive.</p></body></html>"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head, block = record("response", "http://large.test/", "application/http; msgtype=response", http)
    f.write(head + block + b"\r\n\r\n")
    data = bytes(range(256)) * (chunk // 256)
    for i in range(n):
        head, _ = record("resource", f"http://large.test/blob/{i}", "application/octet-stream", data)
        f.write(head)
        f.write(data)
        f.write(b"\r\n\r\n")
print(f"wrote {path}: {n} records of {chunk >> 20} MiB")
PY
ls -l "$dir/big.warc"
/usr/bin/time -f "pack: %e s, peak RSS %M KB" "$bin" -q wacz create "$dir/big.warc" -o "$dir/big.wacz"
ls -l "$dir/big.wacz"
/usr/bin/time -f "validate: %e s, peak RSS %M KB" "$bin" -q wacz validate "$dir/big.wacz"
python3 - "$dir/big.wacz" "$dir/big.warc" <<'PY'
import os, sys, zipfile, zlib
wacz, warc = sys.argv[1], sys.argv[2]
with open(wacz, "rb") as f:
    f.seek(-(1 << 16), os.SEEK_END)
    tail = f.read()
assert b"PK\x06\x06" in tail and b"PK\x06\x07" in tail, "no zip64 end of central directory"
with zipfile.ZipFile(wacz) as z:
    assert z.testzip() is None
    members = {i.filename: i for i in z.infolist()}
    name = [n for n in members if n.startswith("archive/")][0]
    info = members[name]
    assert info.compress_type == zipfile.ZIP_STORED, info.compress_type
    assert info.file_size == os.path.getsize(warc) > 1 << 32, (info.file_size, os.path.getsize(warc))
    print(f"zip64: {name} stored, {info.file_size} bytes, CRC checked by testzip; members: {sorted(members)}")
PY
venv=${VALIDATORS_VENV:-target/validators-venv}
if [[ -x $venv/bin/wacz ]]; then
    /usr/bin/time -f "wacz validate (Webrecorder): %e s" "$venv/bin/wacz" validate -f "$dir/big.wacz"
else
    echo "!!! NOT RUN: the Webrecorder validator (no $venv/bin/wacz; scripts/validators.sh installs it)"
fi
echo "check-wacz-large: OK"
