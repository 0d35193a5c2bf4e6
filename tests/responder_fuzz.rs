//! Random and mutated frames sent into a NIC while a legitimate connection
//! runs: nothing is ever written outside a registered region that allows
//! remote writes, the legitimate QP keeps working, nothing hangs (watchdog
//! in simulated cycles), and every frame is counted once (accepted or dropped with a reason).
//!
//! CI runs a short slice; `RNIC_FUZZ_FRAMES=100000` runs a long campaign.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_tests::roce::*;
use rnic_tests::{check_pattern, fill_pattern};
use rnic_verbs::*;
use rnic_wire::{opcode, Aeth, Bth, Eth, Ipv4, Reth, RoceFrame, Udp};

/// A frame for NIC b, well-formed or not, with a valid ICRC unless mutated.
fn attack(r: &mut ChaCha8Rng, qpn_b: u32, rkey: u32, va: u64, psn_window: u32) -> (Vec<u8>, bool) {
    let op = match r.gen_range(0..10) {
        0 => r.gen(), // anything, incl. unknown opcodes
        1..=3 => opcode::RDMA_WRITE_ONLY,
        4 => opcode::RDMA_WRITE_FIRST,
        5 => opcode::RDMA_WRITE_MIDDLE, // middle without a first
        6 => opcode::SEND_ONLY,
        7 => opcode::ACKNOWLEDGE,
        _ => r.gen_range(0..=0x11),
    };
    let len = match r.gen_range(0..4) {
        0 => 0,
        1 => r.gen_range(1..64),
        2 => r.gen_range(64..1100),
        _ => r.gen_range(1100..4200), // beyond the PMTU
    };
    let mut payload = vec![0u8; len];
    r.fill(&mut payload[..]);
    // unknown QPs, the legitimate QP with PSNs outside its window, bad keys, wild addresses
    let dest_qp = match r.gen_range(0..4) {
        0 => r.gen::<u32>() & 0xff_ffff,
        1 => r.gen_range(0..64),
        _ => qpn_b,
    };
    // Frames for the legitimate QP carry PSNs it has already seen (the
    // duplicate region): RoCE has no authentication, so a forged frame with
    // the next PSN would be indistinguishable from the peer's. Other QPs get
    // any PSN.
    let psn = if dest_qp == qpn_b {
        psn_window.wrapping_sub(r.gen_range(1..1000)) & 0xff_ffff
    } else {
        r.gen::<u32>() & 0xff_ffff
    };
    let reth = Reth {
        va: match r.gen_range(0..4) {
            0 => r.gen(),
            1 => va.wrapping_sub(r.gen_range(1..4096)),
            _ => va + r.gen_range(0..70_000),
        },
        rkey: if r.gen_bool(0.5) {
            rkey ^ r.gen_range(1..=0xffff)
        } else {
            rkey
        },
        dma_len: if r.gen_bool(0.5) { len as u32 } else { r.gen() },
    };
    let f = RoceFrame {
        eth: Eth {
            dst: MAC[1],
            src: MAC[0],
        },
        ip: Ipv4 {
            src: IP[0].octets(),
            dst: IP[1].octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: r.gen(),
            checksum: 0,
        },
        bth: Bth {
            opcode: op,
            dest_qp,
            psn,
            ack_req: r.gen(),
            ..Bth::default()
        },
        reth: Some(reth),
        immdt: Some(r.gen()),
        aeth: Some(Aeth {
            syndrome: r.gen(),
            msn: r.gen::<u32>() & 0xff_ffff,
        }),
        payload,
    };
    let mut bytes = f.encode();
    let mut bad_icrc = false;
    match r.gen_range(0..8) {
        0 => {
            // flip a bit after the IP header: the ICRC no longer matches
            let i = r.gen_range(34..bytes.len());
            if i != 46 {
                bytes[i] ^= 1 << r.gen_range(0..8);
                bad_icrc = true;
            }
        }
        1 => bytes.truncate(r.gen_range(1..bytes.len())),
        2 => {
            // PadCnt abuse (the ICRC is recomputed so only the pad is wrong)
            bytes[43] = (bytes[43] & !0x30) | (r.gen_range(0..4u8) << 4);
            let end = bytes.len() - 4;
            let c = rnic_wire::icrc(&bytes, end);
            bytes[end..].copy_from_slice(&c.to_le_bytes());
        }
        3 => r.fill(&mut bytes[14..]), // garbage after Ethernet
        _ => {}
    }
    (bytes, bad_icrc)
}

#[test]
fn fuzzed_responder_writes_nothing_it_must_not() {
    let frames: usize = std::env::var("RNIC_FUZZ_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let p = pair(64, 4242, "ideal");
    let o = ConnOpts {
        mtu: Mtu::Mtu1024,
        buf_len: 1 << 16,
        ..ConnOpts::default()
    };
    let (mut a, mut b) = connect(&p, &o);
    let _ = &mut a;
    // a region on b that does NOT allow remote writes, filled with a canary
    let canary_buf = p.b.alloc_dma(1 << 16).unwrap();
    canary_buf.fill(0, 1 << 16, 0xC5);
    let _local_only =
        p.b.reg_mr(&b.pd, &canary_buf, 0, 1 << 16, AccessFlags::LOCAL_WRITE)
            .unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(4242);
    let (qpn_b, rkey, va) = (b.qp.qp_num(), b.mr.rkey(), b.mr.addr());
    let mut bad_icrc = 0u64;
    let mut sent = 0usize;
    let mut msg = 0u64;
    while sent < frames {
        // a burst of attack frames, then one legitimate message that must work
        for _ in 0..50 {
            let st = b.qp.status().unwrap();
            let (f, bad) = attack(&mut r, qpn_b, rkey, va, st.rq_psn_now);
            if !p.world.inject_frame(1, &f, false) {
                p.world.run(2000); // the MAC queue is full: let the NIC drain
            }
            bad_icrc += u64::from(bad);
            sent += 1;
        }
        p.world.run(3000);
        assert_eq!(
            b.qp.status().unwrap().state,
            QpState::Rts,
            "attack frames broke the legitimate QP"
        );
        msg += 1;
        let len = r.gen_range(1..3000);
        fill_pattern(&a.buf, 0, len, msg);
        b.qp.post_recv(&RecvWr {
            wr_id: msg,
            sg_list: &[],
        })
        .unwrap();
        let sge = [a.mr.sge(0, len as u32).unwrap()];
        a.qp.post_send(&SendWr {
            wr_id: msg,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: Some((msg as u32).to_be()),
            rdma: Some(b.mr.rdma_info(0).unwrap()),
        })
        .unwrap();
        // watchdog in simulated cycles: the legitimate message completes
        let wcs = wait_wc(p.b.device(), &b.cq, 1, 20_000);
        assert_eq!(
            wcs.len(),
            1,
            "message {msg}: the legitimate QP stopped working"
        );
        assert_eq!(
            (wcs[0].status, wcs[0].wr_id),
            (WcStatus::Success, msg),
            "{:?}",
            wcs[0]
        );
        if let Some(wc) = wcs.first() {
            if wc.status == WcStatus::Success && wc.wr_id == msg {
                assert_eq!(
                    check_pattern(&b.buf, 0, len, msg),
                    None,
                    "message {msg} corrupted"
                );
            }
        }
        let swc = wait_wc(p.a.device(), &a.cq, 1, 20_000);
        assert_eq!(swc.len(), 1, "message {msg}: no send completion");
        assert_eq!(swc[0].status, WcStatus::Success, "{:?}", swc[0]);
    }
    // never a byte outside registered memory, never into the local-only region
    assert!(
        p.b.device().iommu_faults().is_empty(),
        "{:?}",
        p.b.device().iommu_faults()
    );
    assert!(
        canary_buf.to_vec(0, 1 << 16).iter().all(|x| *x == 0xC5),
        "a region without REMOTE_WRITE was written"
    );
    assert!(
        p.b.device().model_errors().is_empty(),
        "{:?}",
        p.b.device().model_errors()
    );
    let c = p.b.query_port_counters().unwrap();
    eprintln!("{sent} attack frames, {msg} legitimate messages; counters {c:?}");
    // every frame is counted once: accepted, or dropped with one reason
    let ca = p.a.query_port_counters().unwrap();
    assert_eq!(
        u64::from(c.rx_frames),
        sent as u64 + u64::from(ca.tx_frames),
        "frames lost without a count"
    );
    assert!(
        u64::from(c.rx_drop_icrc + c.rx_drop_malformed) >= bad_icrc,
        "{c:?}"
    );
    assert!(msg > 0);
}
