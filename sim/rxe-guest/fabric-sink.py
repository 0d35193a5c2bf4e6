#!/usr/bin/env python3
"""Stand-in for the simulator's fabric on QEMU's `-netdev stream` (test aid).

Listens on a unix stream socket; QEMU (server=off) connects to it. Each frame
on the stream is a 4-byte big-endian length followed by an Ethernet frame.
Frames are read and discarded; one summary line per frame goes to --log
(default stdout) and, with --pcap, the frames to a pcap file (tshark -r).
Accepts connections one after the other until SIGINT/SIGTERM, then prints a
count of frames per kind to stderr.

    fabric-sink.py SOCK [--pcap FILE] [--log FILE]
"""
import argparse
import collections
import os
import signal
import socket
import struct
import sys
import time

ICMP6 = {128: "echo-req", 129: "echo-reply", 133: "RS", 134: "RA", 135: "NS",
         136: "NA", 143: "MLDv2-report", 131: "MLD-report", 132: "MLD-done"}


def mac(b):
    return ":".join(f"{x:02x}" for x in b)


def describe(f):
    """(kind, text) for an Ethernet frame."""
    if len(f) < 14:
        return "runt", f"runt {len(f)} bytes"
    dst, src, et = f[0:6], f[6:12], struct.unpack("!H", f[12:14])[0]
    p = f[14:]
    head = f"{mac(src)} > {mac(dst)} len {len(f)}"
    if et == 0x0806 and len(p) >= 28:
        op = struct.unpack("!H", p[6:8])[0]
        spa, tpa = socket.inet_ntoa(p[14:18]), socket.inet_ntoa(p[24:28])
        kind = "ARP-request" if op == 1 else "ARP-reply" if op == 2 else f"ARP-op{op}"
        return kind, f"{head} {kind} who-has {tpa} tell {spa}"
    if et == 0x0800 and len(p) >= 20:
        ihl = (p[0] & 15) * 4
        proto = p[9]
        s, d = socket.inet_ntoa(p[12:16]), socket.inet_ntoa(p[16:20])
        if proto == 17 and len(p) >= ihl + 8:
            sport, dport = struct.unpack("!HH", p[ihl:ihl + 4])
            if dport == 4791 and len(p) >= ihl + 8 + 12:
                bth = p[ihl + 8:ihl + 20]
                opcode = bth[0]
                qp = int.from_bytes(bth[5:8], "big")
                psn = int.from_bytes(bth[9:12], "big") & 0xFFFFFF
                return "RoCEv2", f"{head} IPv4 {s} > {d} RoCEv2 opcode 0x{opcode:02x} dqp 0x{qp:06x} psn {psn}"
            return "IPv4-UDP", f"{head} IPv4 {s}:{sport} > {d}:{dport} UDP"
        return f"IPv4-proto{proto}", f"{head} IPv4 {s} > {d} proto {proto}"
    if et == 0x86DD and len(p) >= 40:
        nh = p[6]
        s = socket.inet_ntop(socket.AF_INET6, p[8:24])
        d = socket.inet_ntop(socket.AF_INET6, p[24:40])
        off = 40
        if nh == 0 and len(p) >= off + 8:  # hop-by-hop (MLD router alert)
            nh, hlen = p[off], (p[off + 1] + 1) * 8
            off += hlen
        if nh == 58 and len(p) > off:
            t = p[off]
            kind = "IPv6-ICMPv6-" + ICMP6.get(t, str(t))
            return kind, f"{head} IPv6 {s} > {d} ICMPv6 {ICMP6.get(t, t)}"
        if nh == 17 and len(p) >= off + 4:
            sport, dport = struct.unpack("!HH", p[off:off + 4])
            kind = "RoCEv2-IPv6" if dport == 4791 else "IPv6-UDP"
            return kind, f"{head} IPv6 {s}:{sport} > {d}:{dport} UDP"
        return f"IPv6-nh{nh}", f"{head} IPv6 {s} > {d} next-header {nh}"
    return f"ethertype-0x{et:04x}", f"{head} ethertype 0x{et:04x}"


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sock")
    ap.add_argument("--pcap")
    ap.add_argument("--log")
    a = ap.parse_args()

    counts = collections.Counter()
    log = open(a.log, "w", buffering=1) if a.log else sys.stdout
    pcap = None
    if a.pcap:
        pcap = open(a.pcap, "wb")
        pcap.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        pcap.flush()

    def finish(*_):
        total = sum(counts.values())
        print(f"fabric-sink: {total} frames: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
              file=sys.stderr, flush=True)
        try:
            os.unlink(a.sock)
        except OSError:
            pass
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)

    try:
        os.unlink(a.sock)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(a.sock)
    srv.listen(1)
    t0 = time.monotonic()
    while True:
        conn, _ = srv.accept()
        print(f"[{time.monotonic() - t0:8.3f}] connected", file=log)
        while True:
            hdr = recv_exact(conn, 4)
            if hdr is None:
                break
            (n,) = struct.unpack("!I", hdr)
            frame = recv_exact(conn, n)
            if frame is None:
                break
            kind, text = describe(frame)
            counts[kind] += 1
            print(f"[{time.monotonic() - t0:8.3f}] {text}", file=log)
            if pcap:
                now = time.time()
                pcap.write(struct.pack("<IIII", int(now), int((now % 1) * 1e6), len(frame), len(frame)) + frame)
                pcap.flush()
        conn.close()
        print(f"[{time.monotonic() - t0:8.3f}] disconnected", file=log)


if __name__ == "__main__":
    main()
