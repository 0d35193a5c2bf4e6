//! RDMA READ as a requester, between two simulated NICs: NIC a posts
//! `IBV_WR_RDMA_READ`, NIC b's responder answers, and NIC a places the
//! responses into its local buffer and completes the READ.
//!
//! Checked: every byte of the local buffer at the moment the READ's CQE is
//! seen (the completion barrier on the requester side: a CQE never before
//! its data), the CQE (`IBV_WC_RDMA_READ`, byte length, wr_id), READs of
//! 1 B to 64 KiB across PMTU boundaries on `ideal`, READs mixed with
//! WRITEs on `lossy` and `hostile` (lost, duplicated and reordered
//! responses recovered by the resend from the first missing PSN), the
//! `early-read-cqe` break switch caught, a bad rkey completing with a
//! remote access error, a local buffer without LOCAL_WRITE with a local
//! protection error, and a READ on an mp QP refused by the verbs
//! (EOPNOTSUPP).
//!
//! Needs the default model's READ engine (rnic_core `READ_EN=1`, `id.caps`
//! bit 8); without it the tests fail, never skip.

use rnic_device::Device;
use rnic_tests::roce::*;
use rnic_tests::WIDTHS;
use rnic_verbs::*;

/// Cycles to wait for one READ's completion.
const BUDGET: u64 = 400_000;

fn read_opts(mtu: Mtu) -> (ConnOpts, EndOpts) {
    (
        ConnOpts {
            mtu,
            qp_access: AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            ..ConnOpts::default()
        },
        EndOpts {
            buf_len: 1 << 17,
            mr_access: AccessFlags::LOCAL_WRITE
                | AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_READ,
            ..EndOpts::default()
        },
    )
}

fn issues_reads(p: &Pair, test: &str) {
    let id = p.a.nic().id();
    assert!(
        id.caps & (1 << 8) != 0 && id.verbs & (1 << 5) != 0,
        "{test}: this model issues no RDMA READ (id.caps {:#x}, verbs {:#x}); the default model must",
        id.caps,
        id.verbs
    );
}

fn post_read(
    a: &mut End,
    b: &End,
    wr_id: u64,
    dst: usize,
    src: usize,
    len: usize,
    flags: SendFlags,
) {
    let sge = [a.mr.sge(dst, len as u32).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id,
        opcode: WrOpcode::RdmaRead,
        send_flags: flags,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(b.mr.rdma_info(src).unwrap()),
    })
    .unwrap_or_else(|e| panic!("post READ: {e}"));
}

/// One READ of `len` bytes from b's offset `src` into a's offset `dst`,
/// checked the moment its CQE is seen. Returns the first wrong byte.
fn one_read(
    p: &Pair,
    a: &mut End,
    b: &End,
    tag: u64,
    dst: usize,
    src: usize,
    len: usize,
) -> Option<usize> {
    rnic_harness::pattern::fill_buf(&b.buf, src, len, tag);
    rnic_harness::pattern::fill_buf_stale(&a.buf, dst, len, tag);
    post_read(a, b, tag, dst, src, len, SendFlags::SIGNALED);
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "READ {tag} of {len} B: no completion");
    let wc = wcs[0];
    assert_eq!(
        wc.status,
        WcStatus::Success,
        "READ {tag} of {len} B: {:?}",
        wc.status
    );
    assert_eq!(wc.opcode, WcOpcode::RdmaRead, "READ {tag}");
    assert_eq!(wc.wr_id, tag);
    assert_eq!(wc.byte_len as usize, len, "READ {tag}: byte_len");
    rnic_harness::pattern::check_buf(&a.buf, dst, len, tag)
}

#[test]
fn reads_bring_the_remote_bytes() {
    for w in WIDTHS {
        for mtu in [Mtu::Mtu1024, Mtu::Mtu4096] {
            let p = pair(w, 3, "ideal");
            issues_reads(&p, "reads_bring_the_remote_bytes");
            let (o, e) = read_opts(mtu);
            let (mut a, b) = connect_with(&p, &o, &e);
            let pm = mtu.bytes() as usize;
            let mut placed = 0u32;
            for (i, len) in [1, 100, pm - 1, pm, pm + 1, 3 * pm, 5000, 65536]
                .into_iter()
                .enumerate()
            {
                let tag = 1000 * u64::from(w) + i as u64;
                let bad = one_read(&p, &mut a, &b, tag, 64 + i, 4096 + 3 * i, len);
                assert_eq!(
                    bad, None,
                    "DATA_W={w} {mtu:?}: READ of {len} B wrong at byte {bad:?}"
                );
                placed += len.div_ceil(pm) as u32;
            }
            let ca = p.a.query_port_counters().unwrap();
            let cb = p.b.query_port_counters().unwrap();
            assert_eq!(
                ca.rx_read_resp, placed,
                "DATA_W={w} {mtu:?}: responses placed"
            );
            assert_eq!(
                cb.tx_read_resp, placed,
                "DATA_W={w} {mtu:?}: responses sent"
            );
            assert_eq!(
                ca.rx_drop_psn, 0,
                "DATA_W={w} {mtu:?}: nothing dropped on ideal"
            );
        }
    }
}

#[test]
fn a_zero_length_read_completes() {
    let p = pair(64, 4, "ideal");
    issues_reads(&p, "a_zero_length_read_completes");
    let (o, e) = read_opts(Mtu::Mtu1024);
    let (mut a, b) = connect_with(&p, &o, &e);
    assert_eq!(one_read(&p, &mut a, &b, 9, 0, 0, 0), None);
    // and the QP goes on: a READ after it
    assert_eq!(one_read(&p, &mut a, &b, 10, 0, 0, 2000), None);
}

/// READs and WRITEs in flight together on a fabric that drops,
/// duplicates and reorders: every READ's bytes are right when its CQE is
/// seen, and every completion comes, in posting order.
fn reads_survive(fabric: &str, seed: u64, n: usize) {
    use rand::Rng;
    for w in WIDTHS {
        let p = pair(w, seed, fabric);
        issues_reads(&p, "reads_survive");
        let (o, e) = read_opts(Mtu::Mtu1024);
        let (mut a, b) = connect_with(&p, &o, &e);
        let mut r = rnic_tests::rng(seed);
        let mut id = 0u64;
        for m in 0..n {
            // a WRITE into b's second half, then a READ of b's first half
            let wlen = r.gen_range(1..=6000usize);
            let sge = [a.mr.sge(100_000, wlen as u32).unwrap()];
            a.qp.post_send(&SendWr {
                wr_id: 1 << 40 | m as u64,
                opcode: WrOpcode::RdmaWrite,
                send_flags: SendFlags::empty(),
                sg_list: &sge,
                imm_data: None,
                rdma: Some(b.mr.rdma_info(65536).unwrap()),
            })
            .unwrap();
            let len = r.gen_range(1..=20_000usize);
            let src = r.gen_range(0..(65536 - len));
            let dst = r.gen_range(0..(65536 - len));
            id += 1;
            let bad = one_read(&p, &mut a, &b, seed * 10_000 + id, dst, src, len);
            assert_eq!(
                bad, None,
                "DATA_W={w} {fabric} seed {seed}: READ {m} of {len} B wrong at byte {bad:?} when its CQE was seen"
            );
        }
        let ca = p.a.query_port_counters().unwrap();
        eprintln!(
            "DATA_W={w} {fabric}: {n} READs, {} responses placed, {} dropped (PSN), {} resends, {} timeouts, {} sequence NAKs",
            ca.rx_read_resp, ca.rx_drop_psn, ca.tx_retransmits, ca.rtx_timeouts, ca.rx_nak_seq
        );
    }
}

/// Four READs in flight on one QP at once, on a fabric that loses and
/// reorders: a response to a later READ must not be taken as
/// acknowledging an earlier one whose response is missing (the completer
/// would retire that READ without its data). Each READ is checked the
/// moment its CQE is seen.
fn reads_in_flight_survive(fabric: &str, seed: u64, rounds: usize) {
    use rand::Rng;
    for w in WIDTHS {
        let p = pair(w, seed, fabric);
        issues_reads(&p, "reads_in_flight_survive");
        let (o, e) = read_opts(Mtu::Mtu1024);
        let (mut a, b) = connect_with(&p, &o, &e);
        let mut r = rnic_tests::rng(seed);
        for m in 0..rounds {
            let mut posted = Vec::new();
            for k in 0..4usize {
                let len = r.gen_range(1..=8000usize);
                let (src, dst) = (
                    k * 16384 + r.gen_range(0..8000),
                    k * 16384 + r.gen_range(0..8000),
                );
                let tag = seed * 100_000 + (m * 4 + k) as u64;
                rnic_harness::pattern::fill_buf(&b.buf, src, len, tag);
                rnic_harness::pattern::fill_buf_stale(&a.buf, dst, len, tag);
                post_read(&mut a, &b, tag, dst, src, len, SendFlags::SIGNALED);
                posted.push((tag, dst, len));
            }
            // (a poll may bring several CQEs: each READ is checked when
            // the poll that brought its CQE returns)
            let mut seen = std::collections::VecDeque::new();
            for (tag, dst, len) in posted {
                if seen.is_empty() {
                    seen.extend(wait_wc(p.a.device(), &a.cq, 1, BUDGET));
                }
                let wc = seen
                    .pop_front()
                    .unwrap_or_else(|| panic!("DATA_W={w} {fabric}: READ {tag}: no completion"));
                assert_eq!(wc.status, WcStatus::Success, "READ {tag}");
                assert_eq!(wc.wr_id, tag, "READs complete in order");
                let bad = rnic_harness::pattern::check_buf(&a.buf, dst, len, tag);
                assert_eq!(
                    bad, None,
                    "DATA_W={w} {fabric} seed {seed}: READ {tag} of {len} B wrong at byte {bad:?} when its CQE was seen"
                );
            }
        }
        let ca = p.a.query_port_counters().unwrap();
        eprintln!(
            "DATA_W={w} {fabric}: {} READs 4 at a time, {} responses placed, {} dropped (PSN), {} sequence NAKs, {} timeouts",
            4 * rounds, ca.rx_read_resp, ca.rx_drop_psn, ca.rx_nak_seq, ca.rtx_timeouts
        );
    }
}

#[test]
fn reads_in_flight_survive_a_lossy_fabric() {
    reads_in_flight_survive("lossy", 31, 12);
}

#[test]
fn reads_in_flight_survive_a_hostile_fabric() {
    reads_in_flight_survive("hostile", 32, 10);
}

#[test]
fn reads_survive_a_lossy_fabric() {
    reads_survive("lossy", 21, 40);
}

#[test]
fn reads_survive_a_hostile_fabric() {
    reads_survive("hostile", 22, 30);
}

/// Without the switch no READ completes before its data; with
/// `early-read-cqe` the requester hands the last response over before
/// writing it, and this check sees a CQE before its bytes.
#[test]
fn the_early_read_cqe_switch_is_caught() {
    for w in WIDTHS {
        for brk in [false, true] {
            let p = pair(w, 5, "ideal");
            issues_reads(&p, "the_early_read_cqe_switch_is_caught");
            let (o, e) = read_opts(Mtu::Mtu4096);
            let (mut a, b) = connect_with(&p, &o, &e);
            p.a.nic()
                .debug_switches()
                .set(Break::EarlyReadCqe, brk)
                .unwrap();
            let mut caught = 0;
            for i in 0..12u64 {
                // the last response a full 4 KiB: its write takes a while
                let len = 4096 * (1 + (i as usize % 3));
                if one_read(&p, &mut a, &b, 500 + i, 0, 8192, len).is_some() {
                    caught += 1;
                }
            }
            eprintln!(
                "DATA_W={w} early-read-cqe={brk}: {caught} of 12 READs seen before their data"
            );
            if brk {
                assert!(
                    caught > 0,
                    "DATA_W={w}: early-read-cqe went unnoticed in 12 READs"
                );
            } else {
                assert_eq!(caught, 0, "DATA_W={w}: a READ completed before its data");
            }
        }
    }
}

#[test]
fn a_read_with_a_bad_rkey_is_a_remote_access_error() {
    let p = pair(64, 6, "ideal");
    issues_reads(&p, "a_read_with_a_bad_rkey_is_a_remote_access_error");
    let (o, e) = read_opts(Mtu::Mtu1024);
    let (mut a, b) = connect_with(&p, &o, &e);
    rnic_harness::pattern::fill_buf_stale(&a.buf, 0, 3000, 7);
    let before = a.buf.to_vec(0, 3000);
    let sge = [a.mr.sge(0, 3000).unwrap()];
    let mut at = b.mr.rdma_info(0).unwrap();
    at.rkey ^= 0x100;
    a.qp.post_send(&SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaRead,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(at),
    })
    .unwrap();
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no completion");
    assert_eq!(wcs[0].status, WcStatus::RemAccessErr);
    assert_eq!(a.buf.to_vec(0, 3000), before, "nothing may be placed");
}

#[test]
fn a_read_into_a_buffer_without_local_write_is_a_protection_error() {
    let p = pair(64, 7, "ideal");
    issues_reads(
        &p,
        "a_read_into_a_buffer_without_local_write_is_a_protection_error",
    );
    let (o, mut e) = read_opts(Mtu::Mtu1024);
    // (REMOTE_WRITE would need LOCAL_WRITE: the verbs refuse that MR)
    e.mr_access = AccessFlags::REMOTE_READ;
    let (mut a, b) = connect_with(&p, &o, &e);
    post_read(&mut a, &b, 3, 0, 0, 2000, SendFlags::SIGNALED);
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no completion");
    assert_eq!(wcs[0].status, WcStatus::LocProtErr);
    assert_eq!(
        p.b.query_port_counters().unwrap().rx_read_req,
        0,
        "no READ may leave"
    );
}

#[test]
fn a_read_on_an_mp_qp_is_refused_by_the_verbs() {
    let p = pair(64, 8, "ideal");
    let (mut o, e) = read_opts(Mtu::Mtu1024);
    o.qp_type = QpType::Mp;
    let (mut a, b) = connect_with(&p, &o, &e);
    let sge = [a.mr.sge(0, 100).unwrap()];
    let err =
        a.qp.post_send(&SendWr {
            wr_id: 1,
            opcode: WrOpcode::RdmaRead,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: None,
            rdma: Some(b.mr.rdma_info(0).unwrap()),
        })
        .unwrap_err();
    assert_eq!(err.errno(), errno::EOPNOTSUPP, "{err}");
}

/// A READ of 64 KiB, then a WRITE of new bytes to its last 4 KiB.
/// Without `IBV_SEND_FENCE` the WRITE may overtake the READ at the
/// responder (its payload lands while the READ's responses are still
/// being read from memory), so the READ may return some new bytes; with
/// the fence the WRITE waits until the READ completed, and the READ
/// returns only the old ones. Returns the READ's bytes that are new.
fn read_then_write(w: u32, fence: bool) -> usize {
    let p = pair(w, 12, "ideal");
    issues_reads(&p, "read_then_write");
    let (o, e) = read_opts(Mtu::Mtu4096);
    let (mut a, b) = connect_with(&p, &o, &e);
    let len = 65536;
    let (woff, wlen) = (len - 4096, 4096);
    rnic_harness::pattern::fill_buf(&b.buf, 0, len, 1);
    rnic_harness::pattern::fill_buf(&a.buf, len, len, 2);
    rnic_harness::pattern::fill_buf_stale(&a.buf, 0, len, 1);
    post_read(&mut a, &b, 1, 0, 0, len, SendFlags::SIGNALED);
    let sge = [a.mr.sge(len + woff, wlen as u32).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWrite,
        send_flags: if fence {
            SendFlags::SIGNALED | SendFlags::FENCE
        } else {
            SendFlags::SIGNALED
        },
        sg_list: &sge,
        imm_data: None,
        rdma: Some(b.mr.rdma_info(woff).unwrap()),
    })
    .unwrap();
    let wcs = wait_wc(p.a.device(), &a.cq, 2, BUDGET);
    assert_eq!(wcs.len(), 2, "DATA_W={w} fence={fence}: completions");
    assert!(wcs.iter().all(|c| c.status == WcStatus::Success), "{wcs:?}");
    assert_eq!(
        wcs[0].opcode,
        WcOpcode::RdmaRead,
        "the READ completes first"
    );
    // (the WRITE's completion says b took it, not that b's memory holds
    // it yet: its writes may still be on b's PCIe link)
    let dev = p.a.device();
    let until = dev.now() + 50_000;
    let landed = || b.buf.to_vec(woff, wlen) == a.buf.to_vec(len + woff, wlen);
    while !landed() && dev.now() < until {
        dev.idle();
    }
    assert!(landed(), "DATA_W={w} fence={fence}: the WRITE landed");
    let got = a.buf.to_vec(0, len);
    let mut old = vec![0u8; len];
    let mut new = a.buf.to_vec(len, len);
    rnic_harness::pattern::fill(1, &mut old);
    new[..woff].copy_from_slice(&old[..woff]);
    let mut newer = 0;
    for i in 0..len {
        if got[i] != old[i] {
            assert_eq!(
                got[i], new[i],
                "DATA_W={w} fence={fence}: byte {i} is neither"
            );
            newer += 1;
        }
    }
    newer
}

#[test]
fn a_fenced_write_waits_for_the_read_before_it() {
    for w in WIDTHS {
        let unfenced = read_then_write(w, false);
        let fenced = read_then_write(w, true);
        eprintln!("DATA_W={w}: READ saw {unfenced} new bytes without the fence, {fenced} with it");
        assert_eq!(fenced, 0, "DATA_W={w}: the fenced WRITE overtook the READ");
        // the check can fail: without the fence the WRITE does overtake
        assert!(
            unfenced > 0,
            "DATA_W={w}: without the fence the READ saw no new byte; this test proves nothing"
        );
    }
}

/// `max_rd_atomic` holds each QP to its own number of READs in flight:
/// two QPs of one NIC, one set to 1 and one to 4, each with four READs
/// of 8 KiB posted at once. On the wire (every frame in sending order),
/// the first QP never has a second READ request out before the last
/// response of its previous one, while the second QP has several out at
/// once: the limit is the QP's, not the smallest one for the NIC. Every
/// READ brings its bytes.
#[test]
fn max_rd_atomic_bounds_each_qps_reads_in_flight() {
    let p = pair_with(rnic_sim::WorldConfig {
        nics: 2,
        data_w: 64,
        seed: 31,
        fabric: rnic_sim::FabricConfig::ideal(),
        pcap_window: 4096,
        ..rnic_sim::WorldConfig::default()
    });
    issues_reads(&p, "max_rd_atomic_bounds_each_qps_reads_in_flight");
    let (o, e) = read_opts(Mtu::Mtu1024);
    let limits = [1u8, 4];
    let mut ends: Vec<(End, End)> = limits
        .iter()
        .map(|&l| {
            let o = ConnOpts {
                max_rd_atomic: Some(l),
                ..o
            };
            connect_with(&p, &o, &e)
        })
        .collect();
    for (k, (a, _)) in ends.iter().enumerate() {
        assert_eq!(a.qp.query_qp().unwrap().max_rd_atomic, limits[k]);
    }
    const LEN: usize = 8192;
    p.world.clear_window();
    for (k, (a, b)) in ends.iter_mut().enumerate() {
        for i in 0..4 {
            let tag = 700 + 10 * k as u64 + i as u64;
            rnic_harness::pattern::fill_buf(&b.buf, i * LEN, LEN, tag);
            rnic_harness::pattern::fill_buf_stale(&a.buf, i * LEN, LEN, tag);
            post_read(a, b, tag, i * LEN, i * LEN, LEN, SendFlags::SIGNALED);
        }
    }
    for (k, (a, _)) in ends.iter().enumerate() {
        let wcs = wait_wc(p.a.device(), &a.cq, 4, BUDGET);
        assert_eq!(wcs.len(), 4, "QP {k}: completions");
        for (i, wc) in wcs.iter().enumerate() {
            let tag = 700 + 10 * k as u64 + i as u64;
            assert_eq!((wc.status, wc.wr_id), (WcStatus::Success, tag), "QP {k}");
            assert_eq!(
                rnic_harness::pattern::check_buf(&a.buf, i * LEN, LEN, tag),
                None,
                "QP {k}: READ {i}'s bytes"
            );
        }
    }
    // READ requests out per QP, walking the frames in sending order
    let mut most = [0u32; 2];
    let mut out = [0u32; 2];
    let mut requests = [0u32; 2];
    for f in p.world.window() {
        let Ok(fr) = rnic_wire::decode(&f.data) else {
            continue;
        };
        let op = fr.bth.opcode;
        let k = ends.iter().position(|(a, b)| {
            fr.bth.dest_qp
                == if f.src == 0 {
                    b.qp.qp_num()
                } else {
                    a.qp.qp_num()
                }
        });
        let Some(k) = k else { continue };
        if f.src == 0 && op == rnic_wire::opcode::RDMA_READ_REQUEST {
            out[k] += 1;
            requests[k] += 1;
            most[k] = most[k].max(out[k]);
        } else if f.src == 1
            && (op == rnic_wire::opcode::RDMA_READ_RESPONSE_LAST
                || op == rnic_wire::opcode::RDMA_READ_RESPONSE_ONLY)
        {
            out[k] = out[k].saturating_sub(1);
        }
    }
    eprintln!("READ requests {requests:?}, most in flight at once {most:?} (limits {limits:?})");
    assert_eq!(requests, [4, 4], "every READ sent once on ideal");
    assert_eq!(
        most[0], 1,
        "the QP with max_rd_atomic 1 had {} READs out",
        most[0]
    );
    assert!(
        most[1] > 1 && most[1] <= 4,
        "the QP with max_rd_atomic 4 had at most {} out at once",
        most[1]
    );
}

/// A READ on a QP whose `max_rd_atomic` is 0: the verbs refuse it
/// (EINVAL); and should one reach the NIC anyway (here the QP's context is
/// reloaded with 0 behind the verbs' back), the requester completes it
/// with a local QP operation error without sending anything, and the QP
/// goes to ERR.
#[test]
fn a_read_on_a_qp_with_max_rd_atomic_0_is_refused() {
    let p = pair(64, 32, "ideal");
    issues_reads(&p, "a_read_on_a_qp_with_max_rd_atomic_0_is_refused");
    let (o, e) = read_opts(Mtu::Mtu1024);
    let (mut a, b) = connect_with(
        &p,
        &ConnOpts {
            max_rd_atomic: Some(0),
            ..o
        },
        &e,
    );
    let sge = [a.mr.sge(0, 100).unwrap()];
    let wr = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaRead,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: None,
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    };
    let err = a.qp.post_send(&wr).unwrap_err();
    assert_eq!(err.errno(), errno::EINVAL, "{err}");
    assert!(err.to_string().contains("max_rd_atomic"), "{err}");

    let (mut a, b) = connect_with(&p, &o, &e);
    assert_eq!(a.qp.query_qp().unwrap().max_rd_atomic, 4);
    {
        // the staged registers still hold this QP's context: reload it
        // with max_rd_atomic 0
        let io = p.a.nic().io();
        let qp = io.csr().qp();
        qp.qp_sel().try_write(|r| r.set_qpn(a.qp.slot())).unwrap();
        qp.qp_retry()
            .try_modify(|r| r.set_max_rd_atomic(0))
            .unwrap();
        qp.qp_cmd().try_write(|r| r.set_op(1)).unwrap();
    }
    let sge = [a.mr.sge(0, 100).unwrap()];
    a.qp.post_send(&SendWr {
        sg_list: &sge,
        rdma: Some(b.mr.rdma_info(0).unwrap()),
        ..wr
    })
    .unwrap();
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no completion");
    assert_eq!(wcs[0].status, WcStatus::LocQpOpErr);
    assert_eq!(a.qp.state().unwrap(), QpState::Err);
    assert_eq!(
        p.b.query_port_counters().unwrap().rx_read_req,
        0,
        "no READ may leave"
    );
}
