//! The record window (BAR0 `qp_block.qp_rec_*`, DESIGN.md section 6, step
//! 1): a QP's whole state read and written as 64-bit words, the path the QP
//! context cache will move QPs through. A live QP's record saved, zeroed
//! and restored must leave the QP working; restored without its requester's
//! words it must not; and the window must never reach beyond the build's
//! QPs or words.
//!
//! The context table (BAR0 `qp_block.qp_ctx_*`, issue 19): the same records
//! moved by DMA between a slot and the host's table by the fill engine. A
//! live QP saved to the table, its slot loaded with another record and then
//! with its own again must run on; moves of an idle QP's slot while another
//! QP's WRITE_WITH_IMMs run (the DMA engines and the staging RAM shared)
//! must leave both intact; the engine must move nothing beyond the table,
//! leave a slot untouched when the table read fails, and refuse what it
//! cannot do.

use rnic_device::Device as _;
use rnic_driver::Nic;
use rnic_sim::SimDevice;
use rnic_tests::roce::*;
use rnic_tests::WIDTHS;
use rnic_verbs::*;

/// The record's words by module (rnic_transport's map).
const RANGES: [(&str, std::ops::Range<usize>); 4] = [
    ("qp_context", 0..8),
    ("queue_manager", 8..16),
    ("requester", 24..32),
    ("responder", 32..64),
];

/// Slot n's words that are completion queue n's (`cq_manager`'s): the
/// context engine never loads them (CQs stay on chip).
const CQ_WORDS: std::ops::Range<usize> = 16..24;

/// `v` with the CQ words taken from `from`.
fn with_cq_of(v: &[u64], from: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v[CQ_WORDS].copy_from_slice(&from[CQ_WORDS]);
    v
}

fn saved(nic: &Nic<SimDevice>, qpn: u16, what: &str) -> Vec<u64> {
    let rec = nic
        .read_qp_record(qpn)
        .unwrap_or_else(|e| panic!("{what}: read QP {qpn}'s record: {e}"));
    assert_eq!(rec.len(), nic.id().qp_rec_words as usize, "{what}");
    assert_eq!(
        rec.len(),
        64,
        "{what}: the simulated NIC has the record port"
    );
    rec
}

fn connected(w: u32, seed: u64) -> (Pair, End, End) {
    connected_with(w, seed, "ideal", &ConnOpts::default())
}

fn connected_with(w: u32, seed: u64, fabric: &str, o: &ConnOpts) -> (Pair, End, End) {
    let p = pair(w, seed, fabric);
    let (mut a, mut b) = connect(&p, o);
    let v = write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, seed);
    assert_eq!(v, 0, "DATA_W={w}: ordering violations before the save");
    // (the last ACKs home)
    p.world.run(5_000);
    (p, a, b)
}

/// An mp connection sprayed over 8 paths (the bitmap, the per-path and
/// path-health state are in the record too).
fn mp() -> ConnOpts {
    ConnOpts {
        qp_type: QpType::Mp,
        spray_log: 3,
        ..ConnOpts::default()
    }
}

#[test]
fn a_live_qp_survives_its_record_saved_zeroed_and_restored() {
    let runs = WIDTHS
        .iter()
        .map(|&w| (w, "ideal", ConnOpts::default()))
        .chain([(64, "spray-8", mp())]);
    for (w, fabric, o) in runs {
        let (p, mut a, mut b) = connected_with(w, 11, fabric, &o);
        let w = format!("{w} {fabric} {:?}", o.qp_type);
        for (ctx, end, side) in [(&p.a, &a, "A"), (&p.b, &b, "B")] {
            let nic = ctx.nic();
            let q = end.qp.slot();
            let what = format!("DATA_W={w} side {side} QP {q}");
            let rec = saved(nic, q, &what);
            // every module's range holds some of a connected QP's state
            for (m, r) in RANGES {
                assert!(
                    rec[r.clone()].iter().any(|&x| x != 0),
                    "{what}: the {m} words {r:?} are all zero in a connected QP"
                );
            }
            nic.write_qp_record(q, &vec![0; rec.len()]).unwrap();
            let zero = saved(nic, q, &what);
            let left: Vec<usize> = (0..zero.len()).filter(|&i| zero[i] != 0).collect();
            assert!(
                left.is_empty(),
                "{what}: words {left:?} kept bits through a zero write"
            );
            nic.write_qp_record(q, &rec).unwrap();
            assert_eq!(
                saved(nic, q, &what),
                rec,
                "{what}: the restored record differs"
            );
        }
        // the restored QPs carry on where they were: PSNs, queues, MSN
        let v = write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, 12);
        assert_eq!(v, 0, "DATA_W={w}: ordering violations after the restore");
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
    }
}

#[test]
fn a_record_restored_without_its_requester_words_breaks_the_qp() {
    let w = 64;
    let (p, mut a, mut b) = connected(w, 21);
    let nic = p.a.nic();
    let q = a.qp.slot();
    let mut rec = saved(nic, q, "side A");
    for x in &mut rec[24..32] {
        *x = 0;
    }
    nic.write_qp_record(q, &rec).unwrap();
    // one WRITE_WITH_IMM: the requester's PSNs and send queue state are
    // gone, so it must not arrive as the next message
    post_write_imm(&mut a, &mut b, 64, 7, 1, 9);
    let wcs = rnic_harness::poll::wait_wc(p.b.device(), &b.cq, 1, 50_000).unwrap();
    assert!(
        !wcs.iter().any(|wc| wc.status == WcStatus::Success),
        "a QP whose requester words were zeroed still delivered: {wcs:?}"
    );
}

#[test]
fn the_window_reaches_no_qp_beyond_the_build_and_no_word_beyond_the_record() {
    let p = pair(64, 31, "ideal");
    let (a, _b) = connect(&p, &ConnOpts::default());
    let nic = p.a.nic();
    let n = nic.id().num_queues;
    let q = a.qp.slot();
    let before = saved(nic, q, "QP");
    let last = saved(nic, (n - 1) as u16, "last QP");

    // the driver refuses what the NIC would drop
    assert!(nic.read_qp_record(n as u16).is_err());
    assert!(nic.write_qp_record(q, &before[..63]).is_err());

    // raw MMIO: a QP number that truncated would be q, a word that
    // truncated would be word 3: written all ones, read back as 0
    let io = nic.io();
    let qp = io.csr().qp();
    for (qpn, word) in [(n as u16 + q, 3u8), (q, 64 + 3), (0xffff, 0)] {
        qp.qp_sel().try_write(|r| r.set_qpn(qpn)).unwrap();
        qp.qp_rec_wdata_lo()
            .try_write(|r| r.set_data(u32::MAX))
            .unwrap();
        qp.qp_rec_wdata_hi()
            .try_write(|r| r.set_data(u32::MAX))
            .unwrap();
        qp.qp_rec_cmd()
            .try_write(|r| {
                r.set_word(word);
                r.set_op(2);
            })
            .unwrap();
        qp.qp_rec_cmd()
            .try_write(|r| {
                r.set_word(word);
                r.set_op(1);
            })
            .unwrap();
        let lo = qp.qp_rec_rdata_lo().try_read().unwrap().value();
        let hi = qp.qp_rec_rdata_hi().try_read().unwrap().value();
        assert_eq!((lo, hi), (0, 0), "QP {qpn} word {word} read back");
    }
    assert_eq!(
        saved(nic, q, "QP"),
        before,
        "a write beyond the window reached QP {q}"
    );
    assert_eq!(saved(nic, (n - 1) as u16, "last QP"), last);
}

// ---------------------------------------------------------------- the context table

/// Records in the tests' tables.
const TABLE: u32 = 16;

#[test]
fn a_live_qp_parked_in_the_context_table_and_loaded_back_runs_on() {
    let runs = WIDTHS
        .iter()
        .map(|&w| (w, "ideal", ConnOpts::default()))
        .chain([(64, "spray-8", mp())]);
    for (w, fabric, o) in runs {
        let (p, mut a, mut b) = connected_with(w, 41, fabric, &o);
        let w = format!("{w} {fabric} {:?}", o.qp_type);
        for (ctx, end, side) in [(&p.a, &a, "A"), (&p.b, &b, "B")] {
            let nic = ctx.nic();
            nic.qp_ctx_table_open(TABLE).unwrap();
            let q = end.qp.slot();
            let what = format!("DATA_W={w} side {side} QP {q}");
            let rec = saved(nic, q, &what);
            // save: the table's record 5 holds the slot's words, and the
            // slot (written back, then loaded from there) is unchanged
            nic.qp_ctx_save(q, 5).unwrap();
            assert_eq!(
                nic.qp_ctx_record(5).unwrap(),
                rec,
                "{what}: record 5 after the save"
            );
            assert_eq!(saved(nic, q, &what), rec, "{what}: the slot after the save");
            // swap: the slot goes to record 9 and takes record 2, a
            // pattern; the slot must then hold what the window makes of
            // the same words (the core keeps only its records' bits)
            let other: Vec<u64> = (0..rec.len() as u64)
                .map(|i| (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            nic.write_qp_record(q, &other).unwrap();
            // (a load leaves the slot's CQ words as they were)
            let expect = with_cq_of(&saved(nic, q, &what), &rec);
            nic.write_qp_record(q, &rec).unwrap();
            assert!(
                expect.iter().any(|&x| x != 0),
                "{what}: the pattern left no bits"
            );
            nic.set_qp_ctx_record(2, &other).unwrap();
            nic.qp_ctx_swap(q, 9, 2).unwrap();
            assert_eq!(
                nic.qp_ctx_record(9).unwrap(),
                rec,
                "{what}: record 9 after the swap"
            );
            assert_eq!(
                saved(nic, q, &what),
                expect,
                "{what}: the slot loaded from record 2"
            );
            // the pattern claims WQEs taken from the send queue (SQS.TAKEN
            // 3): the pin refuses to move the slot, and nothing moves
            match nic.qp_ctx_load(q, 9) {
                Err(e) if e.is_pinned() => {}
                r => panic!("{what}: a load over the pattern: {r:?}"),
            }
            assert_eq!(
                saved(nic, q, &what),
                expect,
                "{what}: the refused load moved"
            );
            // back from record 9, over an empty slot (its CQ words kept:
            // CQ q is not the QP's to empty)
            nic.write_qp_record(q, &with_cq_of(&vec![0; rec.len()], &rec))
                .unwrap();
            nic.qp_ctx_load(q, 9).unwrap();
            assert_eq!(saved(nic, q, &what), rec, "{what}: the slot loaded back");
            let st = nic.qp_ctx_status().unwrap();
            assert!(!st.busy && !st.fault && st.err == 0, "{what}: {st:?}");
            assert_eq!(st.done, 4, "{what}: four commands answered, one refused");
            let c = nic.qp_ctx_counters().unwrap();
            let want = rnic_driver::CtxCounters {
                fills: 3,
                writebacks: 2,
                fails: 0,
            };
            assert_eq!(c, want, "{what}: the engine's counters");
        }
        // the reloaded QPs carry on where they were
        let v = write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, 42);
        assert_eq!(v, 0, "DATA_W={w}: ordering violations after the reload");
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
        for ctx in [&p.a, &p.b] {
            ctx.nic().qp_ctx_table_close().unwrap();
        }
    }
}

#[test]
fn the_context_engine_moves_nothing_beyond_the_table_and_refuses_bad_commands() {
    let p = pair(64, 43, "ideal");
    let (a, _b) = connect(&p, &ConnOpts::default());
    let nic = p.a.nic();
    let q = a.qp.slot();
    let n = nic.id().num_queues as u16;
    let code = |r: rnic_driver::Result<()>| match r {
        Err(rnic_driver::DriverError::QpCtx { code, .. }) => code,
        other => panic!("expected the NIC's refusal, got {other:?}"),
    };

    // no table yet: the driver refuses; the NIC (0 records) too
    assert!(nic.qp_ctx_load(q, 0).is_err());
    assert_eq!(code(nic.qp_ctx_command_raw(q, 1, 0, 0)), 3);

    nic.qp_ctx_table_open(TABLE).unwrap();
    assert!(
        nic.qp_ctx_table_open(TABLE).is_err(),
        "a second table over the first"
    );
    let before = saved(nic, q, "QP");
    // the driver refuses what the NIC would refuse
    assert!(nic.qp_ctx_load(q, TABLE).is_err());
    assert!(nic.qp_ctx_swap(q, TABLE, 0).is_err());
    assert!(nic.qp_ctx_load(n, 0).is_err());
    // and the NIC refuses it itself, moving nothing
    assert_eq!(
        code(nic.qp_ctx_command_raw(q, 1, TABLE, 0)),
        3,
        "load beyond"
    );
    assert_eq!(
        code(nic.qp_ctx_command_raw(q, 2, 0, TABLE)),
        3,
        "write-back beyond"
    );
    assert_eq!(
        code(nic.qp_ctx_command_raw(q, 1, 0xff_ffff, 0)),
        3,
        "load far beyond"
    );
    assert_eq!(code(nic.qp_ctx_command_raw(q, 0, 0, 0)), 4, "op 0");
    assert_eq!(code(nic.qp_ctx_command_raw(q, 3, 0, 0)), 4, "op 3");
    assert_eq!(code(nic.qp_ctx_command_raw(n, 1, 0, 0)), 6, "slot beyond");
    assert_eq!(
        code(nic.qp_ctx_command_raw(0xffff, 1, 0, 0)),
        6,
        "slot far beyond"
    );
    assert_eq!(
        saved(nic, q, "QP"),
        before,
        "a refused command changed the slot"
    );
    let table: Vec<Vec<u64>> = (0..TABLE).map(|r| nic.qp_ctx_record(r).unwrap()).collect();
    assert!(
        table.iter().flatten().all(|&x| x == 0),
        "a refused write-back reached the table"
    );

    // a command while one runs is refused, and so is closing the table
    let io = nic.io();
    let qp = io.csr().qp();
    qp.qp_sel().try_write(|r| r.set_qpn(q)).unwrap();
    qp.qp_ctx_wb().try_write(|r| r.set_record(1)).unwrap();
    let done0 = nic.qp_ctx_status().unwrap().done;
    for _ in 0..2 {
        qp.qp_ctx_cmd()
            .try_write(|r| {
                r.set_record(1);
                r.set_op(2);
            })
            .unwrap();
    }
    let st = nic.qp_ctx_status().unwrap();
    assert!(
        st.busy && st.err == 5,
        "the second command while the first runs: {st:?}"
    );
    assert!(
        nic.qp_ctx_table_close().is_err(),
        "closing the table under a running command"
    );
    let t0 = p.a.device().now();
    while nic.qp_ctx_status().unwrap().busy {
        assert!(p.a.device().now() - t0 < 1_000_000, "the save did not end");
        p.a.device().idle();
    }
    let st = nic.qp_ctx_status().unwrap();
    assert_eq!((st.err, st.done.wrapping_sub(done0)), (0, 2), "{st:?}");
    assert_eq!(
        nic.qp_ctx_record(1).unwrap(),
        before,
        "the first command's save"
    );
    let c = nic.qp_ctx_counters().unwrap();
    assert_eq!(
        (c.fills, c.writebacks, c.fails),
        (1, 1, 0),
        "only the one command that ran moved records"
    );
    assert!(!st.fault && p.a.device().iommu_faults().is_empty());
    nic.qp_ctx_table_close().unwrap();
    assert!(nic.qp_ctx_load(q, 0).is_err(), "a closed table");
}

#[test]
fn a_failed_table_read_leaves_the_slot_untouched() {
    for w in WIDTHS {
        let p = pair(w, 45, "ideal");
        let (a, _b) = connect(&p, &ConnOpts::default());
        let nic = p.a.nic();
        let q = a.qp.slot();
        nic.qp_ctx_table_open(TABLE).unwrap();
        let before = saved(nic, q, "QP");
        // the table moved (behind the driver's back) to memory the IOMMU
        // does not map: the read faults, the NIC answers err 2
        let io = nic.io();
        let qp = io.csr().qp();
        qp.qp_ctx_base_hi().try_write(|r| r.set_addr(0x7e)).unwrap();
        let r = nic.qp_ctx_load(q, 3);
        assert!(
            matches!(r, Err(rnic_driver::DriverError::QpCtx { code: 2, .. })),
            "DATA_W={w}: a load from unmapped memory: {r:?}"
        );
        assert!(
            !p.a.device().iommu_faults().is_empty(),
            "DATA_W={w}: the IOMMU saw no fault"
        );
        assert_eq!(
            saved(nic, q, "QP"),
            before,
            "DATA_W={w}: the failed load changed the slot"
        );
        let st = nic.qp_ctx_status().unwrap();
        assert!(
            !st.fault,
            "DATA_W={w}: an error status is not a fault: {st:?}"
        );
        let c = nic.qp_ctx_counters().unwrap();
        assert_eq!(
            (c.fills, c.writebacks, c.fails),
            (0, 0, 1),
            "DATA_W={w}: counters"
        );
    }
}

/// `msgs` signaled WRITE_WITH_IMMs of `len` bytes from `a`'s buffer
/// (a pattern of `key`) to `b`'s (stale bytes), each with its receive
/// posted; returns at once.
fn post_write_imms(a: &mut End, b: &mut End, msgs: usize, len: usize, key: u64) {
    use rnic_harness::pattern;
    pattern::fill_buf(&a.buf, 0, msgs * len, key);
    pattern::fill_buf_stale(&b.buf, 0, msgs * len, key);
    for m in 0..msgs {
        b.qp.post_recv(&RecvWr {
            wr_id: m as u64,
            sg_list: &[],
        })
        .unwrap();
        let sge = [a.mr.sge(m * len, len as u32).unwrap()];
        a.qp.post_send(&SendWr {
            wr_id: m as u64,
            opcode: WrOpcode::RdmaWriteWithImm,
            send_flags: SendFlags::SIGNALED,
            sg_list: &sge,
            imm_data: Some((m as u32).to_be()),
            rdma: Some(b.mr.rdma_info(m * len).unwrap()),
        })
        .unwrap();
    }
}

#[test]
fn context_moves_beside_running_traffic_leave_both_intact() {
    use rnic_harness::pattern;
    const MSGS: usize = 8;
    const LEN: usize = 8 << 10;
    for w in WIDTHS {
        let p = pair(w, 47, "ideal");
        let o = ConnOpts::default();
        let (mut a, mut b) = connect(&p, &o);
        // a second connection, idle: its slots are what the engine moves,
        // on both NICs, while the first one's WRITE_WITH_IMMs run
        let (c, d) = connect(&p, &o);
        // (the window's reads take simulated time: before the traffic)
        let idle = [(&p.a, c.qp.slot()), (&p.b, d.qp.slot())];
        let recs: Vec<Vec<u64>> = idle
            .iter()
            .map(|(ctx, q)| {
                ctx.nic().qp_ctx_table_open(TABLE).unwrap();
                saved(ctx.nic(), *q, "idle QP")
            })
            .collect();
        let key = 0x00c7_0000 + u64::from(w);
        post_write_imms(&mut a, &mut b, MSGS, LEN, key);
        let mut wcs = Vec::new();
        let mut beside = 0;
        let mut i = 0u32;
        let mut touched = [
            std::collections::BTreeSet::new(),
            std::collections::BTreeSet::new(),
        ];
        while wcs.len() < MSGS {
            assert!(i < 1000, "DATA_W={w}: the traffic did not end");
            let (ctx, q) = idle[i as usize % 2];
            let r = (i / 2) % 4;
            touched[i as usize % 2].extend([r, r + 4]);
            // a save into record r, then a swap out to record r + 4 and in
            // from record r (the same words)
            ctx.nic().qp_ctx_save(q, r).unwrap();
            ctx.nic().qp_ctx_swap(q, r + 4, r).unwrap();
            i += 1;
            let mut got = [WorkCompletion::default(); MSGS];
            let n = b.cq.poll(&mut got).unwrap();
            if wcs.len() + n < MSGS {
                beside += 1;
            }
            wcs.extend_from_slice(&got[..n]);
        }
        assert!(
            beside >= 2,
            "DATA_W={w}: only {beside} moves ran while the traffic did"
        );
        assert!(
            wcs.iter().all(|wc| wc.status == WcStatus::Success),
            "DATA_W={w}: {wcs:?}"
        );
        if let Some(bad) = pattern::check_buf(&b.buf, 0, MSGS * LEN, key) {
            panic!("DATA_W={w}: byte {bad} of the written data is wrong");
        }
        for (((ctx, q), rec), touched) in idle.iter().zip(&recs).zip(&touched) {
            let nic = ctx.nic();
            assert_eq!(
                &saved(nic, *q, "idle QP"),
                rec,
                "DATA_W={w}: the idle QP's slot"
            );
            for &r in touched {
                assert_eq!(
                    &nic.qp_ctx_record(r).unwrap(),
                    rec,
                    "DATA_W={w}: record {r}"
                );
            }
            let c = nic.qp_ctx_counters().unwrap();
            assert_eq!(c.fails, 0, "DATA_W={w}");
        }
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
    }
}

#[test]
fn moves_in_flight_at_once_each_reach_their_own_slot() {
    for w in WIDTHS {
        let p = pair(w, 49, "ideal");
        let o = ConnOpts::default();
        let conns: Vec<(End, End)> = (0..4).map(|_| connect(&p, &o)).collect();
        let nic = p.a.nic();
        let fills = nic.id().ctx_fills as usize;
        assert_eq!(
            fills, 2,
            "DATA_W={w}: the simulated NIC's context moves at once"
        );
        nic.qp_ctx_table_open(TABLE).unwrap();
        let slots: Vec<u16> = conns.iter().map(|(a, _)| a.qp.slot()).collect();
        let recs: Vec<Vec<u64>> = slots.iter().map(|&q| saved(nic, q, "QP")).collect();
        // as many at once as the NIC runs
        let post_all = |cmds: &[(u16, u8, u32, u32)]| {
            for cmds in cmds.chunks(fills) {
                let done = nic.qp_ctx_status().unwrap().done;
                for &(q, op, r, wb) in cmds {
                    nic.qp_ctx_post_raw(q, op, r, wb).unwrap();
                }
                let last = cmds.last().unwrap();
                nic.qp_ctx_wait(done.wrapping_add(cmds.len() as u16), last.0, last.2)
                    .unwrap_or_else(|e| panic!("DATA_W={w}: {cmds:?}: {e}"));
            }
        };
        // four saves: slot k to record k
        let cmds: Vec<_> = (0..4).map(|k| (slots[k], 2, k as u32, k as u32)).collect();
        post_all(&cmds);
        for k in 0..4 {
            assert_eq!(
                nic.qp_ctx_record(k as u32).unwrap(),
                recs[k],
                "DATA_W={w}: record {k}"
            );
            assert_eq!(saved(nic, slots[k], "QP"), recs[k], "DATA_W={w}: slot {k}");
        }
        // four swaps, a rotation: slot k out to record 4 + k, in
        // from record k + 1 (QP k + 1's words)
        let cmds: Vec<_> = (0..4)
            .map(|k| (slots[k], 2, ((k + 1) % 4) as u32, 4 + k as u32))
            .collect();
        post_all(&cmds);
        for k in 0..4 {
            // (each slot keeps its own CQ words)
            assert_eq!(
                saved(nic, slots[k], "QP"),
                with_cq_of(&recs[(k + 1) % 4], &recs[k]),
                "DATA_W={w}: slot {k} after the rotation"
            );
            assert_eq!(
                nic.qp_ctx_record(4 + k as u32).unwrap(),
                recs[k],
                "DATA_W={w}: record {}",
                4 + k
            );
        }
        // and four loads back from records 4..7
        let cmds: Vec<_> = (0..4).map(|k| (slots[k], 1, 4 + k as u32, 0)).collect();
        post_all(&cmds);
        for k in 0..4 {
            assert_eq!(
                saved(nic, slots[k], "QP"),
                recs[k],
                "DATA_W={w}: slot {k} loaded back"
            );
        }
        let c = nic.qp_ctx_counters().unwrap();
        assert_eq!((c.fills, c.writebacks, c.fails), (12, 8, 0), "DATA_W={w}");
        let st = nic.qp_ctx_status().unwrap();
        assert!(
            !st.fault && st.err == 0 && st.done == 12,
            "DATA_W={w}: {st:?}"
        );
        // every connection runs on
        let mut conns = conns;
        for (k, (a, b)) in conns.iter_mut().enumerate() {
            let v = write_imm_messages(&p, a, b, 2, 1, 2000, 50 + k as u64);
            assert_eq!(v, 0, "DATA_W={w}: connection {k} after the moves");
        }
        assert!(p.a.device().iommu_faults().is_empty() && p.b.device().iommu_faults().is_empty());
    }
}

/// What [`moves_during_traffic`] saw: moves the NIC made and refused, per
/// side (A sends, B receives).
#[derive(Debug, Default)]
struct MoveTally {
    moved: [u32; 2],
    refused: [u32; 2],
}

/// How [`moves_during_traffic`] moves a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Move {
    /// Written back to the table and loaded back: the records come back
    /// as they were, so only a module writing them meanwhile is lost.
    Save,
    /// Evicted as the cache would: written back while an empty QP (a
    /// record of zeros: RESET) is loaded, then loaded back over it. While
    /// the empty QP is in, the slot's packets are dropped (the peer
    /// resends), and state outside the records that still names the slot
    /// (a ring, a parked completion) meets the wrong QP.
    Evict,
}

/// Table records of [`moves_during_traffic`]: per side its QP's, then
/// the empty QP's and a scratch one the empty QP is written back to.
const EMPTY_REC: u32 = 2;
const SCRATCH_REC: u32 = 3;

/// A connection's own slots moved (`how`) on both NICs, again and again,
/// while its WRITE_WITH_IMMs run. Ok: the traffic came through intact;
/// Err: how it broke.
fn moves_during_traffic(
    w: u32,
    seed: u64,
    fabric: &str,
    o: &ConnOpts,
    how: Move,
    unpinned: bool,
) -> std::result::Result<MoveTally, String> {
    use rnic_harness::pattern;
    const MSGS: usize = 8;
    const LEN: usize = 8 << 10;
    let p = pair(w, seed, fabric);
    let (mut a, mut b) = connect(&p, o);
    let sides = [(&p.a, a.qp.slot()), (&p.b, b.qp.slot())];
    for (ctx, _) in sides {
        let nic = ctx.nic();
        nic.qp_ctx_table_open(TABLE).unwrap();
        nic.set_qp_ctx_record(EMPTY_REC, &vec![0; nic.id().qp_rec_words as usize])
            .unwrap();
        nic.debug_switches()
            .set(Break::UnpinnedMove, unpinned)
            .unwrap();
    }
    let key = 0x0e1d_0000 + seed;
    post_write_imms(&mut a, &mut b, MSGS, LEN, key);
    let mut tally = MoveTally::default();
    let (mut sent, mut recvd) = (Vec::new(), Vec::new());
    let mut i = 0u32;
    while sent.len() < MSGS || recvd.len() < MSGS {
        if i == 600 {
            return Err(format!(
                "the traffic did not end: {} of {MSGS} sends and {} receives completed ({tally:?})",
                sent.len(),
                recvd.len()
            ));
        }
        let s = i as usize % 2;
        let (ctx, q) = sides[s];
        let r = s as u32;
        let moved = match how {
            Move::Save => ctx.nic().qp_ctx_save(q, r),
            Move::Evict => ctx.nic().qp_ctx_swap(q, r, EMPTY_REC),
        };
        match moved {
            Ok(()) => {
                tally.moved[s] += 1;
                if how == Move::Evict {
                    // back in; the empty QP may be dropping a packet
                    // (pinned for those cycles): the host tries again
                    let mut tries = 0;
                    while let Err(e) = ctx.nic().qp_ctx_swap(q, SCRATCH_REC, r) {
                        tries += 1;
                        assert!(
                            tries < 100 && e.is_pinned(),
                            "DATA_W={w}: slot {q} back from the table: {e}"
                        );
                    }
                }
            }
            Err(e) if e.is_pinned() => tally.refused[s] += 1,
            Err(e) => panic!("DATA_W={w}: the move of slot {q}: {e}"),
        }
        i += 1;
        for (cq, into) in [(&a.cq, &mut sent), (&b.cq, &mut recvd)] {
            let mut got = [WorkCompletion::default(); MSGS];
            let n = cq.poll(&mut got).unwrap();
            into.extend_from_slice(&got[..n]);
        }
    }
    if let Some(wc) = sent
        .iter()
        .chain(&recvd)
        .find(|wc| wc.status != WcStatus::Success)
    {
        return Err(format!("a completion with an error: {wc:?} ({tally:?})"));
    }
    if let Some(bad) = pattern::check_buf(&b.buf, 0, MSGS * LEN, key) {
        return Err(format!(
            "byte {bad} of the written data is wrong ({tally:?})"
        ));
    }
    // the fabric loses nothing: after saves, a resend would be the
    // transport making up for state a move lost (an owed ACK, a parked
    // completion); an eviction drops the packets that meet the empty QP
    for (ctx, side) in [(&p.a, "A"), (&p.b, "B")]
        .into_iter()
        .filter(|_| how == Move::Save)
    {
        let c = ctx.query_port_counters().unwrap();
        if c.tx_retransmits != 0 || c.rtx_timeouts != 0 {
            return Err(format!(
                "side {side} resent {} packets after {} timeouts ({tally:?})",
                c.tx_retransmits, c.rtx_timeouts
            ));
        }
    }
    // once idle, the QPs move, and run on after it
    p.world.run(5_000);
    for (s, (ctx, q)) in sides.into_iter().enumerate() {
        ctx.nic()
            .qp_ctx_save(q, s as u32)
            .unwrap_or_else(|e| panic!("DATA_W={w}: the idle slot {q}: {e}"));
    }
    let v = write_imm_messages(&p, &mut a, &mut b, 3, 2, 3000, seed + 1);
    if v != 0 {
        return Err(format!(
            "{v} ordering violations after the moves ({tally:?})"
        ));
    }
    Ok(tally)
}

/// The pin: the context table moves no QP with work in flight. Moves of a
/// connection's own slots tried during its traffic are refused while its
/// QPs are busy (CTX_ERR_PINNED, nothing moved) and made when they are
/// idle, and the traffic comes through intact, on rc and on mp sprayed
/// over 8 paths (parked deferred completions, the bitmap). With
/// `unpinned-move` on, the same moves go through on busy QPs and break
/// the traffic: the test sees a move of a QP with work in flight.
#[test]
fn moves_of_a_qp_with_work_in_flight_are_refused() {
    let runs = WIDTHS
        .iter()
        .map(|&w| (w, "ideal", ConnOpts::default()))
        .chain([(64, "spray-8", mp())]);
    for (w, fabric, o) in runs {
        let what = format!("DATA_W={w} {fabric} {:?}", o.qp_type);
        for how in [Move::Save, Move::Evict] {
            let t = moves_during_traffic(w, 51, fabric, &o, how, false)
                .unwrap_or_else(|e| panic!("{what} {how:?}: {e}"));
            eprintln!("{what} {how:?}: {t:?}");
            assert!(
                t.refused[0] > 0 && t.refused[1] > 0,
                "{what} {how:?}: no move was refused on one side: {t:?}"
            );
        }
    }
    let o = ConnOpts::default();
    for how in [Move::Save, Move::Evict] {
        let broke =
            (51..55).find_map(|seed| moves_during_traffic(64, seed, "ideal", &o, how, true).err());
        let e = broke.unwrap_or_else(|| {
            panic!("unpinned-move: {how:?}s of busy QPs left seeds 51..55 intact")
        });
        eprintln!("unpinned-move caught ({how:?}): {e}");
    }
}

/// The ring's part of the pin, on its own: a sender whose packets are all
/// out and whose ACKs cannot come (its peer's QP is in RESET and drops
/// them) has nothing in the executor, the queue manager or the completer,
/// only its outstanding ring. A move of its slot must be refused until the
/// ring drains; here it never does within the test (the local ACK timeout
/// is 32,768 cycles away). (`moves_of_a_qp_with_work_in_flight_are_refused`
/// cannot see a missing ring pin: the ring survives a round trip.)
#[test]
fn a_sender_waiting_for_acks_is_pinned_by_its_ring() {
    for w in WIDTHS {
        let p = pair(w, 53, "ideal");
        let (mut a, mut b) = connect(&p, &ConnOpts::default());
        b.qp.modify(
            &QpAttr {
                qp_state: QpState::Reset,
                ..Default::default()
            },
            QpAttrMask::STATE,
        )
        .unwrap();
        let nic = p.a.nic();
        nic.qp_ctx_table_open(TABLE).unwrap();
        let q = a.qp.slot();
        let before = p.a.query_port_counters().unwrap().tx_frames;
        for m in 0..2u64 {
            post_write(&mut a, &b, m, 0, 0, 4096);
        }
        // (every packet out, long before the timeout)
        p.world.run(5_000);
        let sent = p.a.query_port_counters().unwrap().tx_frames - before;
        assert!(sent >= 2, "DATA_W={w}: {sent} frames sent");
        for what in ["save", "load"] {
            let r = match what {
                "save" => nic.qp_ctx_save(q, 0),
                _ => nic.qp_ctx_load(q, 0),
            };
            match r {
                Err(e) if e.is_pinned() => {}
                r => panic!("DATA_W={w}: a {what} of a sender with WQEs in flight: {r:?}"),
            }
        }
        let c = nic.qp_ctx_counters().unwrap();
        assert_eq!((c.fills, c.writebacks), (0, 0), "DATA_W={w}: nothing moved");
        let mut got = [WorkCompletion::default(); 2];
        assert_eq!(a.cq.poll(&mut got).unwrap(), 0, "DATA_W={w}: no ACK came");
    }
}

/// The responder's owed ACK, on its own: a WRITE ONLY without AckReq
/// (sent by the test as the peer would) is placed and leaves an ACK owed,
/// which the ACK timer sends within ACK_TIMER cycles; until then the
/// slot's timer scan will act on it, so a move of the slot must be
/// refused. Once the ACK went out, the slot moves.
#[test]
fn a_receiver_owing_an_ack_is_pinned_until_it_went_out() {
    for w in WIDTHS {
        let p = pair(w, 55, "ideal");
        let (_a, b) = connect(&p, &ConnOpts::default());
        let nic = p.b.nic();
        nic.qp_ctx_table_open(TABLE).unwrap();
        let q = b.qp.slot();
        let write = write_only_no_ack_req(&b, EndOpts::default().psn_a);
        let acks_before = p.a.query_port_counters().unwrap().rx_frames;
        assert!(p
            .world
            .inject_frame(1, &frame_sport(0, 0xc000, write), false));
        // placed, its ACK owed (less than ACK_TIMER / 2 = 1,024 cycles)
        p.world.run(600);
        match nic.qp_ctx_save(q, 0) {
            Err(e) if e.is_pinned() => {}
            r => panic!("DATA_W={w}: a save with an ACK owed: {r:?}"),
        }
        assert_eq!(
            p.a.query_port_counters().unwrap().rx_frames,
            acks_before,
            "DATA_W={w}: the ACK went out before the save was tried"
        );
        p.world.run(5_000);
        assert!(
            p.a.query_port_counters().unwrap().rx_frames > acks_before,
            "DATA_W={w}: the owed ACK never went out"
        );
        nic.qp_ctx_save(q, 0)
            .unwrap_or_else(|e| panic!("DATA_W={w}: a save once the ACK went out: {e}"));
        let mut got = [0u8; 64];
        b.buf.read(0, &mut got);
        assert_eq!(got, [0x5a; 64], "DATA_W={w}: the WRITE's bytes");
    }
}

/// The mp responder's deferred completions, on their own: a WRITE_WITH_IMM
/// one PSN beyond the point is placed and its completion parked (in
/// `mp_deferred`'s slots, which name the QP outside its records); once the
/// message at the point arrives, the completion is due but owed (the flag
/// OW) while no receive WQE is posted. A move of the slot must be refused
/// in both cases (the owed ACKs long gone), and made once the completion
/// is written.
#[test]
fn an_mp_receiver_with_a_parked_or_owed_completion_is_pinned() {
    use rnic_wire::opcode;
    for w in WIDTHS {
        let p = pair(w, 57, "ideal");
        let (_a, mut b) = connect(&p, &mp());
        let nic = p.b.nic();
        nic.qp_ctx_table_open(TABLE).unwrap();
        let q = b.qp.slot();
        let point = b.qp.status().unwrap().rq_psn_now;
        let packet = |psn: u32, op: u8, off: u64| {
            frame_sport(
                0,
                0xc000,
                mp_write(&b, psn, op, off, 0xabcd, vec![0x33; 64]),
            )
        };
        let refused = |what: &str| match nic.qp_ctx_save(q, 0) {
            Err(e) if e.is_pinned() => {}
            r => panic!("DATA_W={w}: a save with a completion {what}: {r:?}"),
        };
        // (each wait outlasts the ACK timer: the ACKs owed have gone out)
        p.world.send_frame(
            0,
            &packet(point + 1, opcode::MP_WRITE_LAST_WITH_IMMEDIATE, 64),
        );
        p.world.run(5_000);
        refused("parked");
        p.world
            .send_frame(0, &packet(point, opcode::MP_WRITE_LAST, 0));
        p.world.run(5_000);
        assert_eq!(
            b.qp.status().unwrap().rq_psn_now,
            (point + 2) & 0xff_ffff,
            "DATA_W={w}: the point passed both"
        );
        refused("owed");
        b.qp.post_recv(&RecvWr {
            wr_id: 1,
            sg_list: &[],
        })
        .unwrap();
        let wcs = wait_wc(p.b.device(), &b.cq, 1, 100_000);
        assert_eq!(wcs.len(), 1, "DATA_W={w}: the owed completion never came");
        p.world.run(5_000);
        nic.qp_ctx_save(q, 0)
            .unwrap_or_else(|e| panic!("DATA_W={w}: a save once it completed: {e}"));
    }
}
