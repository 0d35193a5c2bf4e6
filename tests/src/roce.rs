//! Two simulated NICs joined by a fabric, with verbs contexts on each host,
//! and connected RC queue pairs.

use std::net::Ipv4Addr;

use rnic_device::DmaBuffer;
use rnic_sim::{FabricConfig, SimDevice, SimWorld, WorldConfig};
use rnic_verbs::*;

pub const MAC: [[u8; 6]; 2] = [[0x02, 0, 0, 0, 0, 0xA1], [0x02, 0, 0, 0, 0, 0xB2]];
pub const IP: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];

pub struct Pair {
    pub world: SimWorld,
    pub a: Context<SimDevice>,
    pub b: Context<SimDevice>,
}

pub fn pair(data_w: u32, seed: u64, fabric: &str) -> Pair {
    pair_with(WorldConfig {
        nics: 2,
        data_w,
        seed,
        fabric: FabricConfig::profile(fabric).expect("fabric profile"),
        ..WorldConfig::default()
    })
}

pub fn pair_with(cfg: WorldConfig) -> Pair {
    let world = SimWorld::new(cfg).expect("world");
    let a = Context::open(world.device(0)).expect("context a");
    let b = Context::open(world.device(1)).expect("context b");
    a.set_port_addr(MAC[0], IP[0]).unwrap();
    b.set_port_addr(MAC[1], IP[1]).unwrap();
    Pair { world, a, b }
}

/// One side of a connection: PD, CQ, QP and a registered buffer.
pub struct End {
    pub pd: ProtectionDomain<SimDevice>,
    pub cq: CompletionQueue<SimDevice>,
    pub qp: QueuePair<SimDevice>,
    pub buf: DmaBuffer,
    pub mr: MemoryRegion<SimDevice>,
}

/// Settings of a connection.
#[derive(Clone, Copy)]
pub struct ConnOpts {
    pub mtu: Mtu,
    pub psn_a: u32,
    pub psn_b: u32,
    pub buf_len: usize,
    pub access: AccessFlags,
    pub remote_write: bool,
    pub sq_depth: u32,
    pub rq_depth: u32,
    /// Local ACK timeout exponent (4.096 us * 2^timeout; 0: never).
    pub timeout: u8,
    pub retry_cnt: u8,
    /// 7: unlimited.
    pub rnr_retry: u8,
    /// RNR NAK timer code the responder sends.
    pub min_rnr_timer: u8,
    /// RC or the multipath transport.
    pub qp_type: QpType,
    /// Requesters spray over 2^spray_log UDP source ports.
    pub spray_log: u8,
    /// mp window (0: the build's).
    pub mp_window: u32,
}

impl Default for ConnOpts {
    fn default() -> Self {
        Self {
            mtu: Mtu::Mtu1024,
            psn_a: 0x100,
            psn_b: 0x2000,
            buf_len: 1 << 16,
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            remote_write: true,
            sq_depth: 64,
            rq_depth: 64,
            timeout: 5,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 1,
            qp_type: QpType::Rc,
            spray_log: 0,
            mp_window: 0,
        }
    }
}

/// One side: PD, CQ, QP (in RESET), a buffer and its MR.
pub fn end(ctx: &Context<SimDevice>, o: &ConnOpts) -> End {
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(256).unwrap();
    let qp = ctx
        .create_qp(
            &pd,
            &QpInitAttr {
                send_cq: &cq,
                recv_cq: &cq,
                cap: QpCap {
                    max_send_wr: o.sq_depth,
                    max_recv_wr: o.rq_depth,
                    max_send_sge: 1,
                    max_recv_sge: 1,
                },
                qp_type: o.qp_type,
                sq_sig_all: false,
            },
        )
        .unwrap();
    let buf = ctx.alloc_dma(o.buf_len).unwrap();
    let mr = ctx.reg_mr(&pd, &buf, 0, o.buf_len, o.access).unwrap();
    End {
        pd,
        cq,
        qp,
        buf,
        mr,
    }
}

/// The INIT -> RTR attributes towards a peer QP at `dmac` / `dip`.
pub fn rtr_attr(
    o: &ConnOpts,
    peer_qpn: u32,
    dmac: [u8; 6],
    dip: Ipv4Addr,
    rq_psn: u32,
) -> (QpAttr, QpAttrMask) {
    type M = QpAttrMask;
    let attr = QpAttr {
        qp_state: QpState::Rtr,
        path_mtu: o.mtu,
        dest_qp_num: peer_qpn,
        rq_psn,
        ah_attr: AhAttr {
            dmac,
            dip,
            udp_sport: 0xC000 | (peer_qpn as u16 & 0xff),
            spray_log: o.spray_log,
            mp_window: o.mp_window,
        },
        max_dest_rd_atomic: 0,
        min_rnr_timer: o.min_rnr_timer,
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

/// Moves `qp` through INIT, RTR and RTS towards the peer.
pub fn bring_up(
    qp: &mut QueuePair<SimDevice>,
    o: &ConnOpts,
    peer_qpn: u32,
    peer: usize,
    rq_psn: u32,
    sq_psn: u32,
) {
    type M = QpAttrMask;
    let access = if o.remote_write {
        AccessFlags::REMOTE_WRITE
    } else {
        AccessFlags::empty()
    };
    qp.modify(
        &QpAttr {
            qp_state: QpState::Init,
            pkey_index: 0,
            port_num: 1,
            qp_access_flags: access,
            ..Default::default()
        },
        M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
    )
    .unwrap();
    let (attr, mask) = rtr_attr(o, peer_qpn, MAC[peer], IP[peer], rq_psn);
    qp.modify(&attr, mask).unwrap();
    qp.modify(
        &QpAttr {
            qp_state: QpState::Rts,
            sq_psn,
            timeout: o.timeout,
            retry_cnt: o.retry_cnt,
            rnr_retry: o.rnr_retry,
            max_rd_atomic: 0,
            ..Default::default()
        },
        M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
    )
    .unwrap();
}

/// A connected RC QP pair: `a` sends, `b` receives (both can do both).
pub fn connect(p: &Pair, o: &ConnOpts) -> (End, End) {
    let mut ea = end(&p.a, o);
    let mut eb = end(&p.b, o);
    let (qa, qb) = (ea.qp.qp_num(), eb.qp.qp_num());
    bring_up(&mut ea.qp, o, qb, 1, o.psn_b, o.psn_a);
    bring_up(&mut eb.qp, o, qa, 0, o.psn_a, o.psn_b);
    (ea, eb)
}

/// Polls `cq` until `n` completions arrived (or the budget of idle polls runs out).
pub fn wait_wc(
    dev: &SimDevice,
    cq: &CompletionQueue<SimDevice>,
    n: usize,
    budget: u64,
) -> Vec<WorkCompletion> {
    use rnic_device::Device;
    let mut out = Vec::new();
    let mut wc = [WorkCompletion::default(); 16];
    let mut idle = 0;
    while out.len() < n && idle < budget {
        let k = cq.poll(&mut wc).unwrap();
        if k == 0 {
            idle += 1;
            dev.idle();
        } else {
            idle = 0;
            out.extend_from_slice(&wc[..k]);
        }
    }
    out
}

/// Breaks one layer of the ordering contract through the NIC's debug register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    CqeRo,
    EarlyCqe,
    Bypass,
}

pub fn set_break(ctx: &Context<SimDevice>, b: Option<Break>, flush: bool) {
    let io = rnic_regs::DeviceIo::new(ctx.device());
    let csr = io.csr();
    csr.dma()
        .debug()
        .try_write(|r| {
            r.set_cqe_ro(b == Some(Break::CqeRo));
            r.set_early_cqe(b == Some(Break::EarlyCqe));
            r.set_bypass(b == Some(Break::Bypass));
        })
        .unwrap();
    csr.dma()
        .cqe_order()
        .try_write(|r| r.set_cqe_flush(flush))
        .unwrap();
}

/// `n` messages of `writes` RDMA WRITEs and one WRITE_WITH_IMM each, one
/// message at a time; every byte is checked when the receiver sees the CQE.
/// Returns (ordering violations, messages).
pub fn write_imm_messages(
    p: &Pair,
    a: &mut End,
    b: &mut End,
    n: usize,
    writes: usize,
    max_piece: usize,
    seed: u64,
) -> usize {
    use rand::Rng;
    let mut r = crate::rng(seed);
    let mut violations = 0;
    for m in 0..n {
        let pieces: Vec<usize> = (0..=writes).map(|_| r.gen_range(1..=max_piece)).collect();
        let total: usize = pieces.iter().sum();
        let src_off = r.gen_range(0..64);
        let dst_off = r.gen_range(0..64);
        let tag = seed * 1_000_003 + m as u64;
        crate::fill_pattern(&a.buf, src_off, total, tag);
        // stale bytes: the complement of what is coming
        let stale: Vec<u8> = (0..total).map(|i| !crate::pattern_byte(tag, i)).collect();
        b.buf.write(dst_off, &stale);
        b.qp.post_recv(&RecvWr {
            wr_id: m as u64,
            sg_list: &[],
        })
        .unwrap();
        let mut off = 0;
        let sges: Vec<[Sge; 1]> = pieces
            .iter()
            .map(|&l| {
                let s = [a.mr.sge(src_off + off, l as u32).unwrap()];
                off += l;
                s
            })
            .collect();
        let mut wrs = Vec::new();
        let mut off = 0;
        for (i, &l) in pieces.iter().enumerate() {
            let last = i == writes;
            wrs.push(SendWr {
                wr_id: (m * 100 + i) as u64,
                opcode: if last {
                    WrOpcode::RdmaWriteWithImm
                } else {
                    WrOpcode::RdmaWrite
                },
                send_flags: if last {
                    SendFlags::SIGNALED
                } else {
                    SendFlags::empty()
                },
                sg_list: &sges[i],
                imm_data: if last { Some((m as u32).to_be()) } else { None },
                rdma: Some(b.mr.rdma_info(dst_off + off).unwrap()),
            });
            off += l;
        }
        a.qp.post_send_list(&wrs).unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, 200_000);
        assert_eq!(wcs.len(), 1, "message {m}: no receive completion");
        assert_eq!(
            wcs[0].status,
            WcStatus::Success,
            "message {m}: {:?}",
            wcs[0]
        );
        assert_eq!(wcs[0].imm_data.map(u32::from_be), Some(m as u32));
        if crate::check_pattern(&b.buf, dst_off, total, tag).is_some() {
            violations += 1;
            // once everything drained the data must be right: a late write, not a lost one
            p.world.run(20_000);
            assert_eq!(
                crate::check_pattern(&b.buf, dst_off, total, tag),
                None,
                "message {m}: bytes lost"
            );
        }
        let swc = wait_wc(p.a.device(), &a.cq, 1, 200_000);
        assert_eq!(swc.len(), 1, "message {m}: no send completion");
        assert_eq!(swc[0].status, WcStatus::Success);
    }
    violations
}
