//! The multipath (mp) transport between two simulated NICs: sprayed packets
//! placed on arrival, selective retransmission, completions in requester
//! order; the early-CQE break caught; a dead path survived; packets beyond
//! the window and ACKs/NAKs for PSNs never sent dropped and counted; mp
//! packets sent to an rc QP, and rc packets sent to an mp QP, dropped,
//! counted and never placed; several early WRITE_WITH_IMMs on one QP
//! completed in PSN order.

use rnic_tests::roce::*;
use rnic_torture::sim::{run_torture, Evidence, SimOpts};
use rnic_torture::Break;
use rnic_verbs::*;
use rnic_wire::{opcode, Aeth, Bth, Mceth, Mpeth, Reth, RoceFrame, Snaketh};

fn torture(
    fabric: &str,
    data_w: u32,
    seed: u64,
    messages: u64,
    brk: Option<Break>,
) -> rnic_torture::Report {
    let cfg = rnic_torture::Config {
        seed,
        messages,
        max_size: 8192,
        mp: true,
        spray_log: 3,
        brk,
        ..Default::default()
    };
    let o = SimOpts {
        data_w,
        seed,
        fabric: fabric.into(),
        ..Default::default()
    };
    run_torture(&o, &cfg, &Evidence::default(), &mut |_, _| {}, &mut |_| {})
        .unwrap()
        .report
}

/// CI-sized slices of the 100,000-message runs in the README: clean on 8
/// paths with 4x skewed delays plus loss, duplication, corruption and
/// reordering, and the losses were repaired by selective retransmission
/// (sequence NAKs naming one PSN), not only by timeouts.
#[test]
fn torture_is_clean_on_skewed_sprayed_paths_with_faults() {
    for (fabric, w, seed, messages) in [
        ("spray-8-hostile", 64, 5, 300),
        ("spray-8-lossy", 256, 6, 200),
    ] {
        let r = torture(fabric, w, seed, messages, None);
        assert!(!r.failed(), "{fabric} DATA_W={w}: {r:?}");
        assert_eq!(r.messages, messages);
        let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
        assert!(c("fabric.dropped") > 0, "{fabric}: {:?}", r.counters);
        assert!(
            c("a.rx_nak_seq") > 0 && c("a.tx_retransmits") > 0,
            "{fabric}: no selective retransmission: {:?}",
            r.counters
        );
    }
}

/// Small WRITE_WITH_IMMs only (1 to 256 bytes, 16 in flight per QP) on 8
/// skewed paths with 5 % loss: a loss holds the point back while later
/// messages land, so QPs park several deferred completions, hit their
/// limit (counted in `rx_drop_wimm`) and have the rest resent; every
/// completion still comes in order, after its data.
#[test]
fn small_write_with_imms_stay_in_order_with_several_deferred() {
    let cfg = rnic_torture::Config {
        seed: 3,
        messages: 600,
        qps: 2,
        min_size: 1,
        max_size: 256,
        writes_per_imm: 0,
        window: 16,
        mp: true,
        spray_log: 3,
        ..Default::default()
    };
    let o = SimOpts {
        data_w: 64,
        seed: 3,
        fabric: "spray-8-loss0.05".into(),
        ..Default::default()
    };
    let r = run_torture(&o, &cfg, &Evidence::default(), &mut |_, _| {}, &mut |_| {})
        .unwrap()
        .report;
    assert!(!r.failed(), "{r:?}");
    assert_eq!(r.messages, 600);
    let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    assert!(
        c("b.rx_drop_wimm") > 0 && c("a.tx_retransmits") > 0,
        "the per-QP limit was never reached: {:?}",
        r.counters
    );
}

/// The CQE-before-data break in mp mode: a WRITE_WITH_IMM that overtakes
/// its message's WRITEs on a fast path completes on arrival; the torture
/// test sees stale bytes at once.
#[test]
fn early_cqe_is_caught_in_mp() {
    let r = torture("spray-8", 64, 7, 200, Some(Break::EarlyCqe));
    assert!(r.violations > 0, "early-cqe not caught: {r:?}");
    let f = r.first_failure.as_ref().expect("a first failure");
    assert!(f.messages_before < 50, "caught late: {f:?}");
}

/// A path that loses every packet costs throughput, never data: after a
/// timeout the PSN-to-path mapping rotates, so the resent packets take
/// other paths.
#[test]
fn a_dead_path_costs_throughput_not_packets() {
    let r = torture("spray-8-dead", 64, 9, 120, None);
    assert!(!r.failed(), "{r:?}");
    assert_eq!(r.messages, 120);
    let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    assert!(
        c("fabric.dropped") > 0 && c("a.tx_retransmits") > 0,
        "{:?}",
        r.counters
    );
}

fn mp_opts() -> ConnOpts {
    ConnOpts {
        qp_type: QpType::Mp,
        spray_log: 3,
        ..ConnOpts::default()
    }
}

/// `f` (BTH, extension headers, payload) from NIC `from` to the other.
fn frame(from: usize, f: RoceFrame) -> Vec<u8> {
    frame_sport(from, 0xC000, f)
}

/// A forged 64-byte MP WRITE LAST from NIC a into `b`'s region, `ahead`
/// PSNs beyond `b`'s point `rq_psn`; then 200 idle steps for NIC b to take it.
fn write_ahead(p: &Pair, b: &End, rq_psn: u32, ahead: u32) {
    forged_write(p, b, (rq_psn + ahead) & 0xff_ffff, 0, 0x11, true);
    idle_b(p, 200);
}

/// A forged 64-byte MP WRITE LAST of `fill` bytes from NIC a at `off` in
/// `b`'s region with PSN `psn`.
fn forged_write(p: &Pair, b: &End, psn: u32, off: u64, fill: u8, ack_req: bool) {
    let mut f = mp_write(b, psn, opcode::MP_WRITE_LAST, off, 0, vec![fill; 64]);
    f.bth.ack_req = ack_req;
    p.world.send_frame(0, &frame(0, f));
}

/// Forged traffic against mp QPs: a WRITE beyond the receive window is
/// dropped unplaced and counted; an ACK and a NAK naming PSNs the
/// requester never sent are dropped and counted; the connection goes on.
#[test]
fn beyond_window_and_acks_for_unsent_psns_are_dropped_and_counted() {
    let p = pair(64, 61, "ideal");
    let (mut a, mut b) = connect(&p, &mp_opts());
    assert_eq!(a.qp.qp_type(), QpType::Mp);
    b.buf.fill(0, 4096, 0xEE);
    let st_b = b.qp.status().unwrap();
    let before_b = p.b.query_port_counters().unwrap();
    // 100 PSNs ahead of the point: beyond the 64-PSN window
    write_ahead(&p, &b, st_b.rq_psn_now, 100);
    let after_b = p.b.query_port_counters().unwrap();
    assert_eq!(
        after_b.rx_drop_psn,
        before_b.rx_drop_psn + 1,
        "beyond-window WRITE not counted"
    );
    assert!(
        b.buf.to_vec(0, 4096).iter().all(|&x| x == 0xEE),
        "beyond-window WRITE placed"
    );

    // ACK and NAK for PSNs a never sent
    let st_a = a.qp.status().unwrap();
    let before_a = p.a.query_port_counters().unwrap();
    for syn in [0x1F, 0x60] {
        let ack = frame(
            1,
            RoceFrame {
                bth: Bth {
                    opcode: opcode::MP_ACKNOWLEDGE,
                    dest_qp: a.qp.qp_num(),
                    psn: (st_a.sq_psn_now + 500) & 0xff_ffff,
                    ..Bth::default()
                },
                aeth: Some(Aeth {
                    syndrome: syn,
                    msn: 0,
                }),
                ..RoceFrame::default()
            },
        );
        p.world.send_frame(1, &ack);
    }
    for _ in 0..200 {
        rnic_device::Device::idle(p.a.device());
    }
    let after_a = p.a.query_port_counters().unwrap();
    assert_eq!(
        after_a.rx_drop_psn,
        before_a.rx_drop_psn + 2,
        "bogus ACK/NAK not counted"
    );
    assert_eq!(
        after_a.tx_retransmits, before_a.tx_retransmits,
        "a bogus NAK made a resend"
    );
    assert_eq!(a.qp.state().unwrap(), QpState::Rts);

    // the connection still works: a WRITE_WITH_IMM lands and completes
    rnic_tests::fill_pattern(&a.buf, 0, 3000, 5);
    post_write_imm(&mut a, &mut b, 3000, 7, 1, 2);
    let wcs = wait_wc(p.b.device(), &b.cq, 1, 400_000);
    assert_eq!(wcs.len(), 1);
    assert_eq!(
        (wcs[0].byte_len, wcs[0].imm_data.map(u32::from_be)),
        (3000, Some(7))
    );
    assert_eq!(rnic_tests::check_pattern(&b.buf, 0, 3000, 5), None);
}

/// mp carries WRITE and WRITE_WITH_IMM only: the verbs refuse a SEND.
#[test]
fn an_mp_qp_refuses_send() {
    let p = pair(64, 62, "ideal");
    let (mut a, _b) = connect(&p, &mp_opts());
    let sge = [a.mr.sge(0, 16).unwrap()];
    let e =
        a.qp.post_send(&SendWr {
            wr_id: 1,
            opcode: WrOpcode::Send,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: None,
        })
        .unwrap_err();
    assert!(e.to_string().contains("mp QP"), "{e}");
}

/// The window is per QP (a power of two up to the build's): a QP with
/// W = 16 drops a WRITE 20 PSNs ahead that a W = 64 QP would place, and
/// still moves data; a window that is not a power of two, or larger than
/// the build's, is refused.
#[test]
fn the_window_is_chosen_per_qp() {
    let p = pair(64, 63, "ideal");
    let o = ConnOpts {
        mp_window: 16,
        ..mp_opts()
    };
    let (mut a, mut b) = connect(&p, &o);
    b.buf.fill(0, 4096, 0xEE);
    let st_b = b.qp.status().unwrap();
    let before = p.b.query_port_counters().unwrap();
    write_ahead(&p, &b, st_b.rq_psn_now, 20);
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(
        after.rx_drop_psn,
        before.rx_drop_psn + 1,
        "20 PSNs ahead of a 16-PSN window"
    );
    assert!(b.buf.to_vec(0, 4096).iter().all(|&x| x == 0xEE));
    // 64 KiB = 64 packets through a 16-packet window
    rnic_tests::fill_pattern(&a.buf, 0, 65536, 9);
    b.qp.post_recv(&RecvWr {
        wr_id: 1,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 65536).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(1u32.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
    assert_eq!(wait_wc(p.b.device(), &b.cq, 1, 400_000).len(), 1);
    assert_eq!(rnic_tests::check_pattern(&b.buf, 0, 65536, 9), None);

    let mut e = end(&p.a, &mp_opts());
    let qp = &mut e.qp;
    type M = QpAttrMask;
    qp.modify(
        &QpAttr {
            qp_state: QpState::Init,
            port_num: 1,
            qp_access_flags: AccessFlags::REMOTE_WRITE,
            ..Default::default()
        },
        M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
    )
    .unwrap();
    for bad in [12u32, 256, 4] {
        let o = ConnOpts {
            mp_window: bad,
            ..mp_opts()
        };
        let (attr, mask) = rtr_attr(&o, &remote(1, 1, 0), 0);
        let e = qp.modify(&attr, mask).unwrap_err();
        assert!(e.to_string().contains("mp_window"), "window {bad}: {e}");
    }
}

/// What NIC b's QP `b` must look like after frames of the other transport:
/// each one counted in `rx_drop_transport`, nothing placed (the buffer
/// still 0xEE), no completion, no ACK or NAK sent, the QP still RTS.
fn assert_dropped_untouched(p: &Pair, b: &End, sent: u32, before: &PortCounters) {
    for _ in 0..400 {
        rnic_device::Device::idle(p.b.device());
    }
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(
        after.rx_drop_transport,
        before.rx_drop_transport + sent,
        "{after:?}"
    );
    assert_eq!(after.rx_frames, before.rx_frames + sent, "{after:?}");
    assert_eq!(after.tx_frames, before.tx_frames, "answered: {after:?}");
    assert_eq!(after.rx_nak, before.rx_nak, "{after:?}");
    assert_eq!(after.rx_drop_malformed, before.rx_drop_malformed);
    assert_eq!(after.rx_drop_icrc, before.rx_drop_icrc);
    assert!(
        b.buf.to_vec(0, 8192).iter().all(|&x| x == 0xEE),
        "a byte was placed"
    );
    assert!(
        wait_wc(p.b.device(), &b.cq, 1, 2_000).is_empty(),
        "a completion"
    );
    assert_eq!(b.qp.state().unwrap(), QpState::Rts);
}

/// Then the QPs still carry a WRITE_WITH_IMM of 3000 bytes, which lands.
fn assert_still_works(p: &Pair, a: &mut End, b: &mut End, seed: u64) {
    rnic_tests::fill_pattern(&a.buf, 0, 3000, seed);
    b.qp.post_recv(&RecvWr {
        wr_id: 11,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 3000).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 12,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(3u32.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
    let wcs = wait_wc(p.b.device(), &b.cq, 1, 400_000);
    assert_eq!(wcs.len(), 1);
    assert_eq!((wcs[0].byte_len, wcs[0].status), (3000, WcStatus::Success));
    assert_eq!(rnic_tests::check_pattern(&b.buf, 0, 3000, seed), None);
}

/// Frames of the other transport for NIC b's QP `b`, each at its expected
/// PSN with a valid rkey and address of its region: to an rc QP every mp
/// opcode; to an mp QP a WRITE ONLY, a WRITE ONLY WITH IMMEDIATE, a WRITE
/// FIRST and an ACK.
fn foreign_frames(b: &End, rq_psn: u32, to_mp: bool) -> Vec<RoceFrame> {
    let ops: &[(u8, u32)] = if to_mp {
        &[
            (opcode::RDMA_WRITE_ONLY, 100),
            (opcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE, 100),
            (opcode::RDMA_WRITE_FIRST, 1024),
            (opcode::ACKNOWLEDGE, 0),
        ]
    } else {
        &[
            (opcode::MP_WRITE, 1024),
            (opcode::MP_WRITE_LAST, 100),
            (opcode::MP_WRITE_LAST_WITH_IMMEDIATE, 100),
            (opcode::MP_ACKNOWLEDGE, 0),
            (opcode::MP_SELECTIVE_NAK, 0),
            (opcode::MP_PROBE, 0),
            (opcode::MP_PROBE_REPLY, 0),
        ]
    };
    ops.iter()
        .enumerate()
        .map(|(i, &(op, len))| {
            let va = b.mr.addr() + if to_mp { 0 } else { u64::from(i as u32 * 1024) };
            RoceFrame {
                bth: Bth {
                    opcode: op,
                    dest_qp: b.qp.qp_num(),
                    psn: (rq_psn + i as u32) & 0xff_ffff,
                    ack_req: true,
                    ..Bth::default()
                },
                reth: to_mp.then_some(Reth {
                    va,
                    rkey: b.mr.rkey(),
                    dma_len: len,
                }),
                mpeth: (!to_mp).then_some(Mpeth {
                    va,
                    rkey: b.mr.rkey(),
                    len,
                }),
                immdt: Some(0x0102_0304),
                mceth: (!to_mp).then_some(Mceth { msg_len: len }),
                aeth: Some(Aeth {
                    syndrome: 0x1F,
                    msn: 0,
                }),
                payload: vec![0x5A; len as usize],
                ..RoceFrame::default()
            }
        })
        .collect()
}

/// A QP drops and counts every packet of the other transport and places
/// nothing: an rc QP receiving mp packets (with a receive WQE posted for
/// the immediate, still there for the real message afterwards) at both
/// widths, and an mp QP receiving RC packets.
#[test]
fn a_qp_drops_and_counts_the_other_transports_packets() {
    for (w, to_mp, seed) in [(64u32, false, 21u64), (256, false, 23), (64, true, 22)] {
        let p = pair(w, 64 + u64::from(to_mp), "ideal");
        let (mut a, mut b) = connect(
            &p,
            &if to_mp {
                mp_opts()
            } else {
                ConnOpts::default()
            },
        );
        if !to_mp {
            assert_eq!(b.qp.qp_type(), QpType::Rc);
            b.qp.post_recv(&RecvWr {
                wr_id: 1,
                sg_list: &[],
            })
            .unwrap();
        }
        b.buf.fill(0, 8192, 0xEE);
        let st = b.qp.status().unwrap();
        let before = p.b.query_port_counters().unwrap();
        let frames = foreign_frames(&b, st.rq_psn_now, to_mp);
        for f in &frames {
            p.world.send_frame(0, &frame(0, f.clone()));
        }
        assert_dropped_untouched(&p, &b, frames.len() as u32, &before);
        assert_still_works(&p, &mut a, &mut b, seed);
    }
}

/// A slot used again starts afresh: its MSN counts from 0 again (rc and
/// mp), and the mp bitmap its old QP left behind (a packet that arrived
/// ahead of the point) marks none of the new QP's PSNs received. (With a
/// QP directory the new QP has another QP number in the same slot.)
/// The responder keeps MSN and bitmap in block RAM, which a QP load cannot
/// clear; a bit per QP makes them read as zero until written.
#[test]
fn a_reused_qp_number_starts_with_a_clear_msn_and_bitmap() {
    for mp in [true, false] {
        let p = pair(64, 66 + u64::from(mp), "ideal");
        let o = if mp { mp_opts() } else { ConnOpts::default() };
        let (slot, qpn) = {
            let (mut a, mut b) = connect(&p, &o);
            assert_eq!(write_imm_messages(&p, &mut a, &mut b, 3, 1, 3000, 5), 0);
            if mp {
                let st = b.qp.status().unwrap();
                write_ahead(&p, &b, st.rq_psn_now, 5);
            }
            (b.qp.slot(), b.qp.qp_num())
        };
        // the old QPs are gone; the new ones get the same slots and PSNs
        let (mut a, mut b) = connect(&p, &o);
        assert_eq!(b.qp.slot(), slot, "the slot was not used again");
        if p.b.nic().id().qpn_bits > 0 {
            assert_ne!(b.qp.qp_num(), qpn, "a QP number given again at once");
        }
        p.world.set_window(4096);
        assert_eq!(write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, 6), 0);
        let msns: Vec<u32> = sent_by(&p, 1)
            .iter()
            .filter_map(|f| f.aeth.map(|a| a.msn))
            .collect();
        assert!(!msns.is_empty(), "no ACK captured");
        // rc: every WRITE is a message, 3 x (2 WRITEs + 1 WRITE_WITH_IMM);
        // mp: a message completes with its WRITE_WITH_IMM. The old QP's
        // messages (6 rc, 3 mp) must not count on.
        let ok = if mp {
            msns[0] == 0 && msns.iter().all(|&m| m <= 3)
        } else {
            msns.iter().all(|&m| m <= 9) && msns.last() == Some(&9)
        };
        assert!(ok, "mp {mp}: MSNs of the new QP's ACKs: {msns:?}");
    }
}

/// A deferred WRITE_WITH_IMM completion that becomes due while the receive
/// queue is empty waits for a receive WQE (the responder's scan of owed
/// completions, which reads the receive ring's indices at the scanned QP),
/// and completes once one is posted. Forged: the message with the
/// immediate arrives one PSN ahead of the point, then the message at the
/// point; no receive WQE is posted until both are placed.
#[test]
fn an_owed_completion_waits_for_a_receive_wqe() {
    for w in rnic_tests::WIDTHS {
        let p = pair(w, 63, "ideal");
        let (_a, mut b) = connect(&p, &mp_opts());
        b.buf.fill(0, 4096, 0xEE);
        let point = b.qp.status().unwrap().rq_psn_now;
        let packet = |psn: u32, op: u8, off: u64, fill: u8| {
            frame(0, mp_write(&b, psn, op, off, 0xABCD, vec![fill; 64]))
        };
        let idle = |n: u32| {
            for _ in 0..n {
                rnic_device::Device::idle(p.b.device());
            }
        };
        p.world.send_frame(
            0,
            &packet(point + 1, opcode::MP_WRITE_LAST_WITH_IMMEDIATE, 64, 0x22),
        );
        idle(200);
        p.world
            .send_frame(0, &packet(point, opcode::MP_WRITE_LAST, 0, 0x11));
        idle(2_000);
        // both placed, the point past both, the completion owed
        assert_eq!(b.qp.status().unwrap().rq_psn_now, (point + 2) & 0xff_ffff);
        assert_eq!(b.buf.to_vec(0, 128), [[0x11; 64], [0x22; 64]].concat());
        let mut wc = [WorkCompletion::default(); 2];
        assert_eq!(
            b.cq.poll(&mut wc).unwrap(),
            0,
            "DATA_W {w}: completed without a receive WQE"
        );
        b.qp.post_recv(&RecvWr {
            wr_id: 9,
            sg_list: &[],
        })
        .unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, 100_000);
        assert_eq!(wcs.len(), 1, "DATA_W {w}: the owed completion never came");
        assert_eq!(
            (
                wcs[0].wr_id,
                wcs[0].byte_len,
                wcs[0].imm_data.map(u32::from_be)
            ),
            (9, 64, Some(0xABCD)),
            "DATA_W {w}"
        );
    }
}

/// The responder's expected PSN has one write port, which a QP load (a
/// modify to RESET or RTR of any QP) takes first: a packet's write-back
/// in that very cycle waits a cycle (`fin_wait`), it is not lost. Forged
/// rc WRITEs to one QP, each followed after 0..400 cycles (the frame's
/// path delay and the MMIO write's own latency included) by a modify to
/// RESET of another QP of the same NIC, so that some load meets some
/// write-back; every WRITE must move the expected PSN on by one.
#[test]
fn a_load_of_another_qp_does_not_lose_a_write_back() {
    let p = pair(64, 64, "ideal");
    let (_a, b) = connect(&p, &ConnOpts::default());
    let (_a2, mut b2) = connect(&p, &ConnOpts::default());
    let reset = QpAttr {
        qp_state: QpState::Reset,
        ..Default::default()
    };
    for d in 0..400u64 {
        let psn = b.qp.status().unwrap().rq_psn_now;
        let w = frame(
            0,
            RoceFrame {
                bth: Bth {
                    opcode: opcode::RDMA_WRITE_ONLY,
                    dest_qp: b.qp.qp_num(),
                    psn,
                    ..Bth::default()
                },
                reth: Some(Reth {
                    va: b.mr.addr(),
                    rkey: b.mr.rkey(),
                    dma_len: 8,
                }),
                payload: vec![d as u8; 8],
                ..RoceFrame::default()
            },
        );
        p.world.send_frame(0, &w);
        p.b.device().run(d);
        b2.qp.modify(&reset, QpAttrMask::STATE).unwrap();
        p.b.device().run(400);
        assert_eq!(
            b.qp.status().unwrap().rq_psn_now,
            (psn + 1) & 0xff_ffff,
            "the WRITE {d} cycles before the load was lost"
        );
    }
}

/// Several deferred WRITE_WITH_IMM completions on one QP (issue 22): the
/// simulated NIC holds up to 4 per QP (`id.mp_wimm`). Forged 64-byte
/// WRITE_WITH_IMMs for PSNs point+4, +2, +3, +1 (out of order) are all
/// placed and parked; a fifth, point+5, finds the QP full and is dropped
/// unplaced and counted (`rx_drop_wimm`). Nothing completes until the
/// WRITE at the point fills the hole; then the four complete in PSN order.
/// The resent point+5 then completes at once.
#[test]
fn several_early_write_with_imms_complete_in_psn_order() {
    for w in rnic_tests::WIDTHS {
        let p = pair(w, 64, "ideal");
        let (_a, mut b) = connect(&p, &mp_opts());
        b.buf.fill(0, 4096, 0xEE);
        let point = b.qp.status().unwrap().rq_psn_now;
        for i in 0..6 {
            b.qp.post_recv(&RecvWr {
                wr_id: 100 + i,
                sg_list: &[],
            })
            .unwrap();
        }
        let packet = |k: u32, op: u8| {
            let f = mp_write(
                &b,
                point + k,
                op,
                64 * u64::from(k),
                0x1000 + k,
                vec![k as u8 + 1; 64],
            );
            frame(0, f)
        };
        let idle = |n: u32| {
            for _ in 0..n {
                rnic_device::Device::idle(p.b.device());
            }
        };
        let before = p.b.query_port_counters().unwrap();
        for k in [4, 2, 3, 1, 5] {
            p.world
                .send_frame(0, &packet(k, opcode::MP_WRITE_LAST_WITH_IMMEDIATE));
            idle(300);
        }
        let after = p.b.query_port_counters().unwrap();
        assert_eq!(
            after.rx_drop_wimm,
            before.rx_drop_wimm + 1,
            "DATA_W {w}: the fifth on a QP holding four"
        );
        let mut wc = [WorkCompletion::default(); 8];
        assert_eq!(
            b.cq.poll(&mut wc).unwrap(),
            0,
            "DATA_W {w}: completed above the point"
        );
        assert_eq!(
            b.buf.to_vec(64, 256),
            (1..5u8).flat_map(|k| [k + 1; 64]).collect::<Vec<_>>()
        );
        assert_eq!(
            b.buf.to_vec(320, 64),
            vec![0xEE; 64],
            "DATA_W {w}: the dropped one was placed"
        );
        p.world.send_frame(0, &packet(0, opcode::MP_WRITE_LAST));
        let wcs = wait_wc(p.b.device(), &b.cq, 4, 100_000);
        let got: Vec<_> = wcs
            .iter()
            .map(|c| (c.wr_id, c.imm_data.map(u32::from_be)))
            .collect();
        assert_eq!(
            got,
            (1..5u32)
                .map(|k| (99 + u64::from(k), Some(0x1000 + k)))
                .collect::<Vec<_>>(),
            "DATA_W {w}: not in PSN order"
        );
        p.world
            .send_frame(0, &packet(5, opcode::MP_WRITE_LAST_WITH_IMMEDIATE));
        let wcs = wait_wc(p.b.device(), &b.cq, 1, 100_000);
        assert_eq!(
            (wcs.len(), wcs[0].wr_id, wcs[0].imm_data.map(u32::from_be)),
            (1, 104, Some(0x1005)),
            "DATA_W {w}: the resent one"
        );
        assert_eq!(b.qp.status().unwrap().rq_psn_now, (point + 6) & 0xff_ffff);
    }
}

/// A forged 64-byte MP WRITE LAST from NIC a, `k` PSNs beyond `b`'s point
/// `point`, at offset 64 k of `b`'s region, filled with k; 30 cycles
/// (packets follow each other closely: the responder's ACK timer, which
/// NAKs a hole that stands, needs 1,024 cycles or more).
fn placed_at(p: &Pair, b: &End, point: u32, k: u32) {
    forged_write(
        p,
        b,
        (point + k) & 0xff_ffff,
        64 * u64::from(k),
        k as u8,
        false,
    );
    p.world.run(30);
}

/// The selective NAKs NIC b sent since the window was cleared: the PSNs
/// each declares lost.
fn selective_naks(p: &Pair) -> Vec<Vec<u32>> {
    sent_by(p, 1)
        .into_iter()
        .filter(|f| f.bth.opcode == opcode::MP_SELECTIVE_NAK)
        .map(|f| {
            assert_eq!(f.aeth.map(|a| a.syndrome), Some(0x60), "{f:?}");
            f.snaketh.expect("no SNAKETH").lost_psns(f.bth.psn)
        })
        .collect()
}

/// The responder's selective NAK (MP SELECTIVE NAK) names, in one packet,
/// the point and every other hole at least the loss gap (16 PSNs) below
/// the highest PSN placed, and no hole above that; it sends no second one
/// until the point has passed the last hole the first named (else a NAK
/// sent while the resends travel would name them again); then a new loss
/// gets a new one. Forged: packets around holes at the point, +3 and +10,
/// then one at +26 (so +16..+25 are missing but not yet lost).
#[test]
fn a_selective_nak_names_every_lost_psn_once() {
    for w in rnic_tests::WIDTHS {
        let p = pair(w, 70, "ideal");
        let (_a, b) = connect(&p, &mp_opts());
        let point = b.qp.status().unwrap().rq_psn_now;
        let at = |k: u32| (point + k) & 0xff_ffff;
        p.world.set_window(4096);
        for k in (1..16).filter(|k| *k != 3 && *k != 10) {
            placed_at(&p, &b, point, k);
        }
        p.world.run(300);
        assert!(
            selective_naks(&p).is_empty(),
            "DATA_W {w}: a NAK before any packet is 16 beyond a hole"
        );
        placed_at(&p, &b, point, 26);
        p.world.run(300);
        assert_eq!(
            selective_naks(&p),
            vec![vec![at(0), at(3), at(10)]],
            "DATA_W {w}: the first selective NAK"
        );
        // more arrivals, the point moving within the span: no second NAK
        p.world.clear_window();
        for k in [27, 0, 3] {
            placed_at(&p, &b, point, k);
        }
        p.world.run(300);
        assert!(
            selective_naks(&p).is_empty(),
            "DATA_W {w}: a NAK inside the first one's span"
        );
        assert_eq!(b.qp.status().unwrap().rq_psn_now, at(10));
        // the last named hole filled: the point jumps to +16, the span is
        // passed; a packet 24 beyond it makes +16..+24 lost, and +25 is not
        placed_at(&p, &b, point, 10);
        p.world.run(300);
        assert_eq!(b.qp.status().unwrap().rq_psn_now, at(16));
        assert!(selective_naks(&p).is_empty(), "DATA_W {w}: {point}");
        placed_at(&p, &b, point, 40);
        p.world.run(300);
        assert_eq!(
            selective_naks(&p),
            vec![(16..=24).map(at).collect::<Vec<_>>()],
            "DATA_W {w}: the second selective NAK"
        );
        // every placed packet landed where its MPETH said, no other byte
        for k in 0..48u32 {
            let placed = (0..16).contains(&k) || [26, 27, 40].contains(&k);
            let got = b.buf.to_vec(64 * k as usize, 64);
            if placed {
                assert_eq!(got, vec![k as u8; 64], "DATA_W {w}: PSN +{k}");
            }
        }
    }
}

/// A hole that stands while no packet arrives a gap beyond it (a tail
/// loss; small messages) is NAKed by the responder's ACK timer: once the
/// QP's packets stop with its point a hole, one selective NAK names every
/// hole below the highest PSN placed, whatever the gap, and no other
/// follows while nothing arrives.
#[test]
fn a_hole_that_stands_is_naked_by_the_ack_timer() {
    let p = pair(64, 73, "ideal");
    let (_a, b) = connect(&p, &mp_opts());
    let point = b.qp.status().unwrap().rq_psn_now;
    let at = |k: u32| (point + k) & 0xff_ffff;
    p.world.set_window(4096);
    for k in [1, 2, 5, 7] {
        placed_at(&p, &b, point, k);
    }
    p.world.run(100);
    assert!(selective_naks(&p).is_empty(), "a NAK before the timer");
    p.world.run(3000);
    assert_eq!(
        selective_naks(&p),
        vec![vec![at(0), at(3), at(4), at(6)]],
        "the timer's NAK"
    );
    p.world.run(6000);
    assert_eq!(selective_naks(&p).len(), 1, "a second NAK with nothing new");
    // the holes filled: the point passes them, no further NAK
    p.world.clear_window();
    for k in [0, 3, 4, 6] {
        placed_at(&p, &b, point, k);
    }
    p.world.run(4000);
    assert_eq!(b.qp.status().unwrap().rq_psn_now, at(8));
    assert!(selective_naks(&p).is_empty());
}

/// The requester resends exactly the PSNs a selective NAK names, each
/// once, in PSN order, with the bytes first sent, and nothing else (the
/// timeout, which would go back N, is far). NIC a sends a 20-packet
/// WRITE_WITH_IMM that the fabric loses whole; a forged selective NAK
/// then names 4 of its PSNs; once the fabric delivers again, the timeout
/// brings the rest and the message completes intact.
#[test]
fn the_requester_resends_exactly_what_a_selective_nak_names() {
    let p = pair(64, 71, "ideal");
    let (mut a, mut b) = connect(&p, &mp_opts());
    rnic_tests::fill_pattern(&a.buf, 0, 20 * 1024, 9);
    b.qp.post_recv(&RecvWr {
        wr_id: 1,
        sg_list: &[],
    })
    .unwrap();
    p.world.set_drop_rate(None, 1.0).unwrap();
    p.world.set_window(4096);
    let sge = [a.mr.sge(0, 20 * 1024).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 5,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(3u32.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
    p.world.run(8_000);
    let sent = sent_by(&p, 0);
    assert_eq!(sent.len(), 20, "the first transmission");
    let psn0 = sent[0].bth.psn;
    let before = p.a.query_port_counters().unwrap();

    p.world.clear_window();
    let nak = frame(
        1,
        RoceFrame {
            bth: Bth {
                opcode: opcode::MP_SELECTIVE_NAK,
                dest_qp: a.qp.qp_num(),
                psn: psn0,
                ..Bth::default()
            },
            aeth: Some(Aeth {
                syndrome: 0x60,
                msn: 0,
            }),
            snaketh: Some(Snaketh {
                bitmap: 1 << 2 | 1 << 5 | 1 << 11,
            }),
            ..RoceFrame::default()
        },
    );
    assert!(p.world.inject_frame(0, &nak, false));
    p.world.run(8_000);
    let resent = sent_by(&p, 0);
    let want: Vec<u32> = [0, 3, 6, 12]
        .iter()
        .map(|k| (psn0 + k) & 0xff_ffff)
        .collect();
    assert_eq!(
        resent.iter().map(|f| f.bth.psn).collect::<Vec<_>>(),
        want,
        "resent after the selective NAK"
    );
    for f in &resent {
        // (the source port may differ: the resend avoids the path the
        // NAK's PSN took)
        let first = sent.iter().find(|s| s.bth.psn == f.bth.psn).unwrap();
        let same = RoceFrame {
            udp: first.udp.clone(),
            ..f.clone()
        } == *first;
        assert!(same, "PSN {:#x} resent differently", f.bth.psn);
    }
    let after = p.a.query_port_counters().unwrap();
    assert_eq!(after.tx_retransmits, before.tx_retransmits + 4);

    p.world.set_drop_rate(None, 0.0).unwrap();
    let wcs = wait_wc(p.b.device(), &b.cq, 1, 2_000_000);
    assert_eq!(
        (
            wcs.len(),
            wcs[0].byte_len,
            wcs[0].imm_data.map(u32::from_be)
        ),
        (1, 20 * 1024, Some(3))
    );
    assert_eq!(rnic_tests::check_pattern(&b.buf, 0, 20 * 1024, 9), None);
    let wcs = wait_wc(p.a.device(), &a.cq, 1, 400_000);
    assert_eq!(wcs.len(), 1);
}

/// Two NICs on 4 paths (delays 100 to 400 cycles) whose ports hash modulo
/// 4, so that path index 3 of every sprayed QP lands on the same link,
/// which drops everything; `loss` on the others.
fn dead_3_of_4(loss: f64) -> Pair {
    path_3_of_4(loss, None, false)
}

/// The path health threshold is the NIC's `port.path_cfg.thresh`: 0 turns
/// path health off, so on the dead-path fabric below no path is taken out
/// and every QP keeps a quarter of its packets on the dead link; a value
/// beyond 3 is refused.
#[test]
fn path_health_off_takes_no_path_out() {
    let p = dead_3_of_4(0.0);
    assert_eq!(p.a.path_thresh().unwrap(), 1, "the reset value");
    assert!(matches!(
        p.a.set_path_thresh(4),
        Err(rnic_verbs::VerbsError::InvalidArgument(_))
    ));
    assert_eq!(
        p.a.path_thresh().unwrap(),
        1,
        "a refused value changes nothing"
    );
    let r = rnic_torture::perf::write_bw(
        &p.a,
        p.addrs[0],
        &p.b,
        p.addrs[1],
        &rnic_torture::perf::BwOpts {
            msg_size: 16384,
            messages: 64,
            qps: 4,
            window: 8,
            mtu: Mtu::Mtu1024,
            watchdog: 4_000_000,
            spray_log: 2,
            qp_type: QpType::Mp,
            path_thresh: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(p.a.path_thresh().unwrap(), 0);
    let c = p.a.query_port_counters().unwrap();
    let paths = p.world.path_stats_from(0);
    let (dead, all) = (paths[3].sent, paths.iter().map(|s| s.sent).sum::<u64>());
    eprintln!(
        "{} cycles, {all} frames, {dead} into the dead path; {c:?}",
        r.cycles
    );
    assert_eq!((c.path_takeouts, c.path_comebacks), (0, 0), "{c:?}");
    assert!(
        dead * 5 >= all,
        "with path health off a quarter of the packets should meet the dead link: {dead} of {all}"
    );
}

/// Path health: 4 paths whose ports hash modulo 4, so that one path index
/// of every QP lands on the same dead link (path 3), and 2 % loss on the
/// others. Every QP takes its dead path out at its first loss there
/// (`path_takeouts`, at the reset value of `port.path_cfg.thresh`; a live
/// path that loses a packet goes out too, and a probe brings it back:
/// `path_comebacks`). From then on a QP sends into
/// the dead link only probes, the first an epoch (16,384 cycles) after the
/// take-out and each next one after twice the wait, up to 8 epochs. So
/// the frames sent into it stay within what each QP had on its way there
/// when it went out (a quarter of 8 WRITEs of 16 packets) plus its probes;
/// without path health a QP keeps a quarter of its packets on that link.
#[test]
fn a_dead_path_is_taken_out_and_only_probed() {
    let p = dead_3_of_4(0.02);
    let qps = 4u64;
    let r = rnic_torture::perf::write_bw(
        &p.a,
        p.addrs[0],
        &p.b,
        p.addrs[1],
        &rnic_torture::perf::BwOpts {
            msg_size: 16384,
            messages: 200,
            qps: qps as u32,
            window: 8,
            mtu: Mtu::Mtu1024,
            watchdog: 2_000_000,
            spray_log: 2,
            qp_type: QpType::Mp,
            ..Default::default()
        },
    )
    .unwrap();
    let c = p.a.query_port_counters().unwrap();
    let paths = p.world.path_stats_from(0);
    let dead = paths[3].sent;
    let all: u64 = paths.iter().map(|s| s.sent).sum();
    let epochs = r.cycles / 16384 + 1;
    eprintln!(
        "{} cycles, {all} frames, {dead} into the dead path, {} taken out, {} back; {c:?}",
        r.cycles, c.path_takeouts, c.path_comebacks
    );
    assert!(
        u64::from(c.path_takeouts) >= qps,
        "not every QP took its dead path out: {c:?}"
    );
    let bound = qps * (32 + 4 + epochs / 8);
    assert!(
        dead <= bound,
        "{dead} frames into the dead path (bound {bound}, of {all}; {epochs} epochs)"
    );
}

/// 4 paths hashed modulo 4 with `loss` on paths 0 to 2, path 3 either
/// dead or flapping (`flap`); path i takes 100 + 100 i cycles each way,
/// or 400 if `even`.
fn path_3_of_4(loss: f64, flap: Option<rnic_sim::Flap>, even: bool) -> Pair {
    use rnic_sim::{FabricConfig, PathConfig, PathHash, WorldConfig};
    let mut f = FabricConfig::with_paths(
        if flap.is_some() {
            "flap-3-of-4"
        } else {
            "dead-3-of-4"
        },
        (0..4u64)
            .map(|i| PathConfig {
                delay: if even { 400 } else { 100 + 100 * i },
                drop_rate: match (i, flap) {
                    (3, None) => 1.0,
                    (3, Some(_)) => 0.0,
                    _ => loss,
                },
                flap: if i == 3 { flap } else { None },
                ..PathConfig::default()
            })
            .collect(),
    );
    f.hash = PathHash::Modulo;
    pair_with(WorldConfig {
        nics: 2,
        data_w: 64,
        seed: 5,
        fabric: f,
        ..WorldConfig::default()
    })
}

fn spray_4_writes(p: &Pair, qps: u32, messages: u64) -> rnic_torture::perf::BwResult {
    rnic_torture::perf::write_bw(
        &p.a,
        p.addrs[0],
        &p.b,
        p.addrs[1],
        &rnic_torture::perf::BwOpts {
            msg_size: 16384,
            messages,
            qps,
            window: 8,
            mtu: Mtu::Mtu1024,
            watchdog: 2_000_000,
            spray_log: 2,
            qp_type: QpType::Mp,
            ..Default::default()
        },
    )
    .unwrap()
}

/// An mp QP probes a path it took out with an MP PROBE, a frame without
/// data: on a link that stays dead the probes cost no data and no resend.
/// Every frame into the dead link that is not a probe is a data packet
/// sent before its QP took the path out (at most 1,098 bytes: 1,024 of
/// payload and the MPETH headers); the probes are runts (60 bytes). A
/// live path taken out (a loss on the dead link blamed on it) comes back
/// at its first probe, so the probes into the dead link are those that
/// brought no path back. Were the probes data packets, each would add
/// about a kilobyte.
#[test]
fn mp_probes_carry_no_data() {
    let p = path_3_of_4(0.0, None, false);
    let qps = 4u32;
    let r = spray_4_writes(&p, qps, 200);
    let c = p.a.query_port_counters().unwrap();
    let dead = p.world.path_stats_from(0)[3];
    let probes = u64::from(c.path_probes);
    eprintln!(
        "{} cycles, {} frames ({} B) into the dead path, {probes} probes; {c:?}",
        r.cycles, dead.sent, dead.bytes_sent
    );
    assert!(u64::from(c.path_takeouts) >= u64::from(qps), "{c:?}");
    assert!(
        probes >= u64::from(qps),
        "every QP should have probed its dead path: {c:?}"
    );
    assert!(
        c.path_comebacks + qps <= c.path_takeouts,
        "a dead path came back: {c:?}"
    );
    let probes = probes - u64::from(c.path_comebacks);
    assert!(probes <= dead.sent, "{probes} probes, {} frames", dead.sent);
    let data_frames = dead.sent - probes;
    assert!(
        dead.bytes_sent <= data_frames * 1098 + probes * 60,
        "{} bytes into the dead path: {data_frames} data frames and {probes} probes should be at most {}",
        dead.bytes_sent,
        data_frames * 1098 + probes * 60
    );
}

/// A path that comes back is found by the reply to a probe: with path 3
/// down from cycle 40,000 to 80,000 (and again from 120,000), every QP
/// takes it out and brings it back, and the NIC reports the round trip of
/// the last answered probe: at least a path's 800 cycles there and back
/// (every path takes 400 each way here), at most the 4,096 after which a
/// probe counts as lost.
#[test]
fn a_probe_reply_brings_a_healed_path_back_and_times_it() {
    let p = path_3_of_4(
        0.0,
        Some(rnic_sim::Flap {
            up: 40_000,
            down: 40_000,
        }),
        true,
    );
    let qps = 4u32;
    let r = spray_4_writes(&p, qps, 200);
    let c = p.a.query_port_counters().unwrap();
    eprintln!("{} cycles; {c:?}", r.cycles);
    assert!(r.cycles > 100_000, "the run ended before the path healed");
    assert!(u64::from(c.path_takeouts) >= u64::from(qps), "{c:?}");
    assert!(
        u64::from(c.path_comebacks) >= u64::from(qps),
        "not every QP brought its healed path back: {c:?}"
    );
    assert!(c.path_probes >= c.path_comebacks, "{c:?}");
    assert!(
        (800..4096).contains(&c.path_probe_rtt),
        "probe round trip {} cycles: {c:?}",
        c.path_probe_rtt
    );
}

/// An mp QP answers an MP PROBE with an MP PROBE REPLY that carries the
/// probe's PSN and UDP source port (so that it returns over the probed
/// path) and nothing else; a probe with bytes after its BTH is malformed
/// (`rx_drop_malformed`), one for a QP that does not exist is dropped
/// (`rx_drop_qp`), and neither is answered. (An rc QP drops and counts
/// probes as the other transport's: `a_qp_drops_and_counts_...`.)
#[test]
fn an_mp_qp_answers_a_probe_on_its_path_and_only_a_good_one() {
    let p = pair(64, 71, "ideal");
    let (_a, b) = connect(&p, &mp_opts());
    let psn = b.qp.status().unwrap().rq_psn_now;
    let probe = |qpn: u32, payload: Vec<u8>| mp_probe(qpn, psn, payload);
    p.world.set_window(64);
    let before = p.b.query_port_counters().unwrap();
    p.world
        .send_frame(0, &frame_sport(0, 0xC123, probe(b.qp.qp_num(), vec![])));
    idle_b(&p, 400);
    let replies = sent_by(&p, 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let r = &replies[0];
    assert_eq!(r.bth.opcode, opcode::MP_PROBE_REPLY);
    assert_eq!(r.bth.psn, psn);
    assert_eq!(
        r.udp.src_port, 0xC123,
        "the reply must take the probe's path"
    );
    assert!(r.payload.is_empty() && r.aeth.is_none(), "{r:?}");
    let mid = p.b.query_port_counters().unwrap();
    assert_eq!(mid.rx_frames, before.rx_frames + 1);
    assert_eq!(mid.rx_drop_psn, before.rx_drop_psn, "a probe takes no PSN");

    p.world.clear_window();
    p.world.send_frame(
        0,
        &frame_sport(0, 0xC124, probe(b.qp.qp_num(), vec![0x5A; 4])),
    );
    p.world.send_frame(
        0,
        &frame_sport(0, 0xC125, probe(b.qp.qp_num() ^ 0x40, vec![])),
    );
    idle_b(&p, 400);
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(
        after.rx_drop_malformed,
        mid.rx_drop_malformed + 1,
        "{after:?}"
    );
    assert_eq!(after.rx_drop_qp, mid.rx_drop_qp + 1, "{after:?}");
    assert_eq!(after.tx_frames, mid.tx_frames, "answered: {after:?}");
    assert!(p.world.window().iter().all(|f| f.src != 1));
}
