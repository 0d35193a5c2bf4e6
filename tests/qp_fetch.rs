//! The NIC places QPs by number on its own (BAR0 `qp_block.qp_fetch`,
//! issue 19; DESIGN.md section 6): it picks a slot among the cache's,
//! writes back the idle QP it evicts to the context table at that QP's
//! number, loads the fetched QP from its record and rebinds the directory.
//! The driver keeps naming QPs by number (doorbells, CQEs), so a QP runs
//! on in whatever slot the NIC has put it.
//!
//! Proven here: a QP on chip is found and nothing moves; free cache slots
//! are filled before anything is evicted; once every cache slot is bound,
//! fetches evict round robin, and a live connection's receiver is evicted
//! like any idle QP: its packets are then dropped and counted, and fetched
//! back (into another slot) it takes the sender's retransmission, places
//! the data and completes, and a later run is clean. A QP with work in
//! flight is never the victim (the pin, the context engine's: its break
//! switch `unpinned-move` is caught by tests/qp_record.rs). Bad fetches
//! are refused and move nothing.

use rnic_driver::{DriverError, Fetched};
use rnic_tests::roce::*;
use rnic_tests::WIDTHS;
use rnic_verbs::*;

/// Records in the tests' tables (QP numbers up to this).
const TABLE: u32 = 1024;

/// Posts one signaled WRITE_WITH_IMM of `a`'s bytes 0..`len` to `b`'s
/// region at 0 (no receive WQE: the test posts that itself).
fn send_write_imm(a: &mut End, b: &End, len: usize, imm: u32, id: u64) {
    let sge = [a.mr.sge(0, len as u32).unwrap()];
    a.qp.post_send(&SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWriteWithImm,
        send_flags: SendFlags::SIGNALED,
        sg_list: &sge,
        imm_data: Some(imm.to_be()),
        rdma: Some(b.mr.rdma_info(0).unwrap()),
    })
    .unwrap();
}

fn code(r: rnic_driver::Result<Fetched>) -> u8 {
    match r {
        Err(DriverError::QpFetch { code, .. }) => code,
        other => panic!("expected the NIC's refusal, got {other:?}"),
    }
}

#[test]
fn the_nic_fetches_a_qp_by_number_and_evicts_an_idle_one() {
    for w in WIDTHS {
        let p = pair(w, 71, "ideal");
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        assert_eq!(write_imm_messages(&p, &mut a, &mut b, 2, 1, 2000, 71), 0);
        p.world.run(5_000);
        let nic = p.b.nic();
        let slots = nic.id().num_queues as u16;
        nic.qp_ctx_table_open(TABLE).unwrap();
        let (nb, sb) = (b.qp.qp_num(), b.qp.slot());
        nic.set_qp_cache(sb, false).unwrap();

        // on chip already: found, nothing moves
        let f = nic.qp_fetch(nb).unwrap();
        assert_eq!(
            f,
            Fetched {
                slot: sb,
                loaded: false,
                evicted: None
            },
            "DATA_W={w}"
        );
        // the free cache slots first (empty records: RESET QPs)
        let free = slots - sb - 1;
        let mut filled = Vec::new();
        for k in 0..u32::from(free) {
            let f = nic.qp_fetch(300 + k).unwrap();
            assert!(f.loaded && f.evicted.is_none(), "DATA_W={w}: {f:?}");
            assert!(
                f.slot > sb && !filled.contains(&f.slot),
                "DATA_W={w}: {f:?}"
            );
            filled.push(f.slot);
        }
        // the message's receive WQE, while B's QP is on chip
        b.qp.post_recv(&RecvWr {
            wr_id: 7,
            sg_list: &[],
        })
        .unwrap();
        // every cache slot bound: fetches evict, round robin, until B's QP
        // goes (idle: its last ACKs are out)
        let mut victims = Vec::new();
        for k in 0.. {
            let f = nic.qp_fetch(600 + k).unwrap();
            let v = f
                .evicted
                .expect("every cache slot is bound: a fetch evicts");
            assert!(f.loaded, "DATA_W={w}: {f:?}");
            assert!(!victims.contains(&v), "DATA_W={w}: {v} evicted twice");
            victims.push(v);
            if v == nb {
                break;
            }
            assert!(k <= u32::from(slots), "DATA_W={w}: B's QP never evicted");
        }
        // its number has no slot: the WRITE_WITH_IMM is dropped and counted
        rnic_harness::pattern::fill_buf(&a.buf, 0, 512, 72);
        b.buf.fill(0, 512, 0);
        let drops = p.b.query_port_counters().unwrap().rx_drop_qp;
        send_write_imm(&mut a, &b, 512, 0x72, 8);
        p.world.run(3_000);
        assert!(
            p.b.query_port_counters().unwrap().rx_drop_qp > drops,
            "DATA_W={w}: a packet for the evicted QP was not dropped"
        );
        assert!(
            wait_wc(p.b.device(), &b.cq, 1, 10).is_empty(),
            "DATA_W={w}: a completion while the QP was out"
        );
        // fetched back, into another slot: the retransmission is taken
        let f = nic.qp_fetch(nb).unwrap();
        assert!(f.loaded && f.evicted.is_some(), "DATA_W={w}: {f:?}");
        let wb = wait_wc(p.b.device(), &b.cq, 1, 400_000);
        assert_eq!(
            (wb[0].wr_id, wb[0].status, wb[0].qp_num),
            (7, WcStatus::Success, nb),
            "DATA_W={w}"
        );
        assert_eq!(wb[0].imm_data, Some(0x72u32.to_be()), "DATA_W={w}");
        let wa = wait_wc(p.a.device(), &a.cq, 1, 400_000);
        assert_eq!((wa[0].wr_id, wa[0].status), (8, WcStatus::Success));
        assert_eq!(
            rnic_harness::pattern::check_buf(&b.buf, 0, 512, 72),
            None,
            "DATA_W={w}: the data (first wrong byte)"
        );
        // and it runs on, wherever it is
        assert_eq!(write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, 73), 0);
        let c = nic.qp_ctx_counters().unwrap();
        assert_eq!(c.fails, 0, "DATA_W={w}");
        assert!(p.b.device().iommu_faults().is_empty());
        eprintln!(
            "DATA_W={w}: {} free slots filled, {} evictions before B's QP, back in slot {} (home {sb})",
            filled.len(),
            victims.len(),
            f.slot
        );
    }
}

#[test]
fn bad_fetches_are_refused_and_move_nothing() {
    let p = pair(64, 75, "ideal");
    let (_a, b) = connect(&p, &ConnOpts::default());
    let nic = p.b.nic();
    let slots = nic.id().num_queues as u16;
    // no table: the driver refuses
    assert!(nic.qp_fetch(5).is_err());
    nic.qp_ctx_table_open(16).unwrap();
    // beyond the table: the driver refuses, and so does the NIC
    assert!(nic.qp_fetch(16).is_err());
    // no cache slot: code 5
    nic.set_qp_cache(slots, false).unwrap();
    assert_eq!(code(nic.qp_fetch(9)), 5);
    // a QP on chip is found even so, and nothing moves
    let f = nic.qp_fetch(b.qp.qp_num()).unwrap();
    assert_eq!((f.slot, f.loaded), (b.qp.slot(), false));
    let c = nic.qp_ctx_counters().unwrap();
    assert_eq!((c.fills, c.writebacks), (0, 0));
}

/// The pin holds for the fetch's victims: a receiver owing an ACK (a WRITE
/// ONLY without AckReq leaves the flag AO set until the ACK timer sends
/// it) is passed over though the round robin comes to its slot first, and
/// an empty QP is evicted instead; once the ACK has gone out, it is
/// evicted like any idle QP. With the break switch `unpinned-move` the
/// first fetch evicts it, ACK owed and all: the check sees the switch.
#[test]
fn a_qp_with_work_in_flight_is_never_the_fetchs_victim() {
    for w in WIDTHS {
        let (p, b, first) = owing_an_ack(w, false);
        let (nb, sb) = (b.qp.qp_num(), b.qp.slot());
        assert!(
            first.evicted != Some(nb) && first.slot != sb,
            "DATA_W={w}: {first:?} (B's QP owes an ACK)"
        );
        // the ACK out, B's QP is idle: the round robin comes back to it
        let nic = p.b.nic();
        p.world.run(5_000);
        let mut evicted = Vec::new();
        for k in 0..nic.id().num_queues {
            let f = nic.qp_fetch(800 + k).unwrap();
            evicted.push(f.evicted.unwrap());
            if f.evicted == Some(nb) {
                break;
            }
        }
        assert_eq!(evicted.last(), Some(&nb), "DATA_W={w}: {evicted:?}");
        let mut got = [0u8; 64];
        b.buf.read(0, &mut got);
        assert_eq!(got, [0x5a; 64], "DATA_W={w}: the WRITE's bytes");

        let (_p, b, first) = owing_an_ack(w, true);
        assert_eq!(
            first.evicted,
            Some(b.qp.qp_num()),
            "DATA_W={w}: unpinned-move on, the busy QP was not evicted: {first:?}"
        );
    }
}

/// A pair whose B QP owes an ACK (a WRITE ONLY without AckReq, placed),
/// its cache slots all bound (from B's QP's slot on), and the first fetch
/// made then; `unpinned` sets the break switch first.
fn owing_an_ack(w: u32, unpinned: bool) -> (Pair, End, Fetched) {
    let p = pair(w, 77, "ideal");
    let (_a, b) = connect(&p, &ConnOpts::default());
    let nic = p.b.nic();
    nic.debug_switches()
        .set(Break::UnpinnedMove, unpinned)
        .unwrap();
    let slots = nic.id().num_queues as u16;
    nic.qp_ctx_table_open(TABLE).unwrap();
    let sb = b.qp.slot();
    nic.set_qp_cache(sb, false).unwrap();
    for k in 0..u32::from(slots - sb - 1) {
        let f = nic.qp_fetch(300 + k).unwrap();
        assert!(f.evicted.is_none(), "DATA_W={w}: {f:?}");
    }
    let write = write_only_no_ack_req(&b, EndOpts::default().psn_a);
    assert!(p
        .world
        .inject_frame(1, &frame_sport(0, 0xc000, write), false));
    // placed, its ACK owed (less than ACK_TIMER / 2 = 1,024 cycles)
    p.world.run(600);
    let f = nic.qp_fetch(700).unwrap();
    assert!(
        f.evicted.is_some(),
        "DATA_W={w}: every cache slot is bound: {f:?}"
    );
    (p, b, f)
}

/// Evicts `nb` from NIC `nic`'s cache: fetches empty QPs (numbers from
/// `from` on) until the round robin has written it back.
fn evict(nic: &rnic_driver::Nic<rnic_sim::SimDevice>, nb: u32, from: u32) -> u32 {
    let mut k = from;
    loop {
        let f = nic.qp_fetch(k).unwrap();
        k += 1;
        if f.evicted == Some(nb) {
            return k;
        }
        assert!(k < from + 200, "QP {nb} never evicted");
    }
}

/// NIC B's cache from `b`'s slot on, its free slots filled with empty QPs
/// (numbers from 300), a receive WQE (wr_id 7) posted to `b`, and `b`'s
/// QP then evicted to the table; `misses`: `qp_cache_first.auto`. Returns
/// the next free empty QP number (for [`evict`]).
fn receiver_out(p: &Pair, b: &mut End, misses: bool) -> u32 {
    let nic = p.b.nic();
    let slots = nic.id().num_queues as u16;
    nic.qp_ctx_table_open(TABLE).unwrap();
    let (nb, sb) = (b.qp.qp_num(), b.qp.slot());
    nic.set_qp_cache(sb, misses).unwrap();
    for k in 0..u32::from(slots - sb - 1) {
        nic.qp_fetch(300 + k).unwrap();
    }
    b.qp.post_recv(&RecvWr {
        wr_id: 7,
        sg_list: &[],
    })
    .unwrap();
    evict(nic, nb, 600)
}

/// Misses fetch by themselves (`qp_cache_first.auto`): a WRITE_WITH_IMM
/// for an evicted receiver waits in the receive stage while the NIC
/// fetches its QP, and is placed and completed without a drop or a
/// retransmission; a receive doorbell by number for an evicted QP makes
/// the NIC fetch it too, and the WQE it posts is there for the next
/// message.
#[test]
fn a_packet_or_a_doorbell_for_an_evicted_qp_fetches_it() {
    for w in WIDTHS {
        let p = pair(w, 79, "ideal");
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        let next = receiver_out(&p, &mut b, true);
        let nic = p.b.nic();
        let nb = b.qp.qp_num();
        let (m0, _) = nic.qp_fetch_counters().unwrap();
        let drops = p.b.query_port_counters().unwrap().rx_drop_qp;
        let rtx = p.a.query_port_counters().unwrap().tx_retransmits;

        // a packet for it: fetched, placed, completed
        rnic_harness::pattern::fill_buf(&a.buf, 0, 3000, 80);
        b.buf.fill(0, 3000, 0);
        send_write_imm(&mut a, &b, 3000, 0x80, 8);
        let wb = wait_wc(p.b.device(), &b.cq, 1, 200_000);
        assert_eq!(
            (wb[0].wr_id, wb[0].status, wb[0].qp_num),
            (7, WcStatus::Success, nb),
            "DATA_W={w}"
        );
        let wa = wait_wc(p.a.device(), &a.cq, 1, 200_000);
        assert_eq!((wa[0].wr_id, wa[0].status), (8, WcStatus::Success));
        assert_eq!(rnic_harness::pattern::check_buf(&b.buf, 0, 3000, 80), None);
        let (m1, _) = nic.qp_fetch_counters().unwrap();
        assert_eq!(m1, m0 + 1, "DATA_W={w}: one miss fetched B's QP");
        assert_eq!(p.b.query_port_counters().unwrap().rx_drop_qp, drops);
        assert_eq!(p.a.query_port_counters().unwrap().tx_retransmits, rtx);

        // a doorbell for it: fetched, the WQE taken
        evict(nic, nb, next);
        b.qp.post_recv(&RecvWr {
            wr_id: 9,
            sg_list: &[],
        })
        .unwrap();
        // (the doorbell waits in the NIC's doorbell table for its fetch;
        // the host's MMIO goes on)
        p.world.run(2_000);
        let (m2, _) = nic.qp_fetch_counters().unwrap();
        assert_eq!(m2, m1 + 1, "DATA_W={w}: the doorbell's miss");
        let e = nic.error_status().unwrap();
        assert_ne!(e.code, 14, "DATA_W={w}: the doorbell was refused: {e:?}");
        send_write_imm(&mut a, &b, 64, 0x81, 10);
        let wb = wait_wc(p.b.device(), &b.cq, 1, 200_000);
        assert_eq!((wb[0].wr_id, wb[0].status), (9, WcStatus::Success));
        let wa = wait_wc(p.a.device(), &a.cq, 1, 200_000);
        assert_eq!((wa[0].wr_id, wa[0].status), (10, WcStatus::Success));
    }
}

/// A cache smaller than the active QPs: three live receivers share two
/// cache slots on NIC B (every other slot is the host's and holds an
/// empty QP), and messages go to them in turn, so nearly every message
/// misses, fetches its QP and evicts another's. Data, order and
/// completions are intact.
#[test]
fn three_receivers_in_two_cache_slots_take_turns_intact() {
    for w in WIDTHS {
        let p = pair(w, 81, "ideal");
        let mut conns: Vec<(End, End)> =
            (0..3).map(|_| connect(&p, &ConnOpts::default())).collect();
        let nic = p.b.nic();
        let slots = nic.id().num_queues as u16;
        nic.qp_ctx_table_open(TABLE).unwrap();
        // every slot a cache slot: empty QPs fill the free ones and then
        // evict the three live ones (idle) to the table
        nic.set_qp_cache(0, false).unwrap();
        let live: Vec<u32> = conns.iter().map(|(_, b)| b.qp.qp_num()).collect();
        let mut k = 300;
        let mut out = 0;
        while out < live.len() {
            let f = nic.qp_fetch(k).unwrap();
            k += 1;
            if f.evicted.is_some_and(|v| live.contains(&v)) {
                out += 1;
            }
            assert!(k < 500, "DATA_W={w}: the live QPs were not evicted");
        }
        // two cache slots from now on, the rest the host's
        nic.set_qp_cache(slots - 2, true).unwrap();
        let (m0, e0) = nic.qp_fetch_counters().unwrap();
        for round in 0..4 {
            for (i, (a, b)) in conns.iter_mut().enumerate() {
                let v = write_imm_messages(&p, a, b, 1, 1, 3000, 90 + 10 * round + i as u64);
                assert_eq!(v, 0, "DATA_W={w}: round {round} QP {i}");
            }
        }
        let (m1, e1) = nic.qp_fetch_counters().unwrap();
        let drops = p.b.query_port_counters().unwrap().rx_drop_qp;
        eprintln!(
            "DATA_W={w}: 12 messages, {} misses, {} evictions, {drops} packets dropped",
            m1 - m0,
            e1 - e0
        );
        assert!(m1 - m0 >= 10, "DATA_W={w}: {} misses", m1 - m0);
        assert!(p.b.device().iommu_faults().is_empty());
    }
}

/// Issue 19's verbs: once a context has a QP cache, `create_qp` puts the
/// QP in host memory with no slot of its own, so a NIC of 64 slots runs
/// more QPs than it has slots. Every one of 100 active QP pairs carries
/// WRITE_WITH_IMMs (a receive completion each, on a QP the NIC fetched),
/// misses evict QPs on both NICs, and nothing fails or stalls: a doorbell
/// whose fetch finds every cache slot pinned waits in the doorbell table
/// and is tried again (before that table, such a doorbell was dropped and
/// the run stalled with WQEs never executed).
#[test]
fn more_qps_than_slots_run_from_host_memory() {
    use rnic_torture::qp_scale::{run, ScaleOpts};
    for w in WIDTHS {
        let p = pair(w, 91, "ideal");
        let slots = p.a.nic().id().num_queues;
        let active = slots + 36;
        let o = ScaleOpts {
            active,
            msg_size: 64,
            imm: true,
            messages: 4 * u64::from(active),
            window: 2,
            mtu: Mtu::Mtu4096,
            qp_type: QpType::Rc,
            spray_log: 0,
            watchdog: 2_000_000,
            cache_records: TABLE,
        };
        // without the cache, the NIC holds its slots' worth
        let err = run(
            &p.a,
            p.addrs[0],
            &p.b,
            p.addrs[1],
            &ScaleOpts {
                cache_records: 0,
                ..o.clone()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("the NICs hold"), "{err}");
        let p = pair(w, 91, "ideal");
        let r = run(&p.a, p.addrs[0], &p.b, p.addrs[1], &o)
            .unwrap_or_else(|e| panic!("DATA_W={w}: {active} cached QPs: {e}"));
        let c = r.cache.unwrap();
        eprintln!(
            "DATA_W={w}: {active} QPs on {slots} slots: {} messages in {} cycles, {c:?}, hit rate {:?}",
            r.messages, r.cycles, r.hit_rate
        );
        assert_eq!(r.messages, o.messages);
        assert!(c.lookup_misses >= active, "DATA_W={w}: {c:?}");
        assert!(c.lookups > c.lookup_misses, "DATA_W={w}: {c:?}");
        assert!(
            c.evictions > 0 && c.writebacks >= c.evictions,
            "DATA_W={w}: {c:?}"
        );
        assert!(r.hit_rate.is_some_and(|h| h > 0.0 && h < 1.0));
        assert_eq!(p.a.query_device().unwrap().max_qp, TABLE - 2);
        assert!(p.a.device().iommu_faults().is_empty());
        assert!(p.b.device().iommu_faults().is_empty());
    }
}

/// The hold (`qp_fetch.hold`, `Nic::with_qp_held`): while the host holds
/// a QP in the cache's only slot, a packet's miss finds no slot it may
/// take (counted in `qp_fetch_full`) and the packet is dropped, the held
/// QP staying where it is; once the hold is dropped, the sender's
/// retransmission misses again, evicts the QP that was held and is
/// placed. Without the hold the same miss evicts that QP at once.
#[test]
fn a_held_qp_is_never_a_misss_victim() {
    for w in WIDTHS {
        for hold in [true, false] {
            let p = pair(w, 95, "ideal");
            let (mut a, mut b) = connect(&p, &ConnOpts::default());
            receiver_out(&p, &mut b, false);
            let nic = p.b.nic();
            let slots = nic.id().num_queues as u16;
            let nb = b.qp.qp_num();
            // one cache slot, holding QP 700 (an empty one)
            nic.set_qp_cache(slots - 1, true).unwrap();
            let f = nic.qp_fetch(700).unwrap();
            assert_eq!(f.slot, slots - 1, "DATA_W={w}: {f:?}");
            let c0 = nic.qp_cache_counters().unwrap();
            let drops = p.b.query_port_counters().unwrap().rx_drop_qp;
            rnic_harness::pattern::fill_buf(&a.buf, 0, 256, 95);
            b.buf.fill(0, 256, 0);
            let mut during = |held: bool| {
                send_write_imm(&mut a, &b, 256, 0x95, 8);
                p.world.run(4_000);
                let c = nic.qp_cache_counters().unwrap().since(&c0);
                let dropped = p.b.query_port_counters().unwrap().rx_drop_qp - drops;
                assert_eq!(nic.qp_held().unwrap(), held, "DATA_W={w}");
                (c, dropped)
            };
            let (c, dropped) = if hold {
                nic.with_qp_held(700, |slot| {
                    assert_eq!(slot, slots - 1);
                    Ok::<_, DriverError>(during(true))
                })
                .unwrap()
            } else {
                during(false)
            };
            if hold {
                assert!(
                    c.pinned_full >= 1 && dropped >= 1 && c.evictions == 0,
                    "DATA_W={w}: the held QP was evicted: {c:?}, {dropped} dropped"
                );
                assert!(!nic.qp_held().unwrap());
            } else {
                assert!(
                    c.evictions == 1 && dropped == 0,
                    "DATA_W={w}: without the hold: {c:?}, {dropped} dropped"
                );
            }
            let wb = wait_wc(p.b.device(), &b.cq, 1, 400_000);
            assert_eq!(
                (wb[0].wr_id, wb[0].status, wb[0].qp_num),
                (7, WcStatus::Success, nb),
                "DATA_W={w} hold={hold}"
            );
            assert_eq!(
                rnic_harness::pattern::check_buf(&b.buf, 0, 256, 95),
                None,
                "DATA_W={w} hold={hold}"
            );
            let wa = wait_wc(p.a.device(), &a.cq, 1, 400_000);
            assert_eq!((wa[0].wr_id, wa[0].status), (8, WcStatus::Success));
        }
    }
}
