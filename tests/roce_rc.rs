//! RoCEv2 Reliable Connection between two simulated NICs: WRITE,
//! WRITE_WITH_IMM, SEND/RECV, ACKs, and the responder's completion barrier.

use rnic_sim::{FabricConfig, WorldConfig};
use rnic_tests::roce::*;
use rnic_tests::{check_pattern, fill_pattern, WIDTHS};
use rnic_verbs::*;

const BUDGET: u64 = 200_000;

#[test]
fn write_write_write_with_imm() {
    for w in WIDTHS {
        let p = pair(w, 1, "ideal");
        let o = ConnOpts::default();
        let (mut a, b) = connect(&p, &o);
        fill_pattern(&a.buf, 0, 3000, 7);
        let sges = [
            [a.mr.sge(0, 1000).unwrap()],
            [a.mr.sge(1000, 1500).unwrap()],
            [a.mr.sge(2500, 500).unwrap()],
        ];
        let at = |off: usize| Some(b.mr.rdma_info(off).unwrap());
        a.qp.post_send_list(&[
            SendWr {
                wr_id: 1,
                opcode: WrOpcode::RdmaWrite,
                send_flags: SendFlags::empty(),
                sg_list: &sges[0],
                imm_data: None,
                rdma: at(0),
            },
            SendWr {
                wr_id: 2,
                opcode: WrOpcode::RdmaWrite,
                send_flags: SendFlags::empty(),
                sg_list: &sges[1],
                imm_data: None,
                rdma: at(1000),
            },
            SendWr {
                wr_id: 3,
                opcode: WrOpcode::RdmaWriteWithImm,
                send_flags: SendFlags::SIGNALED,
                sg_list: &sges[2],
                imm_data: Some(0xdead_beef_u32.to_be()),
                rdma: at(2500),
            },
        ])
        .unwrap();
        // the responder needs a receive WQE for the immediate
        let mut bqp = b.qp;
        bqp.post_recv(&RecvWr {
            wr_id: 77,
            sg_list: &[],
        })
        .unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1, "DATA_W={w}: no receive completion");
        let wc = wcs[0];
        assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
        assert_eq!(wc.opcode, WcOpcode::RecvRdmaWithImm);
        assert_eq!(wc.wr_id, 77);
        assert_eq!(wc.byte_len, 500);
        assert_eq!(wc.imm_data.map(u32::from_be), Some(0xdead_beef));
        assert_eq!(
            check_pattern(&b.buf, 0, 3000, 7),
            None,
            "data must be complete at the CQE"
        );
        let swc = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
        assert_eq!(swc.len(), 1);
        assert_eq!(swc[0].wr_id, 3);
        assert_eq!(swc[0].status, WcStatus::Success);
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
    }
}

#[test]
fn frames_really_cross_the_wire() {
    let p = pair(64, 2, "ideal");
    let (mut a, mut b) = connect(&p, &ConnOpts::default());
    fill_pattern(&a.buf, 0, 5000, 3);
    b.qp.post_recv(&RecvWr {
        wr_id: 5,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 5000).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 9,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(1u32.to_be()),
        rdma: Some(b.mr.rdma_info(100).unwrap()),
    })
    .unwrap();
    let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1);
    assert_eq!(check_pattern(&b.buf, 100, 5000, 3), None);
    let ca = p.a.query_port_counters().unwrap();
    let cb = p.b.query_port_counters().unwrap();
    eprintln!("a: {ca:?}\nb: {cb:?}\nfabric: {:?}", p.world.fabric_stats());
    // 5000 B at PMTU 1024: 5 packets one way, at least one ACK back
    assert!(ca.tx_frames >= 5 && cb.rx_frames >= 5, "{ca:?} {cb:?}");
    assert!(cb.tx_frames >= 1 && ca.rx_frames >= 1);
}

/// How many messages a broken barrier may take to show (40 until CI's
/// time ran short on 2026-12-07; every switch showed within the first
/// few).
const BREAK_WITHIN: usize = 12;

#[test]
fn barrier_holds_and_each_switch_is_caught() {
    for w in WIDTHS {
        for (brk, flush) in [
            (None, false),
            (None, true),
            (Some(Break::CqeRo), false),
            (Some(Break::CqeRo), true),
            (Some(Break::EarlyCqe), false),
            (Some(Break::Bypass), false),
        ] {
            let p = pair(w, 40, "ideal");
            let o = ConnOpts {
                mtu: Mtu::Mtu1024,
                ..ConnOpts::default()
            };
            let e = EndOpts {
                buf_len: 1 << 15,
                ..EndOpts::default()
            };
            let (mut a, mut b) = connect_with(&p, &o, &e);
            set_break(&p.b, brk, flush);
            let n = if brk.is_some() { BREAK_WITHIN } else { 40 };
            let v = write_imm_messages(&p, &mut a, &mut b, n, 2, 3000, 40);
            eprintln!("DATA_W={w} break={brk:?} flush={flush}: {v} violations in {n} messages");
            if brk.is_some() {
                assert!(
                    v > 0,
                    "DATA_W={w}: {brk:?} (flush={flush}) went unnoticed in {n} messages"
                );
            } else {
                assert_eq!(v, 0, "DATA_W={w} flush={flush}: the barrier must hold");
            }
        }
    }
}

/// One message of `len` bytes through `a`, checked at `b`'s CQE.
fn one_write_imm(
    p: &Pair,
    a: &mut End,
    b: &mut End,
    len: usize,
    src_off: usize,
    dst_off: usize,
    tag: u64,
) -> WorkCompletion {
    fill_pattern(&a.buf, src_off, len, tag);
    b.buf.fill(dst_off, len, 0);
    b.qp.post_recv(&RecvWr {
        wr_id: tag,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(src_off, len as u32).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: tag,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some((tag as u32).to_be()),
        rdma: Some(b.mr.rdma_info(dst_off).unwrap()),
    })
    .unwrap();
    let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
    if wcs.is_empty() {
        eprintln!(
            "a: {:?}\nb: {:?}\nsend side: {:?}",
            p.a.query_port_counters(),
            p.b.query_port_counters(),
            wait_wc(p.a.device(), &a.cq, 1, 10)
        );
    }
    assert_eq!(wcs.len(), 1, "len {len}: no receive completion");
    assert_eq!(wcs[0].status, WcStatus::Success, "len {len}: {:?}", wcs[0]);
    assert_eq!(wcs[0].byte_len as usize, len);
    assert_eq!(wcs[0].imm_data.map(u32::from_be), Some(tag as u32));
    assert_eq!(
        check_pattern(&b.buf, dst_off, len, tag),
        None,
        "len {len}: data wrong at the CQE"
    );
    let swc = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(swc.len(), 1, "len {len}: no send completion");
    assert_eq!(swc[0].status, WcStatus::Success, "len {len}: {:?}", swc[0]);
    wcs[0]
}

#[test]
fn psn_wraps_at_2_pow_24() {
    for w in WIDTHS {
        let p = pair(w, 3, "ideal");
        let o = ConnOpts {
            mtu: Mtu::Mtu256,
            ..ConnOpts::default()
        };
        let e = EndOpts {
            psn_a: (1 << 24) - 5,
            psn_b: (1 << 24) - 2,
            ..EndOpts::default()
        };
        let (mut a, mut b) = connect_with(&p, &o, &e);
        // 10 packets each way across the wrap point, then more messages after it
        for (i, len) in [2560usize, 100, 3000, 1].iter().enumerate() {
            one_write_imm(&p, &mut a, &mut b, *len, 0, 64 + i, i as u64 + 1);
        }
        for (i, len) in [2560usize, 257].iter().enumerate() {
            one_write_imm(&p, &mut b, &mut a, *len, 3, 5 + i, i as u64 + 10);
        }
        let st = a.qp.status().unwrap();
        assert_eq!(st.state, QpState::Rts);
    }
}

#[test]
fn pmtu_boundaries_plus_minus_one() {
    for w in WIDTHS {
        for mtu in [
            Mtu::Mtu256,
            Mtu::Mtu512,
            Mtu::Mtu1024,
            Mtu::Mtu2048,
            Mtu::Mtu4096,
        ] {
            let p = pair(w, 4, "ideal");
            let o = ConnOpts {
                mtu,
                ..ConnOpts::default()
            };
            let (mut a, mut b) = connect(&p, &o);
            let m = mtu.bytes() as usize;
            for (i, len) in [m - 1, m, m + 1, 2 * m - 1, 2 * m, 2 * m + 1]
                .iter()
                .enumerate()
            {
                one_write_imm(&p, &mut a, &mut b, *len, 7, 3, (i + 1) as u64);
            }
        }
    }
}

#[test]
fn zero_length_write_with_imm() {
    for w in WIDTHS {
        let p = pair(w, 5, "ideal");
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        b.qp.post_recv(&RecvWr {
            wr_id: 1,
            sg_list: &[],
        })
        .unwrap();
        a.qp.post_send(&SendWr {
            wr_id: 2,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &[],
            imm_data: Some(0x0102_0304u32.to_be()),
            rdma: Some(b.mr.rdma_info(0).unwrap()),
        })
        .unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1);
        assert_eq!((wcs[0].status, wcs[0].byte_len), (WcStatus::Success, 0));
        assert_eq!(wcs[0].imm_data.map(u32::from_be), Some(0x0102_0304));
        assert_eq!(wait_wc(p.a.device(), &a.cq, 1, BUDGET).len(), 1);
    }
}

#[test]
fn messages_1b_to_1mib() {
    for w in WIDTHS {
        let p = pair(w, 6, "ideal");
        let o = ConnOpts {
            mtu: Mtu::Mtu4096,
            ..ConnOpts::default()
        };
        let e = EndOpts {
            buf_len: (1 << 20) + 8192,
            ..EndOpts::default()
        };
        let (mut a, mut b) = connect_with(&p, &o, &e);
        for (i, len) in [1usize, 2, 3, 63, 4095, 4097, 65536 + 7, 1 << 20]
            .iter()
            .enumerate()
        {
            one_write_imm(&p, &mut a, &mut b, *len, 5, 11, (i + 1) as u64);
        }
    }
}

#[test]
fn send_and_recv() {
    for w in WIDTHS {
        let p = pair(w, 7, "ideal");
        let o = ConnOpts {
            mtu: Mtu::Mtu512,
            ..ConnOpts::default()
        };
        let (mut a, mut b) = connect(&p, &o);
        for (i, (len, imm)) in [
            (1usize, None),
            (512, Some(5u32)),
            (513, None),
            (5000, Some(9)),
            (0, None),
        ]
        .iter()
        .enumerate()
        {
            let tag = i as u64 + 1;
            fill_pattern(&a.buf, 100, *len, tag);
            b.buf.fill(3000, 8000, 0);
            b.qp.post_recv(&RecvWr {
                wr_id: tag,
                sg_list: &[b.mr.sge(3000, 6000).unwrap()],
            })
            .unwrap();
            let sge = [a.mr.sge(100, *len as u32).unwrap()];
            a.qp.post_send(&SendWr {
                wr_id: tag,
                opcode: if imm.is_some() {
                    WrOpcode::SendWithImm
                } else {
                    WrOpcode::Send
                },
                send_flags: SendFlags::SIGNALED,
                sg_list: if *len == 0 { &[] } else { &sge },
                imm_data: imm.map(u32::to_be),
                rdma: None,
            })
            .unwrap();
            let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
            assert_eq!(wcs.len(), 1, "SEND {len}: no receive completion");
            let wc = wcs[0];
            assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
            assert_eq!(wc.opcode, WcOpcode::Recv);
            assert_eq!((wc.wr_id, wc.byte_len as usize), (tag, *len));
            assert_eq!(wc.imm_data.map(u32::from_be), *imm);
            assert_eq!(wc.src_qp, a.qp.qp_num());
            assert_eq!(check_pattern(&b.buf, 3000, *len, tag), None);
            assert!(
                b.buf.to_vec(3000 + len, 100).iter().all(|x| *x == 0),
                "SEND {len} overran its length"
            );
            let swc = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
            assert_eq!(swc.len(), 1);
            assert_eq!(
                (swc[0].status, swc[0].opcode),
                (WcStatus::Success, WcOpcode::Send)
            );
        }
    }
}

#[test]
fn sixty_four_qps_interleaved() {
    for w in WIDTHS {
        let p = pair(w, 8, "ideal");
        let o = ConnOpts {
            mtu: Mtu::Mtu512,
            sq_depth: 16,
            rq_depth: 16,
            ..ConnOpts::default()
        };
        let e = EndOpts {
            buf_len: 8192,
            ..EndOpts::default()
        };
        let mut conns: Vec<(End, End)> = (0..64).map(|_| connect_with(&p, &o, &e)).collect();
        assert_eq!(conns.len(), 64);
        // every QP has a 3-packet message in flight at once, posted round robin
        for round in 0..3u64 {
            for (i, (a, b)) in conns.iter_mut().enumerate() {
                let tag = round * 1000 + i as u64 + 1;
                fill_pattern(&a.buf, 0, 1300, tag);
                b.buf.fill(100, 1300, 0);
                b.qp.post_recv(&RecvWr {
                    wr_id: tag,
                    sg_list: &[],
                })
                .unwrap();
                let sge = [a.mr.sge(0, 1300).unwrap()];
                a.qp.post_send(&SendWr {
                    wr_id: tag,
                    opcode: WrOpcode::RdmaWriteWithImm,
                    send_flags: SendFlags::SIGNALED,
                    sg_list: &sge,
                    imm_data: Some((tag as u32).to_be()),
                    rdma: Some(b.mr.rdma_info(100).unwrap()),
                })
                .unwrap();
            }
            for (i, (a, b)) in conns.iter_mut().enumerate() {
                let tag = round * 1000 + i as u64 + 1;
                let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
                assert_eq!(wcs.len(), 1, "QP {i} round {round}");
                assert_eq!(
                    (wcs[0].status, wcs[0].wr_id),
                    (WcStatus::Success, tag),
                    "QP {i} round {round}: {:?}",
                    wcs[0]
                );
                assert_eq!(wcs[0].qp_num, b.qp.qp_num());
                assert_eq!(
                    check_pattern(&b.buf, 100, 1300, tag),
                    None,
                    "QP {i} round {round}"
                );
                assert_eq!(wait_wc(p.a.device(), &a.cq, 1, BUDGET).len(), 1);
            }
        }
    }
}

/// A WRITE the responder must refuse: it NAKs with the code, the requester
/// completes in error and goes to ERR, and not one byte lands.
fn refused_write(
    w: u32,
    seed: u64,
    o: ConnOpts,
    e: EndOpts,
    bad: impl Fn(&End) -> RdmaInfo,
    want: WcStatus,
    syndrome: u8,
) {
    let p = pair(w, seed, "ideal");
    let (mut a, b) = connect_with(&p, &o, &e);
    b.buf.fill(0, e.buf_len, 0x5A);
    fill_pattern(&a.buf, 0, 3000, 1);
    let sge = [a.mr.sge(0, 3000).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(bad(&b)),
    })
    .unwrap();
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no error completion");
    assert_eq!(wcs[0].status, want, "{:?}", wcs[0]);
    assert_eq!(wcs[0].vendor_err, u32::from(syndrome), "NAK syndrome");
    assert_eq!(
        a.qp.status().unwrap().state,
        QpState::Err,
        "requester QP must be in ERR"
    );
    // the responder's QP too (its error move: the QP context's EB half)
    assert_eq!(
        b.qp.status().unwrap().state,
        QpState::Err,
        "responder QP must be in ERR"
    );
    // nothing was written at the responder, in its buffer or anywhere else
    assert!(
        b.buf.to_vec(0, e.buf_len).iter().all(|x| *x == 0x5A),
        "bytes landed at the responder"
    );
    assert!(
        p.b.device().iommu_faults().is_empty(),
        "{:?}",
        p.b.device().iommu_faults()
    );
    let c = p.b.query_port_counters().unwrap();
    assert!(c.rx_nak >= 1, "{c:?}");
    // later work requests on the broken QP are flushed
    a.qp.modify(
        &QpAttr {
            qp_state: QpState::Err,
            ..Default::default()
        },
        QpAttrMask::STATE,
    )
    .ok();
}

#[test]
fn bad_rkey_is_a_remote_access_error() {
    for w in WIDTHS {
        refused_write(
            w,
            9,
            ConnOpts::default(),
            EndOpts::default(),
            |b| RdmaInfo {
                rkey: b.mr.rkey() ^ 0x01,
                ..b.mr.rdma_info(0).unwrap()
            },
            WcStatus::RemAccessErr,
            0x62,
        );
        refused_write(
            w,
            9,
            ConnOpts::default(),
            EndOpts::default(),
            |b| RdmaInfo {
                rkey: b.mr.rkey() + 0x100,
                ..b.mr.rdma_info(0).unwrap()
            },
            WcStatus::RemAccessErr,
            0x62,
        );
    }
}

/// A region removed while a message is being written into it: the packets
/// after the first carry no RETH (rc), so the MR check of the message is
/// behind them and only the write guard in front of the DMA write engine
/// stops them. Nothing lands after the guard saw the region gone; the
/// requester's WRITE completes with a remote access error.
#[test]
fn a_region_removed_mid_message_stops_the_rest_at_the_write_guard() {
    const LEN: usize = 48 * 1024;
    for w in WIDTHS {
        let p = pair(w, 22, "ideal");
        let e = EndOpts::default();
        let (mut a, b) = connect_with(&p, &ConnOpts::default(), &e);
        let End {
            pd: _b_pd,
            cq: _b_cq,
            qp: _b_qp,
            buf: b_buf,
            mr: b_mr,
        } = b;
        b_buf.fill(0, e.buf_len, 0x5A);
        fill_pattern(&a.buf, 0, LEN, 3);
        let sge = [a.mr.sge(0, LEN as u32).unwrap()];
        a.qp.post_send(&SendWr {
            wr_id: 1,
            opcode: WrOpcode::RdmaWrite,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: Some(b_mr.rdma_info(0).unwrap()),
        })
        .unwrap();
        // let the first 4 KiB land, then remove the region
        let landed = |buf: &rnic_device::DmaBuffer| check_pattern(buf, 0, LEN, 3).unwrap_or(LEN);
        let mut before = 0;
        for _ in 0..1000 {
            p.world.run(50);
            before = landed(&b_buf);
            if before >= 4096 {
                break;
            }
        }
        assert!(
            (4096..LEN).contains(&before),
            "{before} bytes landed before the removal"
        );
        p.b.dereg_mr(b_mr).unwrap();
        let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1, "no completion");
        // the WQE was still being sent when the NAK came: it gets the
        // NAK's status, not a flush
        assert_eq!(wcs[0].status, WcStatus::RemAccessErr, "{:?}", wcs[0]);
        assert_eq!(wcs[0].vendor_err, 0x62, "NAK syndrome");
        let c = p.b.query_port_counters().unwrap();
        assert!(c.rx_drop_guard >= 1, "the guard refused nothing: {c:?}");
        // what the write engine had taken before the removal may still
        // land; the rest of the message does not
        let after = landed(&b_buf);
        assert!(
            after < LEN,
            "the whole message landed after its region was removed"
        );
        assert!(
            b_buf.to_vec(after, LEN - after).iter().all(|x| *x == 0x5A),
            "bytes landed past the point the guard stopped at ({after})"
        );
        assert!(p.b.device().iommu_faults().is_empty());
    }
}

#[test]
fn out_of_bounds_write_is_a_remote_access_error() {
    for w in WIDTHS {
        // 3000 bytes starting 1000 bytes before the end of the 64 KiB region
        refused_write(
            w,
            10,
            ConnOpts::default(),
            EndOpts::default(),
            |b| b.mr.rdma_info((1 << 16) - 1000).unwrap(),
            WcStatus::RemAccessErr,
            0x62,
        );
        // below the region's start
        refused_write(
            w,
            10,
            ConnOpts::default(),
            EndOpts::default(),
            |b| RdmaInfo {
                remote_addr: b.mr.addr() - 8,
                rkey: b.mr.rkey(),
            },
            WcStatus::RemAccessErr,
            0x62,
        );
    }
}

#[test]
fn mr_without_remote_write_is_a_remote_access_error() {
    for w in WIDTHS {
        let e = EndOpts {
            mr_access: AccessFlags::LOCAL_WRITE,
            ..EndOpts::default()
        };
        refused_write(
            w,
            11,
            ConnOpts::default(),
            e,
            |b| b.mr.rdma_info(0).unwrap(),
            WcStatus::RemAccessErr,
            0x62,
        );
        // the MR allows it but the QP was not given REMOTE_WRITE
        let o = ConnOpts {
            qp_access: AccessFlags::empty(),
            ..ConnOpts::default()
        };
        refused_write(
            w,
            11,
            o,
            EndOpts::default(),
            |b| b.mr.rdma_info(0).unwrap(),
            WcStatus::RemAccessErr,
            0x62,
        );
    }
}

/// Destination MACs live in a table of 16 entries the QPs share: QPs to
/// one MAC take one entry, a QP in INIT takes none, the 17th distinct MAC
/// is refused with an error that says why (and the QP stays in INIT), and
/// an entry comes back when its last QP goes to RESET.
#[test]
fn qps_share_a_table_of_sixteen_destination_macs() {
    let p = pair(64, 31, "ideal");
    let o = ConnOpts::default();
    let mac = |i: u8| [0x02, 0, 0, 0, 0x10, i];
    type M = QpAttrMask;
    let to_init = |qp: &mut QueuePair<_>| {
        qp.modify(
            &QpAttr {
                qp_state: QpState::Init,
                port_num: 1,
                ..Default::default()
            },
            M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
        )
        .unwrap()
    };
    let to_rtr = |qp: &mut QueuePair<_>, dmac: [u8; 6]| {
        let peer = Remote {
            qpn: 5,
            psn: 0,
            addr: PortAddr {
                mac: dmac,
                ip: DEFAULT_ADDRS[1].ip,
            },
        };
        let (attr, mask) = rtr_attr(&o, &peer, 0);
        qp.modify(&attr, mask)
    };
    let to_rts = |qp: &mut QueuePair<_>| {
        qp.modify(
            &QpAttr {
                qp_state: QpState::Rts,
                timeout: 14,
                retry_cnt: 7,
                ..Default::default()
            },
            M::STATE | M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC,
        )
        .unwrap()
    };
    let to_reset = |qp: &mut QueuePair<_>| {
        qp.modify(
            &QpAttr {
                qp_state: QpState::Reset,
                ..Default::default()
            },
            M::STATE,
        )
        .unwrap()
    };
    let mut e: Vec<End> = (0..19).map(|_| end(&p.a, &o)).collect();
    for (i, x) in e.iter_mut().enumerate().take(16) {
        to_init(&mut x.qp);
        to_rtr(&mut x.qp, mac(i as u8)).unwrap();
    }
    // RTR -> RTS keeps the entry it has (no second reference)
    to_rts(&mut e[0].qp);
    // INIT takes no entry; RTR with a 17th MAC is refused and says why
    to_init(&mut e[16].qp);
    let err = to_rtr(&mut e[16].qp, mac(16)).unwrap_err().to_string();
    assert!(err.contains("destination-MAC table is full"), "{err}");
    assert_eq!(e[16].qp.state().unwrap(), QpState::Init);
    // a MAC already in the table is shared
    to_rtr(&mut e[16].qp, mac(3)).unwrap();
    // the last QP of a MAC gives its entry back when it goes to RESET
    to_init(&mut e[17].qp);
    assert!(to_rtr(&mut e[17].qp, mac(16)).is_err());
    to_reset(&mut e[3].qp); // mac(3) is still held by QP 16
    assert!(to_rtr(&mut e[17].qp, mac(16)).is_err());
    to_reset(&mut e[5].qp);
    to_rtr(&mut e[17].qp, mac(16)).unwrap();
    // ... also from RTS
    to_init(&mut e[18].qp);
    assert!(to_rtr(&mut e[18].qp, mac(17)).is_err());
    to_reset(&mut e[0].qp);
    to_rtr(&mut e[18].qp, mac(17)).unwrap();
    assert_eq!(e[18].qp.state().unwrap(), QpState::Rtr);
}

/// Moving a QP to RESET empties its receive queue in the NIC as well:
/// receive WQEs posted before it are gone. After the QP is brought up
/// again, a SEND waits (RNR NAKs, retried) until a receive is posted and
/// completes with that one, not with a WQE left over from before.
#[test]
fn a_reset_empties_the_receive_queue() {
    let p = pair(64, 41, "ideal");
    let o = ConnOpts::default();
    let eo = EndOpts::default();
    let (mut a, mut b) = connect(&p, &o);
    let send = |a: &mut End, tag: u64| {
        a.qp.post_send(&SendWr {
            wr_id: tag,
            opcode: WrOpcode::Send,
            send_flags: SendFlags::SIGNALED,
            sg_list: &[],
            imm_data: None,
            rdma: None,
        })
        .unwrap();
    };
    let recv = |b: &mut End, tag: u64| {
        b.qp.post_recv(&RecvWr {
            wr_id: tag,
            sg_list: &[],
        })
        .unwrap();
    };
    // three receives posted, one taken: two left in the ring
    for tag in 1..=3 {
        recv(&mut b, tag);
    }
    send(&mut a, 10);
    let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no receive completion before the reset");
    assert_eq!((wcs[0].status, wcs[0].wr_id), (WcStatus::Success, 1));
    assert_eq!(wait_wc(p.a.device(), &a.cq, 1, BUDGET).len(), 1);

    // B through RESET and up again towards A, whose next PSN is one on
    reset_and_bring_up(
        &mut b.qp,
        &o,
        &remote(0, a.qp.qp_num(), eo.psn_a + 1),
        eo.psn_b,
    );
    send(&mut a, 20);
    // nothing to receive into: no completion while A retries
    let early = wait_wc(p.b.device(), &b.cq, 1, BUDGET / 4);
    assert!(
        early.is_empty(),
        "a SEND completed with a receive WQE posted before the reset: {early:?}"
    );
    recv(&mut b, 30);
    let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no receive completion after the reset");
    assert_eq!(
        (wcs[0].status, wcs[0].wr_id, wcs[0].opcode),
        (WcStatus::Success, 30, WcOpcode::Recv)
    );
    let swc = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(swc.len(), 1);
    assert_eq!((swc[0].status, swc[0].wr_id), (WcStatus::Success, 20));
}

/// A QP load ends the message its responder was in the middle of: the
/// message state is a field of the responder's per-QP record, which a load
/// clears by the XOR of two halves, not by writing it. B takes the FIRST
/// of a WRITE (a copy of A's earlier one, injected with B's expected PSN
/// set to it) and is reset and brought up again; A's next WRITE, an ONLY,
/// must then be taken. If the reset left B inside the old message, the
/// ONLY is an invalid request: A's WRITE completes in error.
#[test]
fn a_reset_ends_the_message_in_progress() {
    let p = pair_with(WorldConfig {
        nics: 2,
        data_w: 64,
        seed: 43,
        fabric: FabricConfig::ideal(),
        pcap_window: 64,
        ..WorldConfig::default()
    });
    let o = ConnOpts::default();
    let eo = EndOpts::default();
    let (mut a, mut b) = connect(&p, &o);
    let a_qpn = a.qp.qp_num();
    let write = |a: &mut End, b: &End, tag: u64, len: u32| {
        let sge = [a.mr.sge(0, len).unwrap()];
        a.qp.post_send(&SendWr {
            wr_id: tag,
            opcode: WrOpcode::RdmaWrite,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: Some(b.mr.rdma_info(0).unwrap()),
        })
        .unwrap();
        let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1, "no completion of WRITE {tag}");
        wcs[0]
    };
    let up = |b: &mut End, rq_psn: u32| {
        reset_and_bring_up(&mut b.qp, &o, &remote(0, a_qpn, rq_psn), eo.psn_b);
    };
    // three packets at PMTU 1024: FIRST, MIDDLE, LAST from psn_a
    let wc = write(&mut a, &b, 1, 3 * 1024);
    assert_eq!(wc.status, WcStatus::Success);
    let first = p
        .world
        .window()
        .into_iter()
        .find(|f| {
            f.src == 0
                && rnic_wire::decode(&f.data)
                    .is_ok_and(|r| r.bth.opcode == rnic_wire::opcode::RDMA_WRITE_FIRST)
        })
        .expect("the WRITE FIRST frame on the wire");
    assert_eq!(rnic_wire::decode(&first.data).unwrap().bth.psn, eo.psn_a);

    // B expects the FIRST's PSN again and takes it: B is inside a WRITE
    up(&mut b, eo.psn_a);
    let before = p.b.query_port_counters().unwrap();
    assert!(p.world.inject_frame(1, &first.data, false));
    let ok = wait_wc(p.b.device(), &b.cq, 1, BUDGET / 4);
    assert!(
        ok.is_empty(),
        "a WRITE FIRST made a receive completion: {ok:?}"
    );
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(
        (
            after.rx_frames,
            after.rx_drop_psn,
            after.rx_drop_malformed,
            after.rx_drop_qp
        ),
        (
            before.rx_frames + 1,
            before.rx_drop_psn,
            before.rx_drop_malformed,
            before.rx_drop_qp
        ),
        "the injected FIRST was not taken"
    );

    // B through RESET again, expecting A's next PSN: no message open
    up(&mut b, eo.psn_a + 3);
    let wc = write(&mut a, &b, 2, 64);
    assert_eq!(
        (wc.status, wc.wr_id),
        (WcStatus::Success, 2),
        "a WRITE ONLY after the reset was refused"
    );
}
