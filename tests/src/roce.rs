//! RoCE between two simulated NICs: the harness's steps (`rnic-harness`),
//! failing the test on any error, and a WRITE_WITH_IMM message runner.

use rnic_harness::pattern;
use rnic_sim::{SimDevice, WorldConfig};
use rnic_verbs::*;
use rnic_wire::{opcode, Bth, Eth, Ipv4, Mceth, Mpeth, Reth, RoceFrame, Udp};

pub use rnic_harness::conn::{
    bring_up, rtr_attr, ConnOpts, EndOpts, PortAddr, Remote, Retry, DEFAULT_ADDRS,
};

/// One side of a connection on a simulated NIC.
pub type End = rnic_harness::conn::End<SimDevice>;
pub use rnic_driver::Break;
pub use rnic_harness::sim::SimPair as Pair;

/// Two NICs at `data_w` joined by the fabric profile `fabric`.
pub fn pair(data_w: u32, seed: u64, fabric: &str) -> Pair {
    Pair::new(data_w, seed, fabric).unwrap_or_else(|e| panic!("simulated pair: {e}"))
}

/// Two NICs of a world built from `cfg`.
pub fn pair_with(cfg: WorldConfig) -> Pair {
    Pair::with_world(cfg, "custom").unwrap_or_else(|e| panic!("simulated pair: {e}"))
}

/// A connection from `p.a` to `p.b` with the default buffers and PSNs.
pub fn connect(p: &Pair, o: &ConnOpts) -> (End, End) {
    connect_with(p, o, &EndOpts::default())
}

/// A connection from `p.a` to `p.b` with `e`'s buffers and PSNs.
pub fn connect_with(p: &Pair, o: &ConnOpts, e: &EndOpts) -> (End, End) {
    p.connect(o, e)
        .unwrap_or_else(|err| panic!("connect: {err}"))
}

/// One side (its QP in RESET) on `ctx`.
pub fn end(ctx: &Context<SimDevice>, o: &ConnOpts) -> End {
    rnic_harness::conn::end(ctx, o, &EndOpts::default()).unwrap_or_else(|err| panic!("end: {err}"))
}

/// The peer `i` of a simulated pair as a QP's remote side.
pub fn remote(i: usize, qpn: u32, psn: u32) -> Remote {
    Remote {
        qpn,
        psn,
        addr: DEFAULT_ADDRS[i],
    }
}

/// Moves `qp` to RESET and brings it up again towards `remote` (RTS,
/// sending from `sq_psn`).
pub fn reset_and_bring_up(
    qp: &mut QueuePair<SimDevice>,
    o: &ConnOpts,
    remote: &Remote,
    sq_psn: u32,
) {
    qp.modify(
        &QpAttr {
            qp_state: QpState::Reset,
            ..Default::default()
        },
        QpAttrMask::STATE,
    )
    .unwrap_or_else(|e| panic!("to RESET: {e}"));
    bring_up(qp, o, remote, sq_psn).unwrap_or_else(|e| panic!("bring up: {e}"));
}

/// Polls `cq` until `n` completions arrived (or `budget` idle polls in a
/// row found none).
pub fn wait_wc(
    dev: &SimDevice,
    cq: &CompletionQueue<SimDevice>,
    n: usize,
    budget: u64,
) -> Vec<WorkCompletion> {
    rnic_harness::poll::wait_wc(dev, cq, n, budget).unwrap_or_else(|e| panic!("poll: {e}"))
}

/// Turns one switch on (or every ordering switch off) and sets the CQE
/// ordering mode on `ctx`'s NIC.
pub fn set_break(ctx: &Context<SimDevice>, b: Option<Break>, flush: bool) {
    let sw = ctx.nic().debug_switches();
    for o in Break::ORDERING {
        sw.set(o, b == Some(o)).expect("debug switch");
    }
    ctx.nic().set_cqe_flush(flush).expect("CQE flush mode");
}

/// `n` messages of `writes` RDMA WRITEs and one WRITE_WITH_IMM each, one
/// message at a time; every byte is checked when the receiver sees the CQE.
/// Returns the number of ordering violations.
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
        pattern::fill_buf(&a.buf, src_off, total, tag);
        // stale bytes: the complement of what is coming
        pattern::fill_buf_stale(&b.buf, dst_off, total, tag);
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
        if pattern::check_buf(&b.buf, dst_off, total, tag).is_some() {
            violations += 1;
            // once everything drained the data must be right: a late write, not a lost one
            p.world.run(20_000);
            assert_eq!(
                pattern::check_buf(&b.buf, dst_off, total, tag),
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

/// An MP PROBE for QP number `qpn` at `psn` with `payload` (an mp QP
/// answers a good one with a reply on the probe's path, and nothing else).
pub fn mp_probe(qpn: u32, psn: u32, payload: Vec<u8>) -> RoceFrame {
    RoceFrame {
        bth: Bth {
            opcode: opcode::MP_PROBE,
            dest_qp: qpn,
            psn,
            ack_req: true,
            ..Bth::default()
        },
        payload,
        ..RoceFrame::default()
    }
}

/// A one-packet mp WRITE of `payload` for `b`'s QP at `psn`, placed at
/// `off` in `b`'s region; opcode `op`, and an MP_WRITE_LAST_WITH_IMMEDIATE
/// carries `imm` and the message length (the payload's).
pub fn mp_write(b: &End, psn: u32, op: u8, off: u64, imm: u32, payload: Vec<u8>) -> RoceFrame {
    let last_imm = op == opcode::MP_WRITE_LAST_WITH_IMMEDIATE;
    RoceFrame {
        bth: Bth {
            opcode: op,
            dest_qp: b.qp.qp_num(),
            psn: psn & 0xff_ffff,
            ..Bth::default()
        },
        mpeth: Some(Mpeth {
            va: b.mr.addr() + off,
            rkey: b.mr.rkey(),
            len: payload.len() as u32,
        }),
        immdt: last_imm.then_some(imm),
        mceth: last_imm.then_some(Mceth {
            msg_len: payload.len() as u32,
        }),
        payload,
        ..RoceFrame::default()
    }
}

/// A 64-byte RC RDMA WRITE ONLY of 0x5a bytes for `b`'s QP at `psn`, to
/// `b`'s region at 0, without AckReq: the responder places it and owes
/// the ACK (the flag AO) until its ACK timer sends one.
pub fn write_only_no_ack_req(b: &End, psn: u32) -> RoceFrame {
    let ri = b.mr.rdma_info(0).unwrap();
    RoceFrame {
        bth: Bth {
            opcode: opcode::RDMA_WRITE_ONLY,
            dest_qp: b.qp.qp_num(),
            psn,
            ack_req: false,
            ..Bth::default()
        },
        reth: Some(Reth {
            va: ri.remote_addr,
            rkey: ri.rkey,
            dma_len: 64,
        }),
        payload: vec![0x5a; 64],
        ..RoceFrame::default()
    }
}

/// The frame `f` (BTH, extension headers, payload) from NIC `from` of a
/// pair to the other, with UDP source port `sport`.
pub fn frame_sport(from: usize, sport: u16, f: RoceFrame) -> Vec<u8> {
    RoceFrame {
        eth: Eth {
            dst: DEFAULT_ADDRS[1 - from].mac,
            src: DEFAULT_ADDRS[from].mac,
        },
        ip: Ipv4 {
            src: DEFAULT_ADDRS[from].ip.octets(),
            dst: DEFAULT_ADDRS[1 - from].ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: sport,
            checksum: 0,
        },
        ..f
    }
    .encode()
}

/// `n` idle steps of NIC b alone (to take a frame sent to it).
pub fn idle_b(p: &Pair, n: u32) {
    for _ in 0..n {
        rnic_device::Device::idle(p.b.device());
    }
}

/// The frames NIC `src` sent that are in the window, decoded (a frame
/// that does not decode is left out).
pub fn sent_by(p: &Pair, src: usize) -> Vec<RoceFrame> {
    p.world
        .window()
        .iter()
        .filter(|f| f.src == src)
        .filter_map(|f| rnic_wire::decode(&f.data).ok())
        .collect()
}

/// Posts one signaled RDMA WRITE (`wr_id`) of `a`'s bytes `src..src+len`
/// to `b`'s region at `dst`; waits for nothing.
pub fn post_write(a: &mut End, b: &End, wr_id: u64, src: usize, dst: usize, len: usize) {
    let sge = [a.mr.sge(src, len as u32).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id,
        opcode: WrOpcode::RdmaWrite,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(b.mr.rdma_info(dst).unwrap()),
    })
    .unwrap();
}

/// Posts one receive WQE on `b` (`recv_id`) and one signaled
/// WRITE_WITH_IMM of `a`'s bytes 0..`len` to `b`'s region at 0 with
/// immediate `imm` (sent big-endian) as `send_id`; waits for nothing.
pub fn post_write_imm(a: &mut End, b: &mut End, len: u32, imm: u32, recv_id: u64, send_id: u64) {
    b.qp.post_recv(&RecvWr {
        wr_id: recv_id,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, len).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: send_id,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(imm.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
}
