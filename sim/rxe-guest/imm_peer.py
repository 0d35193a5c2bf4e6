#!/usr/bin/env python3
"""WRITE / WRITE_WITH_IMM peer on rdma_rxe, for rnic's interop tests.

perftest 4.5 (Debian 12) has no WRITE_WITH_IMM test, so this pyverbs
program plays the guest's side of one, with a JSON-lines exchange over TCP
(one line each way) instead of perftest's control channel.

Each message m (0..count-1) is `writes` RDMA WRITEs of `chunk` bytes and one
WRITE_WITH_IMM of `chunk` bytes (immediate = m) into message slot m of the
responder's buffer: slot m holds bytes [m * L, (m + 1) * L) with
L = (writes + 1) * chunk, byte i of slot m = pattern(m, i). When the
responder sees the completion of message m, the whole slot must already hold
the pattern: data before completion.

  --role responder: listen on --port, take the requester's line, reply
                    with ours (buffer address and rkey), check every message.
  --role requester: connect to --host:--port, send ours, take the
                    responder's line, send every message.
The last line on stdout is a JSON summary; the exit code is 0 only when
every message arrived complete and in order.
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
from pyverbs.wr import SGE, RecvWR, SendWR

MTUS = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024,
        2048: e.IBV_MTU_2048, 4096: e.IBV_MTU_4096}


def pattern(m, length):
    """Byte i of message m: block_m[i % 251] (a prime period, so a chunk
    placed at the wrong offset differs). Must match imm_pattern() in
    host/rnic-interop/src/imm_run.rs. Cheap under TCG: 251 Python steps."""
    block = bytes((j * 13 + m * 37 + (m >> 8) + 1) & 0xFF for j in range(251))
    return (block * (length // 251 + 1))[:length]


def gid_hex(g):
    return g.replace(":", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=["requester", "responder"], required=True)
    ap.add_argument("--host", default="10.0.2.2")
    ap.add_argument("--port", type=int, default=18515)
    ap.add_argument("--mtu", type=int, default=1024)
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--writes", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=2048)
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--dev", default="rxe0")
    ap.add_argument("--gid-index", type=int, default=1)
    a = ap.parse_args()

    msg_len = (a.writes + 1) * a.chunk
    total = msg_len * a.count
    ctx = Context(name=a.dev)
    pd = PD(ctx)
    mr = MR(pd, total, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    cq = CQ(ctx, 2 * a.count + 16)
    cap = QPCap(max_send_wr=a.count * (a.writes + 1) + 4, max_recv_wr=a.count + 4,
                max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    psn = int(time.time() * 1000) & 0xFFFFFF
    my_gid = ctx.query_gid(port_num=1, index=a.gid_index).gid
    mine = {"qpn": qp.qp_num, "psn": psn, "gid": gid_hex(my_gid),
            "addr": mr.buf, "rkey": mr.rkey, "len": total}

    attr = QPAttr()
    attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
    attr.pkey_index = 0
    attr.port_num = 1
    qp.to_init(attr)  # receives need INIT
    if a.role == "responder":
        for m in range(a.count):
            # pyverbs wants an SGE; a WRITE_WITH_IMM consumes none of it.
            qp.post_recv(RecvWR(wr_id=m, num_sge=1, sg=[SGE(mr.buf, 1, mr.lkey)]))
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", a.port))
        srv.listen(1)
        srv.settimeout(a.timeout)
        conn, _ = srv.accept()
    else:
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
    f = conn.makefile("rw")
    if a.role == "responder":
        peer = json.loads(f.readline())
        connect(qp, a, peer, psn)
        f.write(json.dumps(mine) + "\n")
        f.flush()
    else:
        f.write(json.dumps(mine) + "\n")
        f.flush()
        peer = json.loads(f.readline())
        connect(qp, a, peer, psn)

    deadline = time.time() + a.timeout
    bad = []
    done = 0
    if a.role == "responder":
        while done < a.count and time.time() < deadline:
            n, wcs = cq.poll(num_entries=16)
            for wc in wcs[:n]:
                if wc.status != e.IBV_WC_SUCCESS:
                    bad.append("completion status %d" % wc.status)
                    done = a.count
                    break
                imm = socket.ntohl(wc.imm_data)
                if wc.opcode != e.IBV_WC_RECV_RDMA_WITH_IMM or imm != done:
                    bad.append("message %d: opcode %d imm %d" % (done, wc.opcode, imm))
                got = mr.read(msg_len, imm * msg_len) if imm < a.count else b""
                want = pattern(imm, msg_len)
                if got != want:
                    at = next((i for i in range(msg_len) if i >= len(got) or got[i] != want[i]), -1)
                    bad.append("message %d: data not complete at its completion (first bad byte %d)" % (imm, at))
                done += 1
    else:
        sent = 0
        wr_id = 0
        for m in range(a.count):
            mr.write(pattern(m, msg_len), msg_len, m * msg_len)
        while done < a.count * (a.writes + 1) and time.time() < deadline:
            while sent < a.count and sent - done // (a.writes + 1) < 16:
                base = sent * msg_len
                for j in range(a.writes + 1):
                    last = j == a.writes
                    wr = SendWR(wr_id=wr_id,
                                opcode=e.IBV_WR_RDMA_WRITE_WITH_IMM if last else e.IBV_WR_RDMA_WRITE,
                                num_sge=1,
                                sg=[SGE(mr.buf + base + j * a.chunk, a.chunk, mr.lkey)],
                                send_flags=e.IBV_SEND_SIGNALED)
                    if last:
                        wr.imm_data = socket.htonl(sent)
                    wr.set_wr_rdma(peer["rkey"], peer["addr"] + base + j * a.chunk)
                    qp.post_send(wr)
                    wr_id += 1
                sent += 1
            n, wcs = cq.poll(num_entries=16)
            for wc in wcs[:n]:
                if wc.status != e.IBV_WC_SUCCESS:
                    bad.append("send completion status %d (wr %d)" % (wc.status, wc.wr_id))
                    done = a.count * (a.writes + 1)
                    break
                done += 1
        done //= (a.writes + 1)
    ok = not bad and done == a.count
    print(json.dumps({"ok": ok, "role": a.role, "messages": done,
                      "bytes": done * msg_len, "errors": bad[:10]}))
    try:
        f.write(json.dumps({"done": ok}) + "\n")
        f.flush()
        # Keep the QP until the host has all its completions: exiting
        # destroys it, and an ACK lost just before would never be resent.
        f.readline()
    except OSError:
        pass
    sys.exit(0 if ok else 1)


def connect(qp, a, peer, psn):
    attr = QPAttr()
    attr.path_mtu = MTUS[a.mtu]
    attr.dest_qp_num = peer["qpn"]
    attr.rq_psn = peer["psn"]
    attr.max_dest_rd_atomic = 1
    attr.min_rnr_timer = 12
    gr = GlobalRoute(dgid=GID(":".join(peer["gid"][i:i + 4] for i in range(0, 32, 4))),
                     sgid_index=a.gid_index)
    gr.hop_limit = 64
    attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    qp.to_rtr(attr)
    attr.timeout = 14
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    attr.sq_psn = psn
    attr.max_rd_atomic = 1
    qp.to_rts(attr)


if __name__ == "__main__":
    main()
