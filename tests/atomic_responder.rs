//! Atomics executed by the responder (rnic_core `ATOMIC_EN=1`), on one
//! simulated NIC whose peer is this test: CMP_SWAP and FETCH_ADD requests
//! are built with `rnic-wire` (its own encoder and ICRC) and injected into
//! the NIC's receive port; every frame the NIC sends is taken from the
//! wire window and decoded with `rnic-wire`.
//!
//! Checked: one ATOMIC ACKNOWLEDGE per atomic, at its PSN, with the AETH
//! (syndrome 0x1F) and the original value; the 8 bytes in host memory
//! (little-endian, as the host keeps a u64) afterwards; the expected PSN
//! moving on by one. A duplicate atomic is answered from its replay
//! record with the first execution's value and memory is not touched
//! again; one whose record is gone is dropped and counted, never executed.
//! A misaligned atomic gets NAK invalid request; a bad R_Key, a region or
//! a QP without REMOTE_ATOMIC and an address past the region's end get
//! NAK remote access error; none of them touches host memory. Atomics
//! injected back to back, on one QP and on two QPs into one region, see
//! each other's results (each FETCH_ADD's original value is the sum of
//! the adds before it), which is what atomicity among atomics through
//! this NIC means. A build without atomics answers NAK invalid request.
//!
//! Needs the default model's atomics (`id.caps` bit 9); without them the
//! tests fail, never skip.

use rnic_harness::conn::{
    bring_up, create_qp, end, ConnOpts, EndOpts, PortAddr, Remote, DEFAULT_ADDRS,
};
use rnic_sim::{FabricConfig, ModelKnobs, SimDevice, SimWorld, WorldConfig};
use rnic_tests::WIDTHS;
use rnic_verbs::*;
use rnic_wire::{decode, opcode, opcode_name, AtomicEth, Bth, Eth, Ipv4, RoceFrame, Udp};

/// The simulated NIC's port.
const NIC: PortAddr = DEFAULT_ADDRS[1];
/// The requester the injected frames come from (no NIC behind it).
const PEER: PortAddr = DEFAULT_ADDRS[0];
/// The requester's QP numbers (one per responder QP).
const PEER_QPN: u32 = 0x00_0123;
const PEER_QPN2: u32 = 0x00_0456;
/// The first PSN the responder QPs send (ACKs take the requests' PSNs).
const SQ_PSN: u32 = 0x0040_0000;
/// Each responder's registered buffer.
const BUF_LEN: usize = 4096;
/// Cycles to wait for the answers, and to go on after them.
const BUDGET: u64 = 400_000;
const SETTLE: u64 = 30_000;
/// AETH syndromes.
const ACK: u8 = 0x1F;
const NAK_INVALID_REQUEST: u8 = 0x61;
const NAK_REMOTE_ACCESS: u8 = 0x62;

struct Nic {
    world: SimWorld,
    ctx: Context<SimDevice>,
}

type End = rnic_harness::conn::End<SimDevice>;

fn nic(data_w: u32, seed: u64, knobs: ModelKnobs) -> Nic {
    let world = SimWorld::new(WorldConfig {
        nics: 1,
        data_w,
        knobs,
        seed,
        fabric: FabricConfig::ideal(),
        loopback: false,
        pcap_window: 4096,
        ..WorldConfig::default()
    })
    .unwrap_or_else(|e| panic!("simulator: {e}"));
    let ctx = Context::open(world.device(0)).unwrap_or_else(|e| panic!("open: {e}"));
    ctx.set_port_addr(NIC.mac, NIC.ip).unwrap();
    Nic { world, ctx }
}

/// The default model executes atomics (`id.caps` bit 9: rnic_core
/// `ATOMIC_EN=1`): a model without them fails here.
fn full(data_w: u32, seed: u64, test: &str) -> Nic {
    let n = nic(data_w, seed, ModelKnobs::Full);
    let caps = n.ctx.nic().id().caps;
    assert!(
        caps & (1 << 9) != 0,
        "{test}: the default model does not execute atomics (id.caps {caps:#x}, bit 9 clear)"
    );
    n
}

fn atomic_access() -> AccessFlags {
    AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC
}

fn conn(qp_access: AccessFlags) -> ConnOpts {
    ConnOpts {
        mtu: Mtu::Mtu1024,
        qp_access,
        ..ConnOpts::default()
    }
}

/// A QP in RTS towards `peer_qpn` of [`PEER`] expecting `rq_psn`, with a
/// zeroed buffer of [`BUF_LEN`] bytes registered with `mr_access`.
fn responder(n: &Nic, qp_access: AccessFlags, mr_access: AccessFlags, rq_psn: u32) -> End {
    let o = conn(qp_access);
    let e = EndOpts {
        buf_len: BUF_LEN,
        mr_access,
        ..EndOpts::default()
    };
    let mut x = end(&n.ctx, &o, &e).unwrap_or_else(|err| panic!("end: {err}"));
    connect(&mut x.qp, &o, PEER_QPN, rq_psn);
    x.buf.write(0, &[0u8; BUF_LEN]);
    x
}

fn connect(qp: &mut QueuePair<SimDevice>, o: &ConnOpts, peer_qpn: u32, rq_psn: u32) {
    let peer = Remote {
        qpn: peer_qpn,
        psn: rq_psn,
        addr: PEER,
    };
    bring_up(qp, o, &peer, SQ_PSN).unwrap_or_else(|err| panic!("bring up: {err}"));
    assert_eq!(qp.state().unwrap(), QpState::Rts);
}

/// An atomic request (`op`: COMPARE_SWAP or FETCH_ADD) from [`PEER`].
fn atomic_request(
    op: u8,
    qpn: u32,
    psn: u32,
    va: u64,
    rkey: u32,
    swap_add: u64,
    compare: u64,
) -> Vec<u8> {
    RoceFrame {
        eth: Eth {
            dst: NIC.mac,
            src: PEER.mac,
        },
        ip: Ipv4 {
            src: PEER.ip.octets(),
            dst: NIC.ip.octets(),
            ..Ipv4::default()
        },
        udp: Udp {
            src_port: 0xC321,
            checksum: 0,
        },
        bth: Bth {
            opcode: op,
            dest_qp: qpn,
            psn: psn & 0xFF_FFFF,
            ack_req: true,
            ..Bth::default()
        },
        atomiceth: Some(AtomicEth {
            va,
            rkey,
            swap_add,
            compare,
        }),
        ..RoceFrame::default()
    }
    .encode()
}

fn fetch_add(x: &End, psn: u32, off: usize, add: u64) -> Vec<u8> {
    atomic_request(
        opcode::FETCH_ADD,
        x.qp.qp_num(),
        psn,
        x.mr.addr() + off as u64,
        x.mr.rkey(),
        add,
        0,
    )
}

fn cmp_swap(x: &End, psn: u32, off: usize, compare: u64, swap: u64) -> Vec<u8> {
    atomic_request(
        opcode::COMPARE_SWAP,
        x.qp.qp_num(),
        psn,
        x.mr.addr() + off as u64,
        x.mr.rkey(),
        swap,
        compare,
    )
}

/// Injects `reqs` back to back and returns every frame the NIC sent from
/// then on, decoded (ICRC checked): waits until `want` frames are out, then
/// [`SETTLE`] cycles more.
fn exchange(n: &Nic, reqs: &[&[u8]], want: usize) -> Vec<RoceFrame> {
    n.world.clear_window();
    for req in reqs {
        assert!(
            n.world.inject_frame(0, req, false),
            "the NIC's receive queue is full"
        );
    }
    let mut waited = 0;
    while n.world.window().len() < want && waited < BUDGET {
        n.world.run(256);
        waited += 256;
    }
    n.world.run(SETTLE);
    n.world
        .window()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            assert_eq!(f.src, 0, "frame {i} not from the NIC");
            decode(&f.data).unwrap_or_else(|e| panic!("frame {i} of the NIC does not decode: {e}"))
        })
        .collect()
}

fn names(fs: &[RoceFrame]) -> Vec<String> {
    fs.iter()
        .map(|f| format!("{} psn {:#x}", opcode_name(f.bth.opcode), f.bth.psn))
        .collect()
}

fn word(x: &End, off: usize) -> u64 {
    u64::from_le_bytes(x.buf.to_vec(off, 8).try_into().unwrap())
}

/// QP `x` to RESET and up again (a new connection), expecting `rq_psn`.
fn reset_to_rts(x: &mut End, rq_psn: u32) {
    x.qp.modify(
        &QpAttr {
            qp_state: QpState::Reset,
            ..Default::default()
        },
        QpAttrMask::STATE,
    )
    .unwrap();
    connect(&mut x.qp, &conn(atomic_access()), PEER_QPN, rq_psn);
}

fn set_word(x: &End, off: usize, v: u64) {
    x.buf.write(off, &v.to_le_bytes());
}

/// `f` is an ATOMIC ACKNOWLEDGE of PSN `psn` to `peer_qpn` with original
/// value `orig`.
fn check_ack(what: &str, f: &RoceFrame, psn: u32, peer_qpn: u32, orig: u64) {
    assert_eq!(
        f.bth.opcode,
        opcode::ATOMIC_ACKNOWLEDGE,
        "{what}: ATOMIC ACKNOWLEDGE wanted, got {}",
        opcode_name(f.bth.opcode)
    );
    assert_eq!(f.bth.psn, psn & 0xFF_FFFF, "{what}: PSN");
    assert_eq!(f.bth.dest_qp, peer_qpn, "{what}: destination QP");
    assert_eq!((f.eth.src, f.eth.dst), (NIC.mac, PEER.mac), "{what}: MACs");
    let a = f.aeth.unwrap_or_else(|| panic!("{what}: no AETH"));
    assert_eq!(a.syndrome, ACK, "{what}: AETH syndrome {:#x}", a.syndrome);
    let o = f
        .atomicacketh
        .unwrap_or_else(|| panic!("{what}: no AtomicAckETH"));
    assert_eq!(o.orig, orig, "{what}: original value");
    assert!(f.payload.is_empty(), "{what}: no payload");
}

/// `resp` is one NAK with `syndrome` at `psn`, and nothing else.
fn check_nak(what: &str, resp: &[RoceFrame], psn: u32, syndrome: u8) {
    assert_eq!(
        resp.len(),
        1,
        "{what}: one NAK wanted, the NIC sent {:?}",
        names(resp)
    );
    let f = &resp[0];
    assert_eq!(f.bth.opcode, opcode::ACKNOWLEDGE, "{what}: opcode");
    assert_eq!(f.bth.psn, psn & 0xFF_FFFF, "{what}: PSN");
    let a = f.aeth.unwrap_or_else(|| panic!("{what}: no AETH"));
    assert_eq!(
        a.syndrome, syndrome,
        "{what}: syndrome {:#x}, {syndrome:#x} wanted",
        a.syndrome
    );
}

fn dma_writes(n: &Nic) -> u64 {
    n.world.device(0).stats().tx_wr_req.tlps
}

#[test]
fn fetch_add_and_compare_swap_are_executed() {
    for w in WIDTHS {
        let n = full(w, 1, "fetch_add_and_compare_swap_are_executed");
        let psn = 0x10;
        let x = responder(&n, atomic_access(), atomic_access(), psn);
        set_word(&x, 0, 0x0123_4567_89AB_CDEF);
        set_word(&x, 8, 41);
        set_word(&x, 4088, u64::MAX);

        let r = exchange(&n, &[&fetch_add(&x, psn, 8, 1)], 1);
        assert_eq!(r.len(), 1, "DATA_W {w}: {:?}", names(&r));
        check_ack(&format!("DATA_W {w}: FETCH_ADD"), &r[0], psn, PEER_QPN, 41);
        assert_eq!(word(&x, 8), 42, "DATA_W {w}: FETCH_ADD's result");

        // a carry out of the top: the sum wraps, as a u64 does
        let r = exchange(&n, &[&fetch_add(&x, psn + 1, 4088, 2)], 1);
        check_ack(
            &format!("DATA_W {w}: FETCH_ADD wrap"),
            &r[0],
            psn + 1,
            PEER_QPN,
            u64::MAX,
        );
        assert_eq!(word(&x, 4088), 1, "DATA_W {w}: FETCH_ADD wraps");

        // CMP_SWAP that misses: memory kept, the original returned
        let r = exchange(&n, &[&cmp_swap(&x, psn + 2, 0, 7, 99)], 1);
        check_ack(
            &format!("DATA_W {w}: CMP_SWAP miss"),
            &r[0],
            psn + 2,
            PEER_QPN,
            0x0123_4567_89AB_CDEF,
        );
        assert_eq!(
            word(&x, 0),
            0x0123_4567_89AB_CDEF,
            "DATA_W {w}: a missed compare swaps nothing"
        );

        // ... and one that hits
        let r = exchange(
            &n,
            &[&cmp_swap(
                &x,
                psn + 3,
                0,
                0x0123_4567_89AB_CDEF,
                0xFEED_F00D_0000_0001,
            )],
            1,
        );
        check_ack(
            &format!("DATA_W {w}: CMP_SWAP hit"),
            &r[0],
            psn + 3,
            PEER_QPN,
            0x0123_4567_89AB_CDEF,
        );
        assert_eq!(word(&x, 0), 0xFEED_F00D_0000_0001, "DATA_W {w}: the swap");
        // nothing beside the 8 bytes changed
        assert_eq!(
            x.buf.to_vec(16, 4072),
            vec![0u8; 4072],
            "DATA_W {w}: bytes around the words"
        );
        assert_eq!(
            x.qp.status().unwrap().rq_psn_now,
            psn + 4,
            "DATA_W {w}: expected PSN"
        );
        let c = n.ctx.query_port_counters().unwrap();
        assert_eq!(c.rx_atomic, 4, "DATA_W {w}: port.rx_atomic");
        assert_eq!(c.rx_atomic_replay, 0, "DATA_W {w}: port.rx_atomic_replay");
    }
}

#[test]
fn a_duplicate_atomic_is_answered_from_its_record_never_executed_again() {
    let n = full(64, 2, "duplicate");
    let psn = 0x200;
    let x = responder(&n, atomic_access(), atomic_access(), psn);
    set_word(&x, 64, 1000);
    let req = fetch_add(&x, psn, 64, 10);
    let r = exchange(&n, &[&req], 1);
    check_ack("first execution", &r[0], psn, PEER_QPN, 1000);
    assert_eq!(word(&x, 64), 1010);

    // the ACK was "lost": the requester sends the same atomic again
    let writes = dma_writes(&n);
    let r = exchange(&n, &[&req], 1);
    assert_eq!(r.len(), 1, "the duplicate: {:?}", names(&r));
    check_ack("the duplicate", &r[0], psn, PEER_QPN, 1000);
    assert_eq!(word(&x, 64), 1010, "a duplicate atomic was executed again");
    assert_eq!(dma_writes(&n), writes, "the duplicate wrote host memory");
    let c = n.ctx.query_port_counters().unwrap();
    assert_eq!((c.rx_atomic, c.rx_atomic_replay), (1, 1));

    // the QP keeps its last four: after three more atomics the first one's
    // duplicate is still answered; a fourth pushes its record out, and its
    // duplicate then finds none and is dropped and counted, still never
    // executed again
    for i in 0..4u32 {
        let r = exchange(&n, &[&fetch_add(&x, psn + 1 + i, 128, 1)], 1);
        check_ack(
            &format!("atomic {i}"),
            &r[0],
            psn + 1 + i,
            PEER_QPN,
            u64::from(i),
        );
        if i == 2 {
            let r = exchange(&n, &[&req], 1);
            assert_eq!(r.len(), 1, "the duplicate after 3 more: {:?}", names(&r));
            check_ack("the duplicate after 3 more", &r[0], psn, PEER_QPN, 1000);
        }
    }
    let drops = n.ctx.query_port_counters().unwrap().rx_drop_psn;
    let r = exchange(&n, &[&req], 0);
    assert!(
        r.is_empty(),
        "a duplicate without a record was answered: {:?}",
        names(&r)
    );
    assert_eq!(word(&x, 64), 1010, "a duplicate atomic was executed again");
    let c = n.ctx.query_port_counters().unwrap();
    assert_eq!(c.rx_drop_psn, drops + 1, "port.rx_drop_psn");
    assert_eq!((c.rx_atomic, c.rx_atomic_replay), (5, 2), "{c:?}");
    // the QP goes on
    let r = exchange(&n, &[&fetch_add(&x, psn + 5, 128, 1)], 1);
    check_ack("after the drop", &r[0], psn + 5, PEER_QPN, 4);
}

/// Each QP keeps the records of its own last four atomics, whatever the
/// other QPs do: eight QPs execute four each (32, more than the 16 records
/// the whole NIC kept before), then every one of the 32 is sent again and
/// answered from its record with its first execution's value; memory is
/// not touched. A QP loaded again (a new connection) has none.
#[test]
fn every_qp_keeps_the_records_of_its_last_four_atomics() {
    const QPS: u32 = 8;
    let n = full(64, 12, "per-QP records");
    let psn = 0x00_0900;
    let xs: Vec<End> = (0..QPS)
        .map(|_| responder(&n, atomic_access(), atomic_access(), psn))
        .collect();
    let mut reqs = Vec::new();
    for (q, x) in xs.iter().enumerate() {
        set_word(x, 8, 100 * q as u64);
        for i in 0..4u32 {
            let req = fetch_add(x, psn + i, 8, 1 + u64::from(i));
            let r = exchange(&n, &[&req], 1);
            let orig = 100 * q as u64 + u64::from(i * (i + 1) / 2);
            check_ack(
                &format!("QP {q} atomic {i}"),
                &r[0],
                psn + i,
                PEER_QPN,
                orig,
            );
            reqs.push((q, i, req, orig));
        }
    }
    let writes = dma_writes(&n);
    for (q, i, req, orig) in &reqs {
        let r = exchange(&n, &[req], 1);
        assert_eq!(r.len(), 1, "QP {q} atomic {i} again: {:?}", names(&r));
        check_ack(
            &format!("QP {q} atomic {i} again"),
            &r[0],
            psn + i,
            PEER_QPN,
            *orig,
        );
    }
    assert_eq!(dma_writes(&n), writes, "a duplicate wrote host memory");
    for (q, x) in xs.iter().enumerate() {
        assert_eq!(word(x, 8), 100 * q as u64 + 10, "QP {q}'s word");
    }
    let c = n.ctx.query_port_counters().unwrap();
    assert_eq!((c.rx_atomic, c.rx_atomic_replay), (32, 32), "{c:?}");
    // a new connection of QP 0 at the same PSNs: its old records are gone
    let mut x0 = xs.into_iter().next().unwrap();
    reset_to_rts(&mut x0, psn + 4);
    let drops = c.rx_drop_psn;
    let r = exchange(&n, &[&reqs[0].2], 0);
    assert!(
        r.is_empty(),
        "a record of the old connection answered: {:?}",
        names(&r)
    );
    assert_eq!(n.ctx.query_port_counters().unwrap().rx_drop_psn, drops + 1);
    assert_eq!(word(&x0, 8), 10, "executed again");
}

#[test]
fn bad_atomics_are_naked_and_touch_nothing() {
    let n = full(64, 3, "bad atomics");
    let psn = 0x40;
    let x = responder(&n, atomic_access(), atomic_access(), psn);
    set_word(&x, 0, 5);
    set_word(&x, 8, 6);
    let reads = n.world.device(0).stats().tx_rd_req.tlps;
    let writes = dma_writes(&n);

    // not 8-byte aligned: invalid request (each NAK moves the QP on to the
    // next test's fresh QP: a NAK ends the requester's QP, not ours)
    let mis = atomic_request(
        opcode::FETCH_ADD,
        x.qp.qp_num(),
        psn,
        x.mr.addr() + 4,
        x.mr.rkey(),
        1,
        0,
    );
    check_nak(
        "misaligned",
        &exchange(&n, &[&mis], 1),
        psn,
        NAK_INVALID_REQUEST,
    );

    let y = responder(&n, atomic_access(), atomic_access(), psn);
    let bad_key = atomic_request(
        opcode::COMPARE_SWAP,
        y.qp.qp_num(),
        psn,
        y.mr.addr(),
        y.mr.rkey() ^ 0x100,
        1,
        0,
    );
    check_nak(
        "bad R_Key",
        &exchange(&n, &[&bad_key], 1),
        psn,
        NAK_REMOTE_ACCESS,
    );

    let z = responder(&n, atomic_access(), atomic_access(), psn);
    let past = atomic_request(
        opcode::FETCH_ADD,
        z.qp.qp_num(),
        psn,
        z.mr.addr() + BUF_LEN as u64,
        z.mr.rkey(),
        1,
        0,
    );
    check_nak(
        "past the region",
        &exchange(&n, &[&past], 1),
        psn,
        NAK_REMOTE_ACCESS,
    );

    let no_mr = responder(
        &n,
        atomic_access(),
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        psn,
    );
    check_nak(
        "region without REMOTE_ATOMIC",
        &exchange(&n, &[&fetch_add(&no_mr, psn, 0, 1)], 1),
        psn,
        NAK_REMOTE_ACCESS,
    );

    let no_qp = responder(&n, AccessFlags::REMOTE_WRITE, atomic_access(), psn);
    check_nak(
        "QP without REMOTE_ATOMIC",
        &exchange(&n, &[&fetch_add(&no_qp, psn, 0, 1)], 1),
        psn,
        NAK_REMOTE_ACCESS,
    );

    assert_eq!(word(&x, 0), 5);
    assert_eq!(word(&x, 8), 6);
    assert_eq!(
        n.world.device(0).stats().tx_rd_req.tlps,
        reads,
        "a refused atomic read host memory"
    );
    // (the NAKs themselves write nothing; CQEs are not involved)
    assert_eq!(dma_writes(&n), writes, "a refused atomic wrote host memory");
    let c = n.ctx.query_port_counters().unwrap();
    assert_eq!(c.rx_atomic, 0);
    assert_eq!(c.rx_nak, 5);
}

#[test]
fn atomics_back_to_back_see_each_other() {
    for w in WIDTHS {
        let n = full(w, 4, "back to back");
        let psn = 0x1000;
        let x = responder(&n, atomic_access(), atomic_access(), psn);
        // a second QP in x's protection domain, into x's region
        let o = conn(atomic_access());
        let mut qp2 = create_qp(&n.ctx, &x.pd, &x.cq, &x.cq, &o).unwrap();
        connect(&mut qp2, &o, PEER_QPN2, psn);
        set_word(&x, 256, 0);

        // 12 FETCH_ADDs, alternating between the two QPs, injected at once
        let adds: Vec<u64> = (0..12).map(|i| 1u64 << (4 * i)).collect();
        let reqs: Vec<Vec<u8>> = adds
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let qpn = if i % 2 == 0 {
                    x.qp.qp_num()
                } else {
                    qp2.qp_num()
                };
                atomic_request(
                    opcode::FETCH_ADD,
                    qpn,
                    psn + (i / 2) as u32,
                    x.mr.addr() + 256,
                    x.mr.rkey(),
                    a,
                    0,
                )
            })
            .collect();
        let refs: Vec<&[u8]> = reqs.iter().map(|r| r.as_slice()).collect();
        let r = exchange(&n, &refs, adds.len());
        assert_eq!(r.len(), adds.len(), "DATA_W {w}: {:?}", names(&r));
        // each original value is the sum of the adds executed before it:
        // with adds of distinct nibbles, it names exactly which ones
        let total: u64 = adds.iter().sum();
        assert_eq!(word(&x, 256), total, "DATA_W {w}: the sum of every add");
        let mut origs: Vec<u64> = r
            .iter()
            .map(|f| {
                assert_eq!(
                    f.bth.opcode,
                    opcode::ATOMIC_ACKNOWLEDGE,
                    "DATA_W {w}: {:?}",
                    names(&r)
                );
                f.atomicacketh.unwrap().orig
            })
            .collect();
        origs.sort_unstable();
        // in the order they ran, the original values climb from 0 by one
        // add each, every add once: so each atomic saw exactly the ones
        // that ran before it
        assert_eq!(origs[0], 0, "DATA_W {w}: original values {origs:x?}");
        let mut steps: Vec<u64> = origs.windows(2).map(|p| p[1] - p[0]).collect();
        steps.push(total - origs[origs.len() - 1]);
        steps.sort_unstable();
        let mut want = adds.clone();
        want.sort_unstable();
        assert_eq!(
            steps, want,
            "DATA_W {w}: original values {origs:x?} are no serial order of the adds"
        );
    }
}

#[test]
fn a_build_without_atomics_naks_them_as_invalid_requests() {
    let n = nic(64, 5, ModelKnobs::WriteOnly);
    assert_eq!(
        n.ctx.nic().id().caps & (1 << 9),
        0,
        "the write-only model has no atomics"
    );
    let psn = 0x77;
    let x = responder(
        &n,
        AccessFlags::REMOTE_WRITE,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        psn,
    );
    let writes = dma_writes(&n);
    let req = atomic_request(
        opcode::FETCH_ADD,
        x.qp.qp_num(),
        psn,
        x.mr.addr(),
        x.mr.rkey(),
        1,
        0,
    );
    check_nak(
        "write-only build",
        &exchange(&n, &[&req], 1),
        psn,
        NAK_INVALID_REQUEST,
    );
    assert_eq!(dma_writes(&n), writes);
}

/// A deregistration waits for what was checked before it: an atomic
/// accepted while the region was registered, queued behind three READs
/// of 4 KiB (read_reply answers in order), is executed by the time
/// `ibv_dereg_mr` returns, and after it nothing in the buffer changes. With
/// `no-mr-check` (which breaks the region checks, this wait among them)
/// the deregistration returns at once and the atomic's write-back lands
/// after it: the check below sees that.
#[test]
fn a_deregistration_waits_for_the_atomics_checked_before_it() {
    use rnic_wire::Reth;
    const OFF: usize = 64;
    for brk in [false, true] {
        let n = full(
            64,
            0xDE6,
            "a_deregistration_waits_for_the_atomics_checked_before_it",
        );
        if brk {
            n.ctx
                .nic()
                .debug_switches()
                .set(rnic_driver::Break::NoMrCheck, true)
                .unwrap();
        }
        let p = 0x00_7000;
        let x = responder(
            &n,
            atomic_access() | AccessFlags::REMOTE_READ,
            atomic_access() | AccessFlags::REMOTE_READ,
            p,
        );
        set_word(&x, OFF, 1000);
        let read = |psn: u32| {
            let mut f = decode(&fetch_add(&x, psn, 0, 0)).unwrap();
            f.bth.opcode = opcode::RDMA_READ_REQUEST;
            f.atomiceth = None;
            f.reth = Some(Reth {
                va: x.mr.addr(),
                rkey: x.mr.rkey(),
                dma_len: BUF_LEN as u32,
            });
            f.encode()
        };
        // three READs of 4 PMTUs each, then the atomic at the PSN after them
        let reqs = [
            read(p),
            read(p + 4),
            read(p + 8),
            fetch_add(&x, p + 12, OFF, 5),
        ];
        for r in &reqs {
            assert!(n.world.inject_frame(0, r, false), "receive queue full");
        }
        // every request checked and handed over, the atomic not yet run
        n.world.run(400);
        assert_eq!(
            word(&x, OFF),
            1000,
            "brk {brk}: the atomic ran before the READs"
        );
        let End { mr, buf, qp, .. } = x;
        n.ctx.dereg_mr(mr).unwrap();
        let at_return = u64::from_le_bytes(buf.to_vec(OFF, 8).try_into().unwrap());
        n.world.run(SETTLE);
        let later = u64::from_le_bytes(buf.to_vec(OFF, 8).try_into().unwrap());
        eprintln!("no-mr-check {brk}: the word was {at_return} when dereg returned, {later} after");
        if brk {
            assert_eq!(
                (at_return, later),
                (1000, 1005),
                "no-mr-check: the atomic's write-back after the deregistration went unseen"
            );
        } else {
            assert_eq!(
                (at_return, later),
                (1005, 1005),
                "the atomic must be executed before dereg returns, and nothing after"
            );
        }
        drop(qp);
    }
}
