#!/usr/bin/env python3
"""Guest-side probe (pyverbs): make rxe0 put RoCEv2 frames on eth0.

Brings an RC QP to RTS towards a peer that need not exist (default the
simulated NIC's address, ::ffff:192.168.77.1, QPN 0x11) and posts one signaled
SEND of --size bytes. rxe transmits it (plus --retry retransmissions) and, with
no ACK coming back, completes it with RETRY_EXC_ERR. Prints one line:
"probe: qpn 0x.. sent N bytes, completion status S (name)". Used by
smoke-test.sh to check the frame path guest -> QEMU stream netdev -> fabric,
including MTU-sized (4096-byte payload) frames. Not part of the image: the
test sends it through the agent (base64).
"""
import argparse
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
STATUS = {0: "SUCCESS", 12: "RETRY_EXC_ERR", 13: "RNR_RETRY_EXC_ERR", 5: "WR_FLUSH_ERR"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", default="rxe0")
    ap.add_argument("--gid-index", type=int, default=1)
    ap.add_argument("--dgid", default="0000:0000:0000:0000:0000:ffff:c0a8:4d01")
    ap.add_argument("--dqpn", type=lambda s: int(s, 0), default=0x11)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--mtu", type=int, default=4096)
    ap.add_argument("--retry", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20)
    a = ap.parse_args()

    ctx = Context(name=a.dev)
    pd = PD(ctx)
    mr = MR(pd, max(a.size, 1), e.IBV_ACCESS_LOCAL_WRITE)
    mr.write(bytes(i & 0xFF for i in range(a.size)), a.size)
    cq = CQ(ctx, 8)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)))
    attr = QPAttr()
    attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
    attr.pkey_index = 0
    attr.port_num = 1
    qp.to_init(attr)
    attr = QPAttr()
    attr.path_mtu = MTUS[a.mtu]
    attr.dest_qp_num = a.dqpn
    attr.rq_psn = 0
    attr.max_dest_rd_atomic = 1
    attr.min_rnr_timer = 12
    gr = GlobalRoute(dgid=GID(a.dgid), sgid_index=a.gid_index)
    gr.hop_limit = 64
    attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    qp.to_rtr(attr)
    attr.timeout = 14  # 4.096 us * 2^14 = 67 ms
    attr.retry_cnt = a.retry
    attr.rnr_retry = 0
    attr.sq_psn = 0
    attr.max_rd_atomic = 1
    qp.to_rts(attr)
    qp.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(mr.buf, a.size, mr.lkey)], send_flags=e.IBV_SEND_SIGNALED))
    deadline = time.time() + a.timeout
    status = None
    while status is None and time.time() < deadline:
        n, wcs = cq.poll(num_entries=1)
        if n:
            status = wcs[0].status
        else:
            time.sleep(0.05)
    name = "timeout" if status is None else STATUS.get(status, str(status))
    print(f"probe: qpn 0x{qp.qp_num:x} sent {a.size} bytes, completion status {status} ({name})")


if __name__ == "__main__":
    main()
