//! Atomics as a requester, between two simulated NICs: NIC a posts
//! compare-and-swap and fetch-and-add (`post_atomic`, as
//! `ibv_wr_atomic_cmp_swp` / `ibv_wr_atomic_fetch_add`), NIC b's responder
//! executes them, and NIC a places the original value from the ATOMIC
//! ACKNOWLEDGE into its 8-byte local buffer and completes the atomic.
//!
//! Checked: the CQE (`IBV_WC_COMP_SWAP` / `IBV_WC_FETCH_ADD`, byte length
//! 8, wr_id) and the local buffer the moment the CQE is seen (the
//! completion barrier: a CQE never before its value), b's memory after
//! each atomic, a counter shared by four atomics in flight on `lossy` and
//! `hostile` (lost requests and acknowledgements recovered: a retry the
//! responder executed already is answered from its replay record, so the
//! counter ends at exactly the sum of the adds), the `early-read-cqe`
//! break switch caught for atomics, a bad rkey completing with a remote
//! access error, and atomics refused on an mp QP (EOPNOTSUPP).
//!
//! Needs the default model's atomics (rnic_core `ATOMIC_EN=1`, `id.verbs`
//! bit 6); without them the tests fail, never skip.

use rnic_tests::roce::*;
use rnic_tests::WIDTHS;
use rnic_verbs::*;

/// Cycles to wait for one atomic's completion.
const BUDGET: u64 = 400_000;

fn atomic_opts() -> (ConnOpts, EndOpts) {
    (
        ConnOpts {
            mtu: Mtu::Mtu1024,
            qp_access: AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC,
            ..ConnOpts::default()
        },
        EndOpts {
            buf_len: 1 << 14,
            mr_access: AccessFlags::LOCAL_WRITE
                | AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_ATOMIC,
            ..EndOpts::default()
        },
    )
}

fn issues_atomics(p: &Pair, test: &str) {
    let id = p.a.nic().id();
    assert!(
        id.caps & (1 << 9) != 0 && id.verbs & (1 << 6) != 0,
        "{test}: this model issues no atomics (id.caps {:#x}, verbs {:#x}); the default model must",
        id.caps,
        id.verbs
    );
}

fn word(b: &DmaBuffer, off: usize) -> u64 {
    u64::from_le_bytes(b.to_vec(off, 8).try_into().unwrap())
}

fn set_word(b: &DmaBuffer, off: usize, v: u64) {
    b.write(off, &v.to_le_bytes());
}

fn post(a: &mut End, b: &End, wr_id: u64, dst: usize, src: usize, op: AtomicOp) {
    let r = b.mr.rdma_info(src).unwrap();
    a.qp.post_atomic(&AtomicWr {
        wr_id,
        op,
        send_flags: SendFlags::SIGNALED,
        sge: a.mr.sge(dst, 8).unwrap(),
        remote_addr: r.remote_addr,
        rkey: r.rkey,
    })
    .unwrap_or_else(|e| panic!("post_atomic: {e}"));
}

/// One atomic from a's offset `dst` on b's offset `src`; returns the local
/// buffer as it was the moment the CQE was seen.
fn one(p: &Pair, a: &mut End, b: &End, wr_id: u64, dst: usize, src: usize, op: AtomicOp) -> u64 {
    set_word(&a.buf, dst, 0xDEAD_BEEF_DEAD_BEEF);
    post(a, b, wr_id, dst, src, op);
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "atomic {wr_id}: no completion");
    let wc = wcs[0];
    assert_eq!(
        wc.status,
        WcStatus::Success,
        "atomic {wr_id}: {:?}",
        wc.status
    );
    let want = match op {
        AtomicOp::CmpAndSwp { .. } => WcOpcode::CompSwap,
        AtomicOp::FetchAndAdd { .. } => WcOpcode::FetchAdd,
    };
    assert_eq!(wc.opcode, want, "atomic {wr_id}");
    assert_eq!(wc.wr_id, wr_id);
    assert_eq!(wc.byte_len, 8, "atomic {wr_id}: byte_len");
    word(&a.buf, dst)
}

#[test]
fn atomics_bring_the_original_value() {
    for w in WIDTHS {
        let p = pair(w, 3, "ideal");
        issues_atomics(&p, "atomics_bring_the_original_value");
        let (o, e) = atomic_opts();
        let (mut a, b) = connect_with(&p, &o, &e);
        set_word(&b.buf, 64, 40);
        set_word(&b.buf, 128, 0x0123_4567_89AB_CDEF);
        let got = one(&p, &mut a, &b, 1, 8, 64, AtomicOp::FetchAndAdd { add: 2 });
        assert_eq!(got, 40, "DATA_W={w}: FETCH_ADD's original value");
        assert_eq!(word(&b.buf, 64), 42, "DATA_W={w}: FETCH_ADD's sum");
        let miss = AtomicOp::CmpAndSwp {
            compare: 1,
            swap: 2,
        };
        let got = one(&p, &mut a, &b, 2, 16, 128, miss);
        assert_eq!(got, 0x0123_4567_89AB_CDEF, "DATA_W={w}: CMP_SWAP (miss)");
        assert_eq!(word(&b.buf, 128), 0x0123_4567_89AB_CDEF, "DATA_W={w}");
        let hit = AtomicOp::CmpAndSwp {
            compare: 0x0123_4567_89AB_CDEF,
            swap: 0xFEDC_BA98_7654_3210,
        };
        let got = one(&p, &mut a, &b, 3, 24, 128, hit);
        assert_eq!(got, 0x0123_4567_89AB_CDEF, "DATA_W={w}: CMP_SWAP (hit)");
        assert_eq!(
            word(&b.buf, 128),
            0xFEDC_BA98_7654_3210,
            "DATA_W={w}: the swap"
        );
        // nothing around the 8 bytes of a's buffers moved
        assert_eq!(a.buf.to_vec(0, 8), vec![0u8; 8], "DATA_W={w}");
        assert_eq!(a.buf.to_vec(32, 64), vec![0u8; 64], "DATA_W={w}");
        let ca = p.a.query_port_counters().unwrap();
        let cb = p.b.query_port_counters().unwrap();
        assert_eq!(cb.rx_atomic, 3, "DATA_W={w}: b executed");
        assert_eq!(ca.rx_drop_psn, 0, "DATA_W={w}: nothing dropped on ideal");
    }
}

/// Four FETCH_ADDs in flight on one QP, on a fabric that loses, duplicates
/// and reorders: each completes once, with a distinct original value, and
/// the remote counter ends at the sum of every add (no atomic lost, none
/// executed twice).
fn atomics_in_flight_survive(fabric: &str, seed: u64, rounds: usize) {
    for w in WIDTHS {
        let p = pair(w, seed, fabric);
        issues_atomics(&p, "atomics_in_flight_survive");
        let (o, e) = atomic_opts();
        let (mut a, b) = connect_with(&p, &o, &e);
        set_word(&b.buf, 256, 0);
        let mut total = 0u64;
        let mut origs = Vec::new();
        for m in 0..rounds {
            let mut posted = Vec::new();
            for k in 0..4usize {
                let add = 1 + (m * 4 + k) as u64;
                let wr_id = seed * 1000 + (m * 4 + k) as u64;
                let dst = 8 * k;
                set_word(&a.buf, dst, u64::MAX);
                post(&mut a, &b, wr_id, dst, 256, AtomicOp::FetchAndAdd { add });
                posted.push((wr_id, dst));
                total += add;
            }
            let mut seen = std::collections::VecDeque::new();
            for (wr_id, dst) in posted {
                if seen.is_empty() {
                    seen.extend(wait_wc(p.a.device(), &a.cq, 1, BUDGET));
                }
                let wc = seen.pop_front().unwrap_or_else(|| {
                    panic!("DATA_W={w} {fabric}: atomic {wr_id}: no completion")
                });
                assert_eq!(wc.status, WcStatus::Success, "atomic {wr_id}");
                assert_eq!(wc.wr_id, wr_id, "atomics complete in order");
                assert_eq!(wc.opcode, WcOpcode::FetchAdd);
                let v = word(&a.buf, dst);
                assert_ne!(
                    v,
                    u64::MAX,
                    "DATA_W={w} {fabric} seed {seed}: atomic {wr_id} completed before its value"
                );
                origs.push(v);
            }
        }
        assert_eq!(
            word(&b.buf, 256),
            total,
            "DATA_W={w} {fabric} seed {seed}: the counter is not the sum of the adds"
        );
        // in order on one QP: each original value is the sum of the adds before it
        let mut sum = 0u64;
        for (i, v) in origs.iter().enumerate() {
            assert_eq!(*v, sum, "DATA_W={w} {fabric}: atomic {i}'s original value");
            sum += 1 + i as u64;
        }
        let ca = p.a.query_port_counters().unwrap();
        let cb = p.b.query_port_counters().unwrap();
        eprintln!(
            "DATA_W={w} {fabric}: {} atomics 4 at a time; b executed {}, replayed {}; a resent {}, timeouts {}, sequence NAKs {}",
            4 * rounds,
            cb.rx_atomic,
            cb.rx_atomic_replay,
            ca.tx_retransmits,
            ca.rtx_timeouts,
            ca.rx_nak_seq
        );
        assert_eq!(
            cb.rx_atomic as usize,
            4 * rounds,
            "DATA_W={w} {fabric}: executions"
        );
    }
}

#[test]
fn atomics_in_flight_survive_a_lossy_fabric() {
    atomics_in_flight_survive("lossy", 41, 10);
}

#[test]
fn atomics_in_flight_survive_a_hostile_fabric() {
    atomics_in_flight_survive("hostile", 42, 8);
}

/// With `early-read-cqe` the requester hands the ATOMIC ACKNOWLEDGE to
/// the completer before writing its value: this check sees a CQE before
/// the value; without the switch never.
#[test]
fn the_early_read_cqe_switch_is_caught_for_atomics() {
    for brk in [false, true] {
        let p = pair(64, 5, "ideal");
        issues_atomics(&p, "the_early_read_cqe_switch_is_caught_for_atomics");
        let (o, e) = atomic_opts();
        let (mut a, b) = connect_with(&p, &o, &e);
        p.a.nic()
            .debug_switches()
            .set(Break::EarlyReadCqe, brk)
            .unwrap();
        let mut caught = 0;
        for i in 0..12u64 {
            set_word(&b.buf, 512, 1000 + i);
            if one(
                &p,
                &mut a,
                &b,
                500 + i,
                0,
                512,
                AtomicOp::FetchAndAdd { add: 1 },
            ) != 1000 + i
            {
                caught += 1;
            }
        }
        eprintln!("early-read-cqe={brk}: {caught} of 12 atomics seen before their value");
        if brk {
            assert!(caught > 0, "early-read-cqe went unnoticed in 12 atomics");
        } else {
            assert_eq!(caught, 0, "an atomic completed before its value");
        }
    }
}

#[test]
fn an_atomic_with_a_bad_rkey_is_a_remote_access_error() {
    let p = pair(64, 6, "ideal");
    issues_atomics(&p, "an_atomic_with_a_bad_rkey_is_a_remote_access_error");
    let (o, e) = atomic_opts();
    let (mut a, b) = connect_with(&p, &o, &e);
    set_word(&a.buf, 0, 7);
    set_word(&b.buf, 0, 9);
    let r = b.mr.rdma_info(0).unwrap();
    a.qp.post_atomic(&AtomicWr {
        wr_id: 1,
        op: AtomicOp::FetchAndAdd { add: 1 },
        send_flags: SendFlags::SIGNALED,
        sge: a.mr.sge(0, 8).unwrap(),
        remote_addr: r.remote_addr,
        rkey: r.rkey ^ 0x100,
    })
    .unwrap();
    let wcs = wait_wc(p.a.device(), &a.cq, 1, BUDGET);
    assert_eq!(wcs.len(), 1, "no completion");
    assert_eq!(wcs[0].status, WcStatus::RemAccessErr);
    assert_eq!(word(&a.buf, 0), 7, "nothing may be placed");
    assert_eq!(word(&b.buf, 0), 9, "nothing may be executed");
}

#[test]
fn atomics_on_an_mp_qp_are_refused() {
    let p = pair(64, 8, "ideal");
    let (mut o, e) = atomic_opts();
    o.qp_type = QpType::Mp;
    let (mut a, b) = connect_with(&p, &o, &e);
    let r = b.mr.rdma_info(0).unwrap();
    let err =
        a.qp.post_atomic(&AtomicWr {
            wr_id: 1,
            op: AtomicOp::FetchAndAdd { add: 1 },
            send_flags: SendFlags::SIGNALED,
            sge: a.mr.sge(0, 8).unwrap(),
            remote_addr: r.remote_addr,
            rkey: r.rkey,
        })
        .unwrap_err();
    assert_eq!(err.errno(), errno::EOPNOTSUPP, "{err}");
}
