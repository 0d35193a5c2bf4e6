//! The multipath (mp) transport between two simulated NICs: sprayed packets
//! placed on arrival, selective retransmission, completions in requester
//! order; the early-CQE break caught; a dead path survived; packets beyond
//! the window and ACKs/NAKs for PSNs never sent dropped and counted.

use rnic_tests::roce::*;
use rnic_torture::sim::{run_torture, Evidence, SimOpts};
use rnic_torture::Break;
use rnic_verbs::*;
use rnic_wire::{opcode, Aeth, Bth, Eth, Ipv4, Reth, RoceFrame, Udp};

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

fn frame(
    from: usize,
    bth: Bth,
    reth: Option<Reth>,
    aeth: Option<Aeth>,
    payload: Vec<u8>,
) -> Vec<u8> {
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
            src_port: 0xC000,
            checksum: 0,
        },
        bth,
        reth,
        immdt: None,
        aeth,
        payload,
    }
    .encode()
}

/// A forged 64-byte WRITE_ONLY from NIC a into `b`'s region, `ahead` PSNs
/// beyond `b`'s point `rq_psn`; then 200 idle steps for NIC b to take it.
fn write_ahead(p: &Pair, b: &End, rq_psn: u32, ahead: u32) {
    let w = frame(
        0,
        Bth {
            opcode: opcode::RDMA_WRITE_ONLY,
            dest_qp: b.qp.qp_num(),
            psn: (rq_psn + ahead) & 0xff_ffff,
            ack_req: true,
            ..Bth::default()
        },
        Some(Reth {
            va: b.mr.addr(),
            rkey: b.mr.rkey(),
            dma_len: 64,
        }),
        None,
        vec![0x11; 64],
    );
    p.world.send_frame(0, &w);
    for _ in 0..200 {
        rnic_device::Device::idle(p.b.device());
    }
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
            Bth {
                opcode: opcode::ACKNOWLEDGE,
                dest_qp: a.qp.qp_num(),
                psn: (st_a.sq_psn_now + 500) & 0xff_ffff,
                ..Bth::default()
            },
            None,
            Some(Aeth {
                syndrome: syn,
                msn: 0,
            }),
            vec![],
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
    b.qp.post_recv(&RecvWr {
        wr_id: 1,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 3000).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(7u32.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
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
        let (attr, mask) = rtr_attr(&o, &remote(1, 1, 0));
        let e = qp.modify(&attr, mask).unwrap_err();
        assert!(e.to_string().contains("mp_window"), "window {bad}: {e}");
    }
}
