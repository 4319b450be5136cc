#!/usr/bin/env python3
"""A name server for the bench scripts (not a bench itself): answers A queries
for the names given with 127.0.0.1, every other name with NXDOMAIN at once
(or, with the name `*`, every name with 127.0.0.1), and other query types with
no records. Run it only where nothing but loopback can be reached (a network
namespace of the script's own): a name it answers is a loopback address.

Usage: lib-dns-responder.py ADDR PORT NAME...   (runs until killed)
"""

import socket
import struct
import sys


def question(packet):
    """The query's name (lowercased, without the final dot), its type, and
    where the question section ends."""
    labels, at = [], 12
    while True:
        length = packet[at]
        at += 1
        if length == 0:
            break
        if length & 0xC0 or at + length > len(packet):
            raise ValueError("compressed or truncated name in a question")
        labels.append(packet[at:at + length].decode("ascii", "replace").lower())
        at += length
    qtype, _qclass = struct.unpack("!HH", packet[at:at + 4])
    return ".".join(labels), qtype, at + 4


def answer(packet, names):
    ident, flags = struct.unpack("!HH", packet[:4])
    name, qtype, end = question(packet)
    known = "*" in names or name in names
    # QR, the query's opcode and RD, RA; RCODE 3 (NXDOMAIN) for unknown names.
    reply_flags = 0x8000 | (flags & 0x7900) | 0x0080 | (0 if known else 3)
    records = []
    if known and qtype == 1:
        # A pointer to the question's name, type A, class IN, TTL 60, 127.0.0.1.
        records.append(struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + socket.inet_aton("127.0.0.1"))
    header = struct.pack("!HHHHHH", ident, reply_flags, 1, len(records), 0, 0)
    return header + packet[12:end] + b"".join(records)


def main():
    addr, port, names = sys.argv[1], int(sys.argv[2]), {n.lower().rstrip(".") for n in sys.argv[3:]}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((addr, port))
    while True:
        packet, peer = sock.recvfrom(4096)
        try:
            sock.sendto(answer(packet, names), peer)
        except (ValueError, IndexError, struct.error):
            continue


if __name__ == "__main__":
    main()
