//! The record window (BAR0 `qp_block.qp_rec_*`, DESIGN.md section 6, step
//! 1): a QP's whole state read and written as 64-bit words, the path the QP
//! context cache will move QPs through. A live QP's record saved, zeroed
//! and restored must leave the QP working; restored without its requester's
//! words it must not; and the window must never reach beyond the build's
//! QPs or words.

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
