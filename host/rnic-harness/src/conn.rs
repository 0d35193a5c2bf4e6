//! Connecting queue pairs between two verbs contexts: what two hosts
//! would exchange out of band (QPN, PSN, MAC, IP), done in one process.
//!
//! Generic over [`Device`]: the two contexts can be two NICs of one
//! simulated world (`crate::sim`), two boards cabled back to back, or one
//! NIC talking to itself through its on-chip loopback.

use std::net::Ipv4Addr;

use rnic_device::{Device, DmaBuffer};
use rnic_verbs::{
    AccessFlags, AhAttr, CompletionQueue, Context, MemoryRegion, Mtu, ProtectionDomain, QpAttr,
    QpAttrMask, QpCap, QpInitAttr, QpState, QpType, QueuePair,
};

use crate::Result;

/// A port's own addresses (set with [`Context::set_port_addr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortAddr {
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
}

/// The addresses the simulated pair uses: NIC 0 (requester side) and NIC 1.
pub const DEFAULT_ADDRS: [PortAddr; 2] = [
    PortAddr {
        mac: [0x02, 0, 0, 0, 0, 0xA1],
        ip: Ipv4Addr::new(10, 0, 0, 1),
    },
    PortAddr {
        mac: [0x02, 0, 0, 0, 0, 0xB2],
        ip: Ipv4Addr::new(10, 0, 0, 2),
    },
];

/// Settings of the connections.
#[derive(Debug, Clone, Copy)]
pub struct ConnOpts {
    pub mtu: Mtu,
    /// Send work requests per QP (rounded up to a power of two).
    pub sq_depth: u32,
    /// Receive work requests per QP (0: no receive queue).
    pub rq_depth: u32,
    /// Reliability attributes of both sides.
    pub retry: Retry,
    /// Requesters spread their packets over 2^spray_log UDP source ports
    /// (0: one flow per QP).
    pub spray_log: u8,
    /// RC, or rnic's multipath transport ([`QpType::Mp`]).
    pub qp_type: QpType,
    /// mp window in PSNs (0: the build's, `id.mp_window`).
    pub mp_window: u32,
    /// What the QP lets its peer do (`qp_access_flags`).
    pub qp_access: AccessFlags,
    /// Path health threshold of both NICs (`port.path_cfg.thresh`, 0..3;
    /// 0 off), for the whole NIC; `None` leaves what the NIC has.
    pub path_thresh: Option<u8>,
    /// `max_rd_atomic` at RTS: RDMA READs and atomics the QP may have
    /// outstanding; `None`: the most its NIC takes (0 without READ).
    pub max_rd_atomic: Option<u8>,
    /// `max_dest_rd_atomic` at RTR: incoming READs and atomics the QP
    /// holds; `None`: the most its NIC takes (0 without READ).
    pub max_dest_rd_atomic: Option<u8>,
}

impl Default for ConnOpts {
    fn default() -> Self {
        Self {
            mtu: Mtu::Mtu1024,
            sq_depth: 64,
            rq_depth: 64,
            retry: Retry::default(),
            spray_log: 0,
            qp_type: QpType::Rc,
            mp_window: 0,
            qp_access: AccessFlags::REMOTE_WRITE,
            path_thresh: None,
            max_rd_atomic: None,
            max_dest_rd_atomic: None,
        }
    }
}

/// The reliability attributes of `ibv_modify_qp` (RTR and RTS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Local ACK timeout exponent: 4.096 us * 2^timeout (0: never).
    pub timeout: u8,
    pub retry_cnt: u8,
    /// 7: unlimited.
    pub rnr_retry: u8,
    /// RNR NAK timer code this side's responder sends.
    pub min_rnr_timer: u8,
}

impl Default for Retry {
    /// Suited to the simulator (250 MHz, round trips of a few thousand
    /// cycles): a timeout of 4.096 us * 2^5 = 131 us = 32,768 cycles, seven
    /// retries, unlimited RNR retries after 0.01 ms.
    fn default() -> Self {
        Self {
            timeout: 5,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 1,
        }
    }
}

/// One end of a connection as the other end needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct Remote {
    pub qpn: u32,
    pub psn: u32,
    pub addr: PortAddr,
}

/// The INIT -> RTR attributes towards `peer` (its QPN, first PSN and
/// address), granting `dest_rd_atomic` incoming READs and atomics.
pub fn rtr_attr(o: &ConnOpts, peer: &Remote, dest_rd_atomic: u8) -> (QpAttr, QpAttrMask) {
    type M = QpAttrMask;
    let attr = QpAttr {
        qp_state: QpState::Rtr,
        path_mtu: o.mtu,
        dest_qp_num: peer.qpn,
        rq_psn: peer.psn,
        ah_attr: AhAttr {
            dmac: peer.addr.mac,
            dip: peer.addr.ip,
            // RoCEv2 entropy: one UDP source port per flow, so a
            // multipath fabric spreads QPs over its paths.
            udp_sport: 0xC000 | ((peer.qpn as u16 & 0xff) << 6),
            spray_log: o.spray_log,
            mp_window: o.mp_window,
        },
        max_dest_rd_atomic: dest_rd_atomic,
        min_rnr_timer: o.retry.min_rnr_timer,
        ..Default::default()
    };
    let mask = M::STATE
        | M::AV
        | M::PATH_MTU
        | M::DEST_QPN
        | M::RQ_PSN
        | M::MAX_DEST_RD_ATOMIC
        | M::MIN_RNR_TIMER;
    (attr, mask)
}

/// Moves `qp` RESET -> INIT -> RTR -> RTS towards `peer`; `sq_psn` is the
/// first PSN this QP sends, `peer.psn` the first it expects.
pub fn bring_up<D: Device>(
    qp: &mut QueuePair<D>,
    o: &ConnOpts,
    peer: &Remote,
    sq_psn: u32,
) -> Result<()> {
    type M = QpAttrMask;
    qp.modify(
        &QpAttr {
            qp_state: QpState::Init,
            pkey_index: 0,
            port_num: 1,
            qp_access_flags: o.qp_access,
            ..Default::default()
        },
        M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
    )?;
    let (max_rd, max_dest_rd) = qp.rd_atomic_limits();
    let (attr, mask) = rtr_attr(o, peer, o.max_dest_rd_atomic.unwrap_or(max_dest_rd));
    qp.modify(&attr, mask)?;
    let retry = o.retry;
    qp.modify(
        &QpAttr {
            qp_state: QpState::Rts,
            sq_psn,
            timeout: retry.timeout,
            retry_cnt: retry.retry_cnt,
            rnr_retry: retry.rnr_retry,
            max_rd_atomic: o.max_rd_atomic.unwrap_or(max_rd),
            ..Default::default()
        },
        M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
    )?;
    Ok(())
}

/// A QP (in RESET) with `o`'s queue depths and transport.
pub fn create_qp<D: Device>(
    ctx: &Context<D>,
    pd: &ProtectionDomain<D>,
    send_cq: &CompletionQueue<D>,
    recv_cq: &CompletionQueue<D>,
    o: &ConnOpts,
) -> Result<QueuePair<D>> {
    Ok(ctx.create_qp(
        pd,
        &QpInitAttr {
            send_cq,
            recv_cq,
            cap: QpCap {
                max_send_wr: o.sq_depth,
                max_recv_wr: o.rq_depth,
                max_send_sge: 1,
                max_recv_sge: 1,
            },
            qp_type: o.qp_type,
            sq_sig_all: false,
        },
    )?)
}

/// One RC connection: `send` lives on context A (the requester side of the
/// workload), `recv` on context B.
pub struct QpPair<D: Device> {
    pub send: QueuePair<D>,
    pub recv: QueuePair<D>,
}

/// The two sides of `n` connections: one PD and one CQ per side, shared by
/// every QP of that side (A's CQ takes send completions, B's CQ receive
/// completions).
pub struct Connections<D: Device> {
    pub pd_a: ProtectionDomain<D>,
    pub pd_b: ProtectionDomain<D>,
    pub cq_a: CompletionQueue<D>,
    pub cq_b: CompletionQueue<D>,
    pub pairs: Vec<QpPair<D>>,
}

/// Creates and connects `n` RC QP pairs from `a` to `b`. `psn_seed` picks
/// the initial PSNs (deterministically), so runs start anywhere in the
/// 24-bit PSN space, wrap-around included.
#[allow(clippy::too_many_arguments)]
pub fn connect<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    n: u32,
    o: &ConnOpts,
    cq_entries: u32,
    psn_seed: u64,
) -> Result<Connections<D>> {
    if let Some(t) = o.path_thresh {
        a.set_path_thresh(t)?;
        b.set_path_thresh(t)?;
    }
    let pd_a = a.alloc_pd()?;
    let pd_b = b.alloc_pd()?;
    let cq_a = a.create_cq(cq_entries)?;
    let cq_b = b.create_cq(cq_entries)?;
    let mut pairs = Vec::with_capacity(n as usize);
    let mut rng = crate::pattern::SplitMix::new(psn_seed ^ 0x5053_4e5f_5345_4544);
    for _ in 0..n {
        let mut send = create_qp(a, &pd_a, &cq_a, &cq_a, o)?;
        let mut recv = create_qp(b, &pd_b, &cq_b, &cq_b, o)?;
        let psn_a = (rng.next() & 0x00ff_ffff) as u32;
        let psn_b = (rng.next() & 0x00ff_ffff) as u32;
        let ra = Remote {
            qpn: send.qp_num(),
            psn: psn_a,
            addr: addr_a,
        };
        let rb = Remote {
            qpn: recv.qp_num(),
            psn: psn_b,
            addr: addr_b,
        };
        bring_up(&mut send, o, &rb, psn_a)?;
        bring_up(&mut recv, o, &ra, psn_b)?;
        pairs.push(QpPair { send, recv });
    }
    Ok(Connections {
        pd_a,
        pd_b,
        cq_a,
        cq_b,
        pairs,
    })
}

/// One side of a test connection: its PD, CQ (send and receive), QP, and a
/// registered buffer.
pub struct End<D: Device> {
    pub pd: ProtectionDomain<D>,
    pub cq: CompletionQueue<D>,
    pub qp: QueuePair<D>,
    pub buf: DmaBuffer,
    pub mr: MemoryRegion<D>,
}

/// The buffers and first PSNs of [`connect_ends`].
#[derive(Debug, Clone, Copy)]
pub struct EndOpts {
    /// First PSN side A sends (and B expects), and the other way round.
    pub psn_a: u32,
    pub psn_b: u32,
    /// Size of each side's buffer, registered whole.
    pub buf_len: usize,
    /// Access of each side's memory region.
    pub mr_access: AccessFlags,
    pub cq_entries: u32,
}

impl Default for EndOpts {
    fn default() -> Self {
        Self {
            psn_a: 0x100,
            psn_b: 0x2000,
            buf_len: 1 << 16,
            mr_access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            cq_entries: 256,
        }
    }
}

/// One side (QP in RESET): a PD, a CQ for both directions, the QP, and a
/// buffer of `e.buf_len` bytes registered with `e.mr_access`.
pub fn end<D: Device>(ctx: &Context<D>, o: &ConnOpts, e: &EndOpts) -> Result<End<D>> {
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(e.cq_entries)?;
    let qp = create_qp(ctx, &pd, &cq, &cq, o)?;
    let buf = ctx.alloc_dma(e.buf_len)?;
    let mr = ctx.reg_mr(&pd, &buf, 0, e.buf_len, e.mr_access)?;
    Ok(End {
        pd,
        cq,
        qp,
        buf,
        mr,
    })
}

/// One connection with a buffer on each side: `a` on context A at
/// `addr_a`, `b` on context B at `addr_b`, both in RTS.
pub fn connect_ends<D: Device>(
    a: &Context<D>,
    addr_a: PortAddr,
    b: &Context<D>,
    addr_b: PortAddr,
    o: &ConnOpts,
    e: &EndOpts,
) -> Result<(End<D>, End<D>)> {
    let mut ea = end(a, o, e)?;
    let mut eb = end(b, o, e)?;
    let ra = Remote {
        qpn: ea.qp.qp_num(),
        psn: e.psn_a,
        addr: addr_a,
    };
    let rb = Remote {
        qpn: eb.qp.qp_num(),
        psn: e.psn_b,
        addr: addr_b,
    };
    bring_up(&mut ea.qp, o, &rb, e.psn_a)?;
    bring_up(&mut eb.qp, o, &ra, e.psn_b)?;
    Ok((ea, eb))
}
