#!/usr/bin/env python3
"""RDMA READ on rdma_rxe, for rnic's interop tests, in either role.

--role reader (rnic the responder, host/rnic-interop/src/read_run.rs):
this pyverbs program reads from rnic's registered region and checks every
byte. The exchange is imm_peer.py's: one JSON line each way over TCP (ours
first: QPN, PSN, GID, buffer; then rnic's: QPN, PSN, GID, region address,
rkey and length, the pattern's seed and the READs it grants outstanding,
max_dest_rd_atomic).

--role target (rnic the reader, host/rnic-interop/src/read_client.rs): we
register a region of --len bytes with REMOTE_READ holding the pattern of
--seed, and rxe's responder serves rnic's READs in the kernel; rnic checks
the bytes. The lines go the other way round: rnic's first (QPN, PSN, GID),
then ours once our QP is in RTS, so rnic's first READ finds it ready (QPN,
PSN, GID, region address, rkey, length, seed, and the READs we grant
outstanding, max_dest_rd_atomic); then rnic's verdict ({"done": bool}),
after which our region must still hold the pattern (a READ never writes
its target).

The region's pattern of the seed: byte i is byte i % 8 (little-endian) of
mix(key + i // 8), mix = SplitMix64's finalizer and key = mix(seed ^
READ_KEY_SALT) (rnic_harness::pattern::fill; must match read_pattern() in
host/rnic-interop/src/read_run.rs).

READ k (0..count-1) has size SIZES[k % 6] = 1, PMTU-1, PMTU, PMTU+1,
3 PMTU+17, 64 KiB. The plan (plan() here, read_plan() in read_run.rs): a
cursor starts at 1 and moves by size + GAP per READ; READ k reads the
region at offset cursor into the reader's buffer at cursor + 2 (the two
alignments differ), except that the last READ reads the last `size` bytes
of the region (a READ that ends on the region's last byte). Up to --depth
READs are outstanding (at most what the target grants). Before a READ is
posted its destination holds the complement of the expected bytes, and the
GAP bytes after it a guard value; when its completion arrives the
destination must hold the region's bytes exactly and the guard must be
intact. A mismatch is reported with its READ, offsets, first bad byte,
count of bad bytes, and where in the region the bytes found there come
from, if anywhere.

The last line on stdout is a JSON summary; the exit code is 0 only when
every READ completed with the right bytes (reader), or rnic said it was
done and our region is unchanged (target).
"""

import argparse
import json
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

MTUS = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024,
        2048: e.IBV_MTU_2048, 4096: e.IBV_MTU_4096}
M64 = (1 << 64) - 1
READ_KEY_SALT = 0x7265616470617400  # "readpat\0"
GAP = 13
GUARD = 0xEE
XOR_FF = bytes(b ^ 0xFF for b in range(256))
WC_STATUS = {1: "LOC_LEN_ERR", 2: "LOC_QP_OP_ERR", 4: "LOC_PROT_ERR", 5: "WR_FLUSH_ERR",
             7: "BAD_RESP_ERR", 8: "LOC_ACCESS_ERR", 9: "REM_INV_REQ_ERR",
             10: "REM_ACCESS_ERR", 11: "REM_OP_ERR", 12: "RETRY_EXC_ERR",
             13: "RNR_RETRY_EXC_ERR", 15: "REM_INV_RD_REQ_ERR", 21: "GENERAL_ERR"}


def mix(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def pattern(key, off, n):
    """Bytes [off, off + n) of rnic's region."""
    w0, w1 = off // 8, (off + n + 7) // 8
    b = b"".join(mix((key + w) & M64).to_bytes(8, "little") for w in range(w0, w1))
    return b[off - 8 * w0:off - 8 * w0 + n]


def sizes(pmtu):
    return [1, pmtu - 1, pmtu, pmtu + 1, 3 * pmtu + 17, 65536]


def plan(count, pmtu, region_len):
    """[(remote offset, local offset, size)] and the local buffer's size."""
    out, cur = [], 1
    for k in range(count):
        n = sizes(pmtu)[k % 6]
        remote = region_len - n if k == count - 1 else cur
        out.append((remote, cur + 2, n))
        cur += n + GAP
    return out, cur + 2 + GAP


def gid_hex(g):
    return g.replace(":", "")


def describe(k, remote, local, want, got, key, region_len, pmtu):
    """What is wrong with READ k's bytes, as precisely as we can say."""
    bad = [i for i in range(len(want)) if i >= len(got) or got[i] != want[i]]
    i = bad[0]
    s = ("READ %d (%d bytes of rnic's region at offset %d, into ours at %d): %d bad bytes, "
         "the first at byte %d (packet %d of the response, byte %d in it): got %s, want %s"
         % (k, len(want), remote, local, len(bad), i, i // pmtu, i % pmtu,
            got[i:i + 8].hex(), want[i:i + 8].hex()))
    if got[i:i + 8] == bytes(b ^ 0xFF for b in want[i:i + 8]):
        s += " (the bytes there were never written: still their poison)"
    elif len(got) - i >= 16:
        probe = got[i:i + 16]
        at = pattern(key, 0, region_len).find(probe)
        if at >= 0:
            s += (" (the bytes there are rnic's from region offset %d, %+d bytes from where they belong)"
                  % (at, at - (remote + i)))
        else:
            s += " (the bytes there are nowhere in rnic's region)"
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=["reader", "target"], default="reader")
    ap.add_argument("--host", default="10.0.2.2")
    ap.add_argument("--port", type=int, default=18519)
    ap.add_argument("--mtu", type=int, default=1024)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--depth", type=int, default=4,
                    help="READs outstanding at most (capped by rnic's max_dest_rd_atomic)")
    ap.add_argument("--qp-timeout", type=int, default=14,
                    help="local ACK timeout exponent of our QP (4.096 us * 2^t)")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--dev", default="rxe0")
    ap.add_argument("--gid-index", type=int, default=1)
    ap.add_argument("--len", type=int, default=0, help="target: the region's size")
    ap.add_argument("--seed", type=int, default=1, help="target: the pattern's seed")
    ap.add_argument("--rd-atomic", type=int, default=16,
                    help="target: READs we grant outstanding (max_dest_rd_atomic)")
    a = ap.parse_args()
    if a.role == "target":
        target(a)
    else:
        reader(a)


def side_channel(a):
    """The TCP side channel to rnic's side, as a file of lines."""
    conn = None
    t0 = time.time()
    while conn is None:
        try:
            conn = socket.create_connection((a.host, a.port), timeout=5)
        except OSError:
            if time.time() - t0 > a.timeout:
                raise
            time.sleep(0.2)
    conn.settimeout(a.timeout)
    return conn.makefile("rw")


def reader(a):
    t_start = time.time()
    ctx = Context(name=a.dev)
    pd = PD(ctx)
    cq = CQ(ctx, a.count + 16)
    cap = QPCap(max_send_wr=a.count + 4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    psn = int(time.time() * 1000) & 0xFFFFFF
    my_gid = ctx.query_gid(port_num=1, index=a.gid_index).gid
    attr = QPAttr()
    attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
    attr.pkey_index = 0
    attr.port_num = 1
    qp.to_init(attr)

    f = side_channel(a)
    # Our buffer's address and key do not matter to rnic (it never reads
    # or writes it): we send them for the record only, and before the MR
    # exists, since its size depends on rnic's region length.
    f.write(json.dumps({"qpn": qp.qp_num, "psn": psn, "gid": gid_hex(my_gid),
                        "addr": 0, "rkey": 0, "len": 0}) + "\n")
    f.flush()
    peer = json.loads(f.readline())
    region_len = peer["len"]
    key = mix(peer["seed"] ^ READ_KEY_SALT)
    depth = max(1, min(a.depth, peer["rd_atomic"]))
    reads, local_len = plan(a.count, a.mtu, region_len)
    for (remote, _, n) in reads:
        if remote < 0 or remote + n > region_len:
            print(json.dumps({"ok": False, "errors": [
                "rnic's region (%d bytes) is too small for a READ of %d at %d" % (region_len, n, remote)]}))
            sys.exit(1)
    mr = MR(pd, local_len, e.IBV_ACCESS_LOCAL_WRITE)
    mr.write(bytes([GUARD]) * local_len, local_len, 0)
    connect(qp, a, peer, psn, depth, 1)

    deadline = time.time() + a.timeout
    bad = []
    posted = done = 0
    nbytes = 0
    want = {}
    t_data = time.time()
    while done < a.count and time.time() < deadline and not bad:
        while posted < a.count and posted - done < depth:
            remote, local, n = reads[posted]
            w = pattern(key, remote, n)
            want[posted] = w
            mr.write(w.translate(XOR_FF), n, local)
            wr = SendWR(wr_id=posted, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                        sg=[SGE(mr.buf + local, n, mr.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED)
            wr.set_wr_rdma(peer["rkey"], peer["addr"] + remote)
            qp.post_send(wr)
            posted += 1
        n_wc, wcs = cq.poll(num_entries=16)
        for wc in wcs[:n_wc]:
            k = wc.wr_id
            if wc.status != e.IBV_WC_SUCCESS:
                bad.append("READ %d: completion status %d (%s), vendor_err %d"
                           % (k, wc.status, WC_STATUS.get(wc.status, "?"), wc.vendor_err))
                break
            if k != done:
                bad.append("completion %d names READ %d (completions out of order)" % (done, k))
                break
            remote, local, n = reads[k]
            if wc.opcode != e.IBV_WC_RDMA_READ or wc.byte_len != n:
                bad.append("READ %d: completion opcode %d byte_len %d, want %d and %d"
                           % (k, wc.opcode, wc.byte_len, e.IBV_WC_RDMA_READ, n))
            got = mr.read(n, local)
            w = want.pop(k)
            if got != w:
                bad.append(describe(k, remote, local, w, got, key, region_len, a.mtu))
            guard = mr.read(GAP, local + n)
            if guard != bytes([GUARD]) * GAP:
                bad.append("READ %d: the %d bytes after its destination changed: %s"
                           % (k, GAP, guard.hex()))
            nbytes += n
            done += 1
    t_end = time.time()
    if done < a.count and not bad:
        bad.append("%d of %d READs completed within %.0f s (%d posted)"
                   % (done, a.count, a.timeout, posted))
    ok = not bad and done == a.count
    print(json.dumps({"ok": ok, "role": "requester", "op": "rdma_read", "reads": done,
                      "bytes": nbytes, "bytes_checked": nbytes if ok else 0,
                      "depth": depth, "mtu": a.mtu,
                      "sizes": sorted(set(n for (_, _, n) in reads)),
                      "data_secs": round(t_end - t_data, 3),
                      "secs": round(t_end - t_start, 3), "errors": bad[:10]}))
    try:
        f.write(json.dumps({"done": ok}) + "\n")
        f.flush()
    except OSError:
        pass
    sys.exit(0 if ok else 1)


def target(a):
    """rxe serves rnic's READs from a region holding the pattern."""
    t_start = time.time()
    if a.len <= 0 or a.rd_atomic <= 0:
        print(json.dumps({"ok": False, "role": "target", "errors": [
            "--len (%d) and --rd-atomic (%d) must be positive" % (a.len, a.rd_atomic)]}))
        sys.exit(2)
    region = pattern(mix(a.seed ^ READ_KEY_SALT), 0, a.len)
    ctx = Context(name=a.dev)
    pd = PD(ctx)
    mr = MR(pd, a.len, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    mr.write(region, a.len, 0)
    cq = CQ(ctx, 4)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    psn = int(time.time() * 1000) & 0xFFFFFF
    my_gid = ctx.query_gid(port_num=1, index=a.gid_index).gid
    attr = QPAttr()
    attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ
    attr.pkey_index = 0
    attr.port_num = 1
    qp.to_init(attr)

    f = side_channel(a)
    peer = json.loads(f.readline())
    connect(qp, a, peer, psn, 1, a.rd_atomic)
    f.write(json.dumps({"qpn": qp.qp_num, "psn": psn, "gid": gid_hex(my_gid),
                        "addr": mr.buf, "rkey": mr.rkey, "len": a.len, "seed": a.seed,
                        "rd_atomic": a.rd_atomic}) + "\n")
    f.flush()
    # rxe answers the READs in the kernel: nothing to poll until rnic's word.
    t_data = time.time()
    errors = []
    verdict = None
    try:
        line = f.readline()
        verdict = json.loads(line) if line.strip() else None
        if verdict is None:
            errors.append("rnic closed the side channel without a verdict")
    except (OSError, ValueError) as ex:
        errors.append("no verdict from rnic within %.0f s: %s" % (a.timeout, ex))
    t_end = time.time()
    if verdict is not None and verdict.get("done") is not True:
        errors.append("rnic reports failure: %s" % json.dumps(verdict))
    now = mr.read(a.len, 0)
    intact = now == region
    if not intact:
        bad = [i for i in range(a.len) if now[i] != region[i]]
        errors.append("our region changed while rnic read it: %d bytes differ, the first at offset %d "
                      "(%s, want %s)" % (len(bad), bad[0], now[bad[0]:bad[0] + 8].hex(),
                                         region[bad[0]:bad[0] + 8].hex()))
    ok = not errors
    print(json.dumps({"ok": ok, "role": "target", "op": "rdma_read", "len": a.len,
                      "rd_atomic": a.rd_atomic, "mtu": a.mtu, "region_intact": intact,
                      "rnic_reads": (verdict or {}).get("reads"),
                      "rnic_bytes": (verdict or {}).get("bytes"),
                      "data_secs": round(t_end - t_data, 3),
                      "secs": round(t_end - t_start, 3), "errors": errors[:10]}))
    sys.exit(0 if ok else 1)


def connect(qp, a, peer, psn, rd_atomic, dest_rd_atomic):
    attr = QPAttr()
    attr.path_mtu = MTUS[a.mtu]
    attr.dest_qp_num = peer["qpn"]
    attr.rq_psn = peer["psn"]
    attr.max_dest_rd_atomic = dest_rd_atomic
    attr.min_rnr_timer = 12
    gr = GlobalRoute(dgid=GID(":".join(peer["gid"][i:i + 4] for i in range(0, 32, 4))),
                     sgid_index=a.gid_index)
    gr.hop_limit = 64
    attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    qp.to_rtr(attr)
    attr.timeout = a.qp_timeout
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    attr.sq_psn = psn
    attr.max_rd_atomic = rd_atomic
    qp.to_rts(attr)


if __name__ == "__main__":
    main()
