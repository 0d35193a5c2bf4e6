//! RC reliability between two simulated NICs: go-back-N after loss and
//! reordering, the local ACK timeout and its retry count, RNR NAKs and their
//! retries, duplicates re-ACKed but never executed twice, a peer that
//! vanishes mid-message ending in error completions within bounded time,
//! and go-back-N resends that never read a buffer after its CQE.

use rnic_device::Device;
use rnic_sim::{FabricConfig, PathConfig, WorldConfig};
use rnic_tests::capture::{
    capture_path, first_differing_resend, seed_showing_break, torture_capture,
};
use rnic_tests::roce::*;
use rnic_tests::{check_pattern, fill_pattern, WIDTHS};
use rnic_torture::sim::{run_torture, Evidence, SimOpts};
use rnic_verbs::*;
use rnic_wire::{decode, RoceFrame};

const BUDGET: u64 = 400_000;

/// The data-before-CQE torture run on each hostile profile (a CI-sized
/// slice; the 100,000-message runs are documented in the README): clean,
/// and the profile really made the NICs retransmit.
#[test]
fn torture_is_clean_under_lossy_reorder_and_hostile() {
    // (reorder, seed 8, 300 messages: an ACK that overtakes a go-back-N
    // walk completed the entry being fetched again, the host reused its ring
    // slot, and the walk used to resend the new WQE under the old PSNs)
    for (fabric, w, seed, messages) in [
        ("lossy", 64, 3, 150),
        ("reorder", 256, 4, 150),
        ("hostile", 64, 5, 150),
        ("reorder", 64, 8, 300),
    ] {
        let cfg = rnic_torture::Config {
            seed,
            messages,
            max_size: 4096,
            ..Default::default()
        };
        let o = SimOpts {
            data_w: w,
            fabric: fabric.into(),
            ..Default::default()
        };
        let out = run_torture(&o, &cfg, &Evidence::default(), &mut |_, _| {}, &mut |f| {
            eprintln!("{fabric}: {f:?}")
        })
        .unwrap();
        let r = &out.report;
        assert!(!r.failed(), "{fabric} DATA_W={w}: {r:?}");
        assert_eq!(r.messages, messages);
        let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
        assert!(
            c("a.tx_retransmits") > 0 && c("a.rx_nak_seq") > 0,
            "{fabric}: the profile caused no retransmission: {:?}",
            r.counters
        );
        if fabric != "reorder" {
            assert!(c("fabric.dropped") > 0, "{fabric}: {:?}", r.counters);
        }
    }
}

/// The outstanding-WQE rings are a shared pool (16 for 64 QPs). With the
/// link cut, 20 QPs each post a WRITE: 16 take a ring and keep resending
/// into the void, 4 wait for one (the counter of cycles with every ring
/// busy runs). Once the link is back every WRITE completes, once, in order,
/// with its bytes in place.
#[test]
fn more_qps_in_flight_than_outstanding_rings() {
    const QPS: usize = 20;
    let p = pair(64, 23, "ideal");
    let o = ConnOpts {
        retry: Retry {
            timeout: 4, // 4.096 us * 16 = 16k cycles at 250 MHz
            retry_cnt: 7,
            ..Retry::default()
        },
        ..ConnOpts::default()
    };
    let e = EndOpts {
        buf_len: 4096,
        ..EndOpts::default()
    };
    let mut ends: Vec<(End, End)> = (0..QPS).map(|_| connect_with(&p, &o, &e)).collect();
    let dev = p.a.device();
    let rings = p.a.nic().id().ost_rings as usize;
    assert!(rings < QPS, "the build has {rings} rings");
    p.world.set_drop_rate(None, 1.0).unwrap();
    for (i, (a, b)) in ends.iter_mut().enumerate() {
        fill_pattern(&a.buf, 0, 512, i as u64);
        b.buf.fill(0, 512, 0);
        post_write(a, b, i as u64, 0, 0, 512);
    }
    let t0 = dev.now();
    while dev.now() - t0 < 20_000 {
        dev.idle();
    }
    let busy = p.a.query_port_counters().unwrap().ring_busy_cycles;
    assert!(busy > 10_000, "every ring busy for only {busy} cycles");
    p.world.set_drop_rate(None, 0.0).unwrap();
    for (i, (a, b)) in ends.iter().enumerate() {
        let wcs = wait_wc(dev, &a.cq, 1, 10 * BUDGET);
        assert_eq!(wcs.len(), 1, "QP {i}: no completion");
        assert_eq!(wcs[0].wr_id, i as u64);
        assert_eq!(wcs[0].status, WcStatus::Success, "QP {i}: {:?}", wcs[0]);
        assert_eq!(
            check_pattern(&b.buf, 0, 512, i as u64),
            None,
            "QP {i}: bytes differ"
        );
    }
    // the pool is whole again: every ring came back
    let before = p.a.query_port_counters().unwrap().ring_busy_cycles;
    dev.idle();
    assert_eq!(p.a.query_port_counters().unwrap().ring_busy_cycles, before);
}

/// A fabric that drops `rate` of the frames on one path.
fn dropping(rate: f64) -> FabricConfig {
    FabricConfig::with_paths(
        "drop",
        vec![PathConfig {
            drop_rate: rate,
            ..PathConfig::default()
        }],
    )
}

/// Go-back-N keeps the PSN arithmetic right across 2^24: 5 % loss starting
/// 5 PSNs below the wrap, every byte checked at each CQE.
#[test]
fn go_back_n_across_the_psn_wrap() {
    for w in WIDTHS {
        let p = pair_with(WorldConfig {
            nics: 2,
            data_w: w,
            seed: 11,
            fabric: dropping(0.05),
            ..WorldConfig::default()
        });
        let o = ConnOpts {
            mtu: Mtu::Mtu256,
            ..ConnOpts::default()
        };
        let e = EndOpts {
            psn_a: 0xFF_FFFB,
            psn_b: 0xFF_FFFD,
            ..EndOpts::default()
        };
        let (mut a, mut b) = connect_with(&p, &o, &e);
        let violations = write_imm_messages(&p, &mut a, &mut b, 30, 2, 900, 5);
        assert_eq!(violations, 0);
        let c = p.a.query_port_counters().unwrap();
        assert!(c.tx_retransmits > 0, "no loss was recovered: {c:?}");
        let s = a.qp.status().unwrap();
        assert!(
            s.sq_psn_now < 0x1000,
            "the send PSN did not wrap: {:#x}",
            s.sq_psn_now
        );
        assert_eq!(a.qp.state().unwrap(), QpState::Rts);
    }
}

/// The peer disappears while a 64 KiB WRITE is on the wire: after
/// `retry_cnt` timeouts the QP goes to ERR and every posted WQE completes,
/// the first with RETRY_EXC_ERR and the rest flushed, within a bound that
/// follows from the timeout and the retry count.
#[test]
fn peer_that_vanishes_mid_message_ends_in_error_completions() {
    for w in WIDTHS {
        let p = pair(w, 21, "ideal");
        let o = ConnOpts {
            retry: Retry {
                timeout: 2, // 4.096 us * 4 = 4096 cycles at 250 MHz
                retry_cnt: 3,
                ..Retry::default()
            },
            ..ConnOpts::default()
        };
        let e = EndOpts {
            buf_len: 1 << 17,
            ..EndOpts::default()
        };
        let (mut a, mut b) = connect_with(&p, &o, &e);
        let sizes = [65536u32, 1000, 1000, 4096, 0];
        let sges: Vec<[Sge; 1]> = sizes.iter().map(|&l| [a.mr.sge(0, l).unwrap()]).collect();
        let wrs: Vec<SendWr> = sizes
            .iter()
            .enumerate()
            .map(|(i, &l)| SendWr {
                wr_id: 100 + i as u64,
                opcode: if i == sizes.len() - 1 {
                    WrOpcode::RdmaWriteWithImm
                } else {
                    WrOpcode::RdmaWrite
                },
                send_flags: SendFlags::SIGNALED,
                sg_list: if l == 0 { &[] } else { &sges[i] },
                imm_data: (i == sizes.len() - 1).then_some(7),
                rdma: Some(b.mr.rdma_info(0).unwrap()),
            })
            .collect();
        b.qp.post_recv(&RecvWr {
            wr_id: 1,
            sg_list: &[],
        })
        .unwrap();
        a.qp.post_send_list(&wrs).unwrap();
        // let the first packets of the big WRITE leave, then cut the link
        let dev = p.a.device();
        while p.a.query_port_counters().unwrap().tx_frames < 8 {
            dev.idle();
        }
        p.world.set_drop_rate(None, 1.0).unwrap();
        let t0 = dev.now();
        let wcs = wait_wc(dev, &a.cq, sizes.len(), BUDGET);
        let took = dev.now() - t0;
        assert_eq!(wcs.len(), sizes.len(), "DATA_W={w}: completions {wcs:?}");
        let ids: Vec<u64> = wcs.iter().map(|wc| wc.wr_id).collect();
        assert_eq!(
            ids,
            vec![100, 101, 102, 103, 104],
            "completions out of order"
        );
        assert_eq!(wcs[0].status, WcStatus::RetryExcErr, "{:?}", wcs[0]);
        assert!(
            wcs[1..].iter().all(|wc| wc.status == WcStatus::WrFlushErr),
            "{wcs:?}"
        );
        // 4 timeouts of 4096 cycles (timer ticks of 64 cycles, a scan of
        // the QPs, the go-back-N walk) and no more
        assert!(took < 4 * 4096 + 30_000, "DATA_W={w}: took {took} cycles");
        assert_eq!(a.qp.state().unwrap(), QpState::Err);
        let c = p.a.query_port_counters().unwrap();
        assert_eq!(c.rtx_timeouts, 4, "{c:?}");
        // a work request posted now is taken and flushed (libibverbs semantics)
        a.qp.post_send(&SendWr {
            wr_id: 200,
            opcode: WrOpcode::RdmaWrite,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sges[1],
            imm_data: None,
            rdma: Some(b.mr.rdma_info(0).unwrap()),
        })
        .unwrap();
        let wcs = wait_wc(dev, &a.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1);
        assert_eq!((wcs[0].wr_id, wcs[0].status), (200, WcStatus::WrFlushErr));
    }
}

/// A SEND that finds no receive WQE gets an RNR NAK; the requester waits
/// min_rnr_timer and resends, and succeeds once a receive is posted. With
/// rnr_retry 0 the first RNR NAK ends the QP with RNR_RETRY_EXC_ERR.
#[test]
fn rnr_nak_waits_and_retries() {
    for (rnr_retry, posts_late) in [(7u8, true), (0, false)] {
        let p = pair(64, 31, "ideal");
        let o = ConnOpts {
            retry: Retry {
                rnr_retry,
                min_rnr_timer: 1, // 0.01 ms = 2500 cycles
                ..Retry::default()
            },
            ..ConnOpts::default()
        };
        let (mut a, mut b) = connect(&p, &o);
        fill_pattern(&a.buf, 0, 3000, 9);
        let sge = [a.mr.sge(0, 3000).unwrap()];
        a.qp.post_send(&SendWr {
            wr_id: 5,
            opcode: WrOpcode::Send,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: None,
        })
        .unwrap();
        let dev = p.a.device();
        while p.a.query_port_counters().unwrap().rx_rnr_nak < 2 && posts_late {
            dev.idle();
        }
        if posts_late {
            b.qp.post_recv(&RecvWr {
                wr_id: 6,
                sg_list: &[b.mr.sge(0, 4096).unwrap()],
            })
            .unwrap();
            let rwc = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
            assert_eq!(rwc.len(), 1);
            assert_eq!((rwc[0].wr_id, rwc[0].status), (6, WcStatus::Success));
            assert_eq!(check_pattern(&b.buf, 0, 3000, 9), None);
        }
        let wcs = wait_wc(dev, &a.cq, 1, BUDGET);
        assert_eq!(wcs.len(), 1);
        let want = if posts_late {
            WcStatus::Success
        } else {
            WcStatus::RnrRetryExcErr
        };
        assert_eq!(wcs[0].status, want, "rnr_retry {rnr_retry}: {:?}", wcs[0]);
        let c = p.a.query_port_counters().unwrap();
        assert!(c.rx_rnr_nak >= 1, "{c:?}");
    }
}

/// A WRITE_WITH_IMM frame delivered again after it completed (a duplicate
/// from the network) is re-ACKed and dropped: no second receive CQE, no
/// byte written again.
#[test]
fn duplicate_write_with_imm_is_acked_and_never_executed_twice() {
    let p = pair_with(WorldConfig {
        nics: 2,
        data_w: 64,
        seed: 41,
        fabric: FabricConfig::ideal(),
        pcap_window: 64,
        ..WorldConfig::default()
    });
    let (mut a, mut b) = connect(&p, &ConnOpts::default());
    fill_pattern(&a.buf, 0, 200, 3);
    b.qp.post_recv(&RecvWr {
        wr_id: 1,
        sg_list: &[],
    })
    .unwrap();
    b.qp.post_recv(&RecvWr {
        wr_id: 2,
        sg_list: &[],
    })
    .unwrap();
    let sge = [a.mr.sge(0, 200).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 9,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(0x1234),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
    assert_eq!(wait_wc(p.b.device(), &b.cq, 1, BUDGET).len(), 1);
    assert_eq!(wait_wc(p.a.device(), &a.cq, 1, BUDGET).len(), 1);
    let frame = p
        .world
        .window()
        .into_iter()
        .find(|f| f.src == 0 && f.data.len() > 200)
        .expect("the WRITE_WITH_IMM frame on the wire");
    // the receiver's buffer changes; a second execution would restore it
    b.buf.fill(0, 200, 0xEE);
    let before = p.b.query_port_counters().unwrap();
    assert!(p.world.inject_frame(1, &frame.data, false));
    let more = wait_wc(p.b.device(), &b.cq, 1, 20_000);
    assert!(more.is_empty(), "a duplicate made a CQE: {more:?}");
    let after = p.b.query_port_counters().unwrap();
    assert_eq!(after.rx_drop_psn, before.rx_drop_psn + 1);
    assert_eq!(
        after.tx_frames,
        before.tx_frames + 1,
        "no ACK for the duplicate"
    );
    assert!(b.buf.to_vec(0, 200).iter().all(|&x| x == 0xEE));
}

/// Packets that do not ask for an ACK are acknowledged by the responder's
/// ACK timer (coalescing: not at once, but within ACK_TIMER = 2048 cycles:
/// the timer counts epochs of ACK_TIMER / 2 cycles, so an owed ACK goes
/// out between 1,024 and 2,048 cycles after the packet, plus the scan and
/// the transmit path, by where in its epoch the packet came).
#[test]
fn the_ack_timer_acknowledges_packets_without_ackreq() {
    use rnic_wire::{opcode, Bth, Eth, Ipv4, Reth, RoceFrame, Udp};
    let p = pair(64, 51, "ideal");
    let (a, b) = connect(&p, &ConnOpts::default());
    let st = b.qp.status().unwrap();
    let payload: Vec<u8> = (0..100u8).collect();
    let frame = RoceFrame {
        eth: Eth {
            dst: DEFAULT_ADDRS[1].mac,
            src: DEFAULT_ADDRS[0].mac,
        },
        ip: Ipv4 {
            src: DEFAULT_ADDRS[0].ip.octets(),
            dst: DEFAULT_ADDRS[1].ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: 0xC000,
            checksum: 0,
        },
        bth: Bth {
            opcode: opcode::RDMA_WRITE_ONLY,
            dest_qp: b.qp.qp_num(),
            psn: st.rq_psn_now,
            ack_req: false,
            ..Bth::default()
        },
        reth: Some(Reth {
            va: b.mr.addr() + 64,
            rkey: b.mr.rkey(),
            dma_len: 100,
        }),
        immdt: None,
        aeth: None,
        payload: payload.clone(),
        ..RoceFrame::default()
    }
    .encode();
    let _ = &a;
    let before = p.b.query_port_counters().unwrap().tx_frames;
    p.world.send_frame(0, &frame);
    let dev = p.b.device();
    let t0 = dev.now();
    let mut acked_at = None;
    while dev.now() - t0 < 10_000 {
        dev.idle();
        if p.b.query_port_counters().unwrap().tx_frames > before {
            acked_at = Some(dev.now() - t0);
            break;
        }
    }
    let took = acked_at.expect("no ACK within 10,000 cycles");
    assert!(
        (1024..2048 + 1000).contains(&took),
        "ACK after {took} cycles"
    );
    assert_eq!(b.buf.to_vec(64, 100), payload);
    assert_eq!(
        b.qp.status().unwrap().rq_psn_now,
        (st.rq_psn_now + 1) & 0xff_ffff
    );
}

/// Found against Linux rxe (`rnic interop`): rxe arms its retransmit timer
/// once and does not push it back when it sends again, so on a clean link
/// it resends a whole multi-packet SEND a few microseconds after the
/// original, before rnic's ACK. The copy must be re-ACKed and dropped: one
/// receive completion, the second receive still posted for the next
/// message, its buffer untouched.
#[test]
fn a_send_resent_whole_before_its_ack_consumes_one_receive() {
    for w in WIDTHS {
        let p = pair_with(WorldConfig {
            nics: 2,
            data_w: w,
            seed: 43,
            fabric: FabricConfig::ideal(),
            pcap_window: 64,
            ..WorldConfig::default()
        });
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        // 4 packets at PMTU 1024; receive 1 at 0, receive 2 at 8 KiB.
        fill_pattern(&a.buf, 0, 4096, 7);
        fill_pattern(&a.buf, 4096, 4096, 8);
        for (id, off) in [(1u64, 0usize), (2, 8192)] {
            let sge = [b.mr.sge(off, 4096).unwrap()];
            b.qp.post_recv(&RecvWr {
                wr_id: id,
                sg_list: &sge,
            })
            .unwrap();
        }
        b.buf.fill(8192, 4096, 0xEE);
        let send = |a: &mut End, off: usize, id: u64| {
            let sge = [a.mr.sge(off, 4096).unwrap()];
            a.qp.post_send(&SendWr {
                wr_id: id,
                opcode: WrOpcode::Send,
                send_flags: SendFlags::SIGNALED,
                sg_list: &sge,
                imm_data: None,
                rdma: None,
            })
            .unwrap();
        };
        send(&mut a, 0, 10);
        let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
        assert_eq!((wcs.len(), wcs[0].wr_id, wcs[0].byte_len), (1, 1, 4096));
        assert_eq!(wait_wc(p.a.device(), &a.cq, 1, BUDGET).len(), 1);
        let copies: Vec<Vec<u8>> = p
            .world
            .window()
            .into_iter()
            .filter(|f| f.src == 0 && f.data.len() > 1000)
            .map(|f| f.data)
            .collect();
        assert_eq!(copies.len(), 4, "the SEND's four packets on the wire");
        let before = p.b.query_port_counters().unwrap();
        for f in &copies {
            assert!(p.world.inject_frame(1, f, false));
        }
        let more = wait_wc(p.b.device(), &b.cq, 1, 20_000);
        assert!(more.is_empty(), "DATA_W={w}: the copy made a CQE: {more:?}");
        let after = p.b.query_port_counters().unwrap();
        assert_eq!(after.rx_drop_psn, before.rx_drop_psn + 4, "DATA_W={w}");
        assert!(
            after.tx_frames > before.tx_frames,
            "DATA_W={w}: no ACK for the copy"
        );
        assert!(
            b.buf.to_vec(8192, 4096).iter().all(|&x| x == 0xEE),
            "DATA_W={w}: receive 2 written"
        );
        // The next real message lands in receive 2.
        send(&mut a, 4096, 11);
        let wcs = wait_wc(p.b.device(), &b.cq, 1, BUDGET);
        assert_eq!((wcs.len(), wcs[0].wr_id), (1, 2), "DATA_W={w}");
        assert_eq!(check_pattern(&b.buf, 8192, 4096, 8), None, "DATA_W={w}");
        assert_eq!(check_pattern(&b.buf, 0, 4096, 7), None, "DATA_W={w}");
    }
}

/// Go-back-N resends are their first sends again, also when an ACK covers
/// the WQE while the walk resends it: its CQE waits for the walk's payload
/// reads (requester.v, cqe_hold), so the host cannot have reused the
/// buffer. With `resend-after-cqe` on, a resend carries bytes the torture
/// host wrote after the CQE, and the capture shows it; the same seed with
/// the switch off is clean. (The torture itself passes either way: the
/// responder drops the late resend as a duplicate.)
#[test]
fn go_back_n_resends_never_read_a_buffer_after_its_cqe() {
    // A local ACK timeout of 2,048 cycles (4.096 us * 2^1 at 250 MHz),
    // shorter than hostile's slowest round trips: walks start while the
    // ACK is on its way, and it arrives to cover the WQE being resent.
    // (With the default timeout seeds 1..=8 of lossy, hostile and reorder
    // never show the switch on rc: the race needs an ACK during a walk.)
    let run = |seed: u64, on: bool| {
        let cfg = rnic_torture::Config {
            seed,
            messages: 60,
            max_size: 8192,
            retry: rnic_harness::conn::Retry {
                timeout: 1,
                ..Default::default()
            },
            ..Default::default()
        };
        let o = SimOpts {
            seed,
            fabric: "hostile".into(),
            debug_switches: if on {
                vec![rnic_torture::Break::ResendAfterCqe]
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        let path = capture_path(&format!("rc-resend-{seed}.pcap"));
        let frames = torture_capture(&o, &cfg, &path);
        let _ = std::fs::remove_file(&path);
        frames
    };
    let decoded = |frames: &[Vec<u8>]| -> Vec<RoceFrame> {
        frames
            .iter()
            .enumerate()
            .map(|(i, f)| decode(f).unwrap_or_else(|e| panic!("frame {i}: {e}")))
            .collect()
    };
    seed_showing_break("resend-after-cqe", 8, run, |frames| {
        first_differing_resend(&decoded(frames))
    });
}
