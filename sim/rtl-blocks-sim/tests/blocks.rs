//! The blocks against their benches (src/skid.rs, src/arb.rs,
//! src/icrc.rs, src/ram.rs, src/copies.rs, src/rec.rs, src/rec_map.rs,
//! src/rec_port_mux.rs, src/mr.rs,
//! src/tag_match.rs,
//! src/onehot_mux.rs,
//! src/alloc.rs, src/mpwin.rs, src/rcmsg.rs, src/mpdef.rs,
//! src/async_fifo.rs, src/tlp_size.rs, src/sweep.rs, src/read_reply.rs,
//! src/read_track.rs, src/atomic_replay.rs, src/qp_cache.rs, src/qpc_fill.rs, src/qp_ctx_cache.rs,
//! src/qp_dir.rs): every run checks every beat in and out; the tests choose
//! configurations, seeds and traffic and add what is specific to them.
//! `RTL_BLOCKS_MUTATION=<name> cargo test --release -p rtl-blocks-sim`
//! builds the blocks with a planted bug: some test here must then fail
//! (README.md has which).

use rtl_blocks_sim::alloc::{self, AllocCfg};
use rtl_blocks_sim::arb::{self, ArbCfg, ArbReport};
use rtl_blocks_sim::async_fifo::{self, AfifoCfg, AfifoReport, ResetSide, CLOCKS};
use rtl_blocks_sim::atomic_replay::{self, ArCfg};
use rtl_blocks_sim::completer::{self, CmpCfg};
use rtl_blocks_sim::copies;
use rtl_blocks_sim::icrc;
use rtl_blocks_sim::mpdef::{self, MpdCfg};
use rtl_blocks_sim::mpwin::{self, MpwCfg};
use rtl_blocks_sim::mr::{self, MrCfg};
use rtl_blocks_sim::onehot_mux;
use rtl_blocks_sim::path;
use rtl_blocks_sim::qp_cache::{self, QcCfg};
use rtl_blocks_sim::qp_ctx_cache::{self, QccCfg};
use rtl_blocks_sim::qp_dir::{self, QdCfg};
use rtl_blocks_sim::qpc_fill::{self, QfCfg};
use rtl_blocks_sim::qpn_doorbell::{self, QdbCfg};
use rtl_blocks_sim::ram::{self, RamCfg};
use rtl_blocks_sim::rcmsg::{self, RcmCfg};
use rtl_blocks_sim::read_reply::{self, RrCfg};
use rtl_blocks_sim::read_track::{self, RtCfg};
use rtl_blocks_sim::rec::{self, RecCfg};
use rtl_blocks_sim::rec_map::{self, RmapCfg};
use rtl_blocks_sim::rec_port_mux::{self, RpmCfg};
use rtl_blocks_sim::skid::{self, SkidCfg, SkidReport};
use rtl_blocks_sim::skip;
use rtl_blocks_sim::sweep;
use rtl_blocks_sim::tag_match;
use rtl_blocks_sim::tlp_size::{self, TlpCfg, TlpReport};
use rtl_blocks_sim::RunCfg;

const REGS: [&str; 2] = ["reg_w8", "reg_w72"];
const ARBS: [&str; 4] = [
    "arb_p2_fixed",
    "arb_p3_rr",
    "arb_p4_fixed_reg",
    "arb_p5_rr_reg",
];
const SUBSTS: [&str; 4] = ["subst_w64", "subst_w128", "subst_w256", "subst_w512"];

fn skid_go(c: &SkidCfg) -> SkidReport {
    skid::run(c).unwrap_or_else(|e| panic!("{} seed {}: {e}", c.model, c.seed))
}

fn arb_go(c: &ArbCfg) -> ArbReport {
    arb::run(c).unwrap_or_else(|e| panic!("{} seed {}: {e}", c.model, c.seed))
}

#[test]
fn skid_random_valid_and_ready() {
    if skip() {
        return;
    }
    for m in REGS {
        for (seed, pv, pr) in [(1, 0.7, 0.7), (2, 0.3, 0.9), (3, 0.95, 0.4), (4, 0.5, 0.5)] {
            let mut c = SkidCfg::new(m, seed);
            c.p_valid = pv;
            c.p_ready = pr;
            let r = skid_go(&c);
            assert_eq!(r.beats, c.beats);
            assert_eq!(r.max_inside, 2, "{m}: the skid register was never used");
        }
    }
}

#[test]
fn skid_full_rate() {
    if skip() {
        return;
    }
    for m in REGS {
        // always ready: one beat per cycle from the first on
        let mut c = SkidCfg::new(m, 11);
        c.saturate = true;
        c.p_ready = 1.0;
        let r = skid_go(&c);
        assert!(
            r.cycles <= c.beats as u64 + 3,
            "{m}: {} cycles for {} beats",
            r.cycles,
            c.beats
        );
        // a stalling sink: the output stays valid throughout
        for (seed, pr) in [(12, 0.5), (13, 0.85), (14, 0.15)] {
            let mut c = SkidCfg::new(m, seed);
            c.saturate = true;
            c.p_ready = pr;
            skid_go(&c);
        }
    }
}

/// Random packets from every port, at three mixes of offer and stall.
fn arb_random_traffic(models: [&'static str; 2]) {
    for m in models {
        for (seed, ps, pb, pr) in [(1, 0.3, 0.8, 0.7), (2, 0.1, 0.5, 0.9), (3, 0.6, 0.95, 0.3)] {
            let mut c = ArbCfg::new(m, seed);
            c.p_start = ps;
            c.p_beat = pb;
            c.p_ready = pr;
            arb_go(&c);
        }
    }
}

#[test]
fn arb_fixed_priority_random_traffic() {
    if skip() {
        return;
    }
    arb_random_traffic(["arb_p2_fixed", "arb_p4_fixed_reg"]);
}

#[test]
fn arb_round_robin_random_traffic() {
    if skip() {
        return;
    }
    arb_random_traffic(["arb_p3_rr", "arb_p5_rr_reg"]);
}

#[test]
fn arb_one_beat_and_long_packets() {
    if skip() {
        return;
    }
    for m in ARBS {
        // descriptors: one beat each, as the core's descriptor muxes carry
        let mut c = ArbCfg::new(m, 21);
        c.max_len = 1;
        c.p_start = 0.5;
        arb_go(&c);
        // long packets into a slow sink: long holds, many stalls mid-packet
        let mut c = ArbCfg::new(m, 22);
        c.max_len = 16;
        c.packets = 60;
        c.p_ready = 0.25;
        arb_go(&c);
    }
}

#[test]
fn arb_full_rate_when_every_port_offers() {
    if skip() {
        return;
    }
    for m in ARBS {
        for (seed, pr) in [(31, 1.0), (32, 0.6)] {
            let mut c = ArbCfg::new(m, seed);
            c.saturate = true;
            c.p_ready = pr;
            c.packets = 100;
            let r = arb_go(&c);
            if pr == 1.0 {
                let beats = r.beats as u64;
                assert!(
                    r.cycles <= beats + 3,
                    "{m}: {} cycles for {beats} beats",
                    r.cycles
                );
            }
        }
    }
}

#[test]
fn arb_round_robin_takes_turns_and_fixed_priority_serves_in_order() {
    if skip() {
        return;
    }
    for m in ARBS {
        let mut c = ArbCfg::new(m, 41);
        c.saturate = true;
        c.packets = 40;
        c.p_ready = 0.8;
        let r = arb_go(&c);
        let ports = r.choices.iter().max().unwrap() + 1;
        let rr = m.contains("_rr");
        let expect: Vec<u32> = if rr {
            // every port offers all the time: strict turns
            (0..40 * ports).map(|k| k % ports).collect()
        } else {
            // port 0 until it has no more, then port 1, ...
            (0..ports)
                .flat_map(|p| std::iter::repeat_n(p, 40))
                .collect()
        };
        assert_eq!(r.choices, expect, "{m}: order of choices");
        if rr {
            assert_eq!(r.max_wait, ports - 1, "{m}: longest wait");
        }
    }
}

/// Sources that sometimes withdraw a first beat before it is taken (the
/// responder's payload write does when the MR table changes under it): the
/// choice is given up and made again, nobody waits for the withdrawn offer;
/// pauses inside packets still hold it.
#[test]
fn arb_withdrawn_offer_gives_the_choice_up() {
    if skip() {
        return;
    }
    for m in ARBS {
        for (seed, max_len, pw) in [(61, 1, 0.3), (62, 6, 0.2)] {
            let mut c = ArbCfg::new(m, seed);
            c.max_len = max_len;
            c.p_withdraw = pw;
            c.p_start = 0.5;
            c.p_ready = 0.4;
            c.packets = 200;
            let r = arb_go(&c);
            assert!(
                r.released > 10,
                "{m}: only {} withdrawn choices",
                r.released
            );
        }
    }
}

#[test]
fn icrc_subst_at_every_width() {
    if skip() {
        return;
    }
    for (k, m) in SUBSTS.iter().enumerate() {
        let r = icrc::run(m, 50 + k as u64, 300).unwrap_or_else(|e| panic!("{m}: {e}"));
        assert_eq!(r.frames, 300);
    }
}

/// The bench's own reference: the Ethernet pattern stands for the 8 bytes
/// of 0xFF, and the CRC routine is the Ethernet CRC-32.
#[test]
fn icrc_reference_is_the_definition() {
    assert_eq!(!icrc::crc32(!0, b"123456789"), 0xCBF4_3926);
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for _ in 0..100 {
        let len = rng.gen_range(58..200);
        let f: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert_eq!(
            icrc::crc32(!0, &icrc::reference(&f)),
            icrc::icrc_by_definition(&f)
        );
    }
}

/// The ram_sdp and ram_sdp_copies runs of model `m`: three mixes of writes
/// and same-cycle reads.
fn ram_mixes(m: &'static str) -> impl Iterator<Item = RamCfg> {
    [(1, 0.5, 0.25), (2, 0.9, 0.5), (3, 0.1, 0.05)]
        .into_iter()
        .map(move |(seed, pw, ps)| {
            let mut c = RamCfg::new(m, seed);
            c.p_write = pw;
            c.p_same = ps;
            c
        })
}

#[test]
fn ram_reads_a_cycle_later_and_forwards_a_write_of_the_same_address() {
    if skip() {
        return;
    }
    for m in ["ram_w8_d16", "ram_w72_d200", "ram_w170_d256"] {
        for c in ram_mixes(m) {
            let r = ram::run(&c).unwrap_or_else(|e| panic!("{m} seed {}: {e}", c.seed));
            assert_eq!(r.cycles, c.cycles);
            assert!(
                r.same_cycle > 10,
                "{m} seed {}: too few same-cycle reads: {r:?}",
                c.seed
            );
        }
    }
}

#[test]
fn ram_rec_record_port_reads_whole_records_and_writes_each_once() {
    if skip() {
        return;
    }
    // (seed, module writes, record writes, same-cycle reads): even, module
    // writes mostly (record writes wait long), record writes mostly
    let mixes = [(1, 0.5, 0.3, 0.25), (2, 0.9, 0.5, 0.5), (3, 0.1, 0.8, 0.1)];
    for m in ["rec_w64_d16", "rec_w100_d50"] {
        for (seed, pw, pr, ps) in mixes {
            let mut c = RecCfg::new(m, seed);
            c.p_write = pw;
            c.p_rec = pr;
            c.p_same = ps;
            let r = rec::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert!(r.cycles > c.cycles);
            assert!(
                r.same_cycle.iter().all(|&n| n > 10),
                "{m} seed {seed}: too few same-cycle reads on some port: {r:?}"
            );
            assert!(
                r.rec_writes > 100 && r.rec_waited > 10 && r.collisions > 10,
                "{m} seed {seed}: too few record writes, waits or collisions: {r:?}"
            );
        }
    }
}

#[test]
fn rec_map_moves_each_word_and_writes_each_record_once() {
    if skip() {
        return;
    }
    // (seed, rec_wr_ready, gaps between words): records mostly ready and
    // words back to back; writes waiting long; both with gaps
    let mixes = [(1, 0.9, 0.0), (2, 0.2, 0.0), (3, 0.5, 0.4)];
    for m in ["rmap_r5_w8", "rmap_r4_w16"] {
        for (seed, pr, pg) in mixes {
            let mut c = RmapCfg::new(m, seed);
            c.p_ready = pr;
            c.p_gap = pg;
            let r = rec_map::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert_eq!(r.cycles, c.cycles);
            assert!(
                r.copies_in > 100 && r.copies_out > 100 && r.pad_reads > 100,
                "{m} seed {seed}: too few copies or padding reads: {r:?}"
            );
            assert!(
                r.rec_writes > 500 && r.rec_waited > 50 && r.resets > 5,
                "{m} seed {seed}: too few record writes, waits or resets: {r:?}"
            );
        }
    }
}

#[test]
fn rec_port_mux_routes_each_word_to_its_owner() {
    if skip() {
        return;
    }
    // (seed, offers of reads and writes, the ports' readiness): busy
    // traffic on ready ports; offers that wait long; sparse offers
    let mixes = [(1, 0.9, 0.9, 0.9), (2, 0.7, 0.7, 0.25), (3, 0.3, 0.3, 0.6)];
    for m in ["rpm_core", "rpm_n3_w3", "rpm_n1_w1"] {
        for (seed, pr, pw, pready) in mixes {
            let mut c = RpmCfg::new(m, seed);
            c.p_rd = pr;
            c.p_wr = pw;
            c.p_ready = pready;
            let r = rec_port_mux::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e:?}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert!(r.cycles > c.cycles);
            assert!(
                r.reads.iter().all(|&k| k > 500) && r.writes.iter().all(|&k| k > 500),
                "{m} seed {seed}: too few reads or writes of some port: {r:?}"
            );
            assert!(
                r.reads_of_written > 1000
                    && r.edge_reads > 1000
                    && r.rd_waits > 500
                    && r.wr_waits > 500
                    && r.same_cycle > 10
                    && r.resets > 5
                    && r.dropped_at_reset > 0,
                "{m} seed {seed}: the stimulus missed a case: {r:?}"
            );
        }
    }
}

#[test]
fn ram_copies_read_their_slices_a_cycle_later_and_forward_writes() {
    if skip() {
        return;
    }
    for m in ["copies_w64_d16", "copies_w43_d200"] {
        for c in ram_mixes(m) {
            let r = copies::run(&c).unwrap_or_else(|e| panic!("{m} seed {}: {e}", c.seed));
            assert_eq!(r.cycles, c.cycles);
            assert!(
                r.same_cycle.iter().all(|&n| n > 10),
                "{m} seed {}: too few same-cycle reads on some port: {r:?}",
                c.seed
            );
        }
    }
}

#[test]
fn mr_table_grants_exactly_the_registered_ranges() {
    if skip() {
        return;
    }
    for m in ["mr_n8", "mr_n64"] {
        for (seed, pc) in [(1, 0.15), (2, 0.5), (3, 0.02)] {
            let mut c = MrCfg::new(m, seed);
            c.p_cmd = pc;
            let r = mr::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            assert_eq!(r.cycles, c.cycles);
            // the stimulus reached the edges it is written for
            assert!(
                r.granted > 1000
                    && r.refused_on_bounds > 1000
                    && r.exact_fit > 100
                    && r.past_2_64 > 1000
                    && r.cmd_errors > 10,
                "{m} seed {seed}: the stimulus missed the edges: {r:?}"
            );
        }
    }
}

/// `tag_match`: the directed cases and 5,000 random ones per seed.
#[test]
fn tag_match_finds_the_valid_entries_holding_the_key() {
    if skip() {
        return;
    }
    for (m, n) in [
        ("tag_n1_k1", 1),
        ("tag_n16_k4", 16),
        ("tag_n16_k10", 16),
        ("tag_n5_k7", 5),
    ] {
        for seed in 1..=2 {
            let r = tag_match::run(m, seed, 5_000).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            for (what, k) in [
                ("matches", r.matches),
                ("invalid entries holding the key", r.invalid_held),
                ("tags off in the top bit", r.top_off),
                ("tags off in the bottom bit", r.bottom_off),
            ] {
                assert!(k > 100, "{m} seed {seed}: too few {what}: {r:?}");
            }
            // one entry cannot match twice
            assert_eq!(r.multi > 0, n > 1, "{m} seed {seed}: {r:?}");
        }
    }
}

/// `onehot_mux`: the directed cases and 5,000 random ones per seed.
#[test]
fn onehot_mux_ors_the_selected_inputs() {
    if skip() {
        return;
    }
    for (m, n) in [
        ("ohm_n1_w1", 1),
        ("ohm_n4_w8", 4),
        ("ohm_n16_w24", 16),
        ("ohm_n5_w37", 5),
    ] {
        for seed in 1..=2 {
            let r = onehot_mux::run(m, seed, 5_000).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            for (what, k) in [
                ("one-hot selects", r.onehot),
                ("zero selects", r.zero),
                ("selects of the last input", r.last),
                ("outputs with the top bit set", r.top_set),
            ] {
                assert!(k > 100, "{m} seed {seed}: too few {what}: {r:?}");
            }
            // one input cannot be selected twice
            assert_eq!(r.multi > 0, n > 1, "{m} seed {seed}: {r:?}");
        }
    }
}

#[test]
fn alloc_hands_out_the_lowest_free_slot() {
    if skip() {
        return;
    }
    for (m, n) in [
        ("alloc_s1", 1),
        ("alloc_s3", 3),
        ("alloc_s8", 8),
        ("alloc_s16", 16),
        ("alloc_s32", 32),
    ] {
        for seed in 1..=3 {
            let mut c = AllocCfg::new(m, seed);
            // gives about as often as takes once most slots are out, so
            // the pool both empties and refills
            c.p_give = 0.5 / f64::from(n);
            let r = alloc::run(&c).unwrap_or_else(|e| panic!("{e}"));
            // the run reached what the checks are for
            assert!(r.takes > 100, "{m} seed {seed}: {r:?}");
            assert!(r.exhausted > 0, "{m} seed {seed}: never empty: {r:?}");
            assert!(r.take_and_give > 0, "{m} seed {seed}: {r:?}");
            assert!(r.resets > 0, "{m} seed {seed}: {r:?}");
        }
    }
}

#[test]
fn reset_sweep_zeroes_every_record_after_a_used_reset() {
    if skip() {
        return;
    }
    for m in ["sweep_d1", "sweep_d5", "sweep_d16"] {
        for seed in 1..=3 {
            let r = sweep::run(&RunCfg::new(m, seed)).unwrap_or_else(|e| panic!("{e}"));
            // the run reached every case the checks are for
            for (what, n) in [
                ("sweeps_done", r.sweeps_done),
                ("clean_resets", r.clean_resets),
                ("restarts", r.restarts),
                ("write_at_reset", r.write_at_reset),
            ] {
                assert!(n > 0, "{m} seed {seed}: no {what}: {r:?}");
            }
        }
    }
}

#[test]
fn mp_window_follows_the_transport_rules() {
    if skip() {
        return;
    }
    for m in ["mpw_w32", "mpw_w64", "mpw_w128_gap40"] {
        for seed in 1..=2 {
            let r = mpwin::run(&MpwCfg::new(m, seed)).unwrap_or_else(|e| panic!("{e}"));
            // the run reached every outcome the checks are for
            for (what, n) in [
                ("dup", r.dup),
                ("beyond", r.beyond),
                ("nak", r.nak),
                ("nak_more", r.nak_more),
                ("in_span", r.in_span),
                ("renak", r.renak),
                ("due", r.due),
                ("far", r.far),
                ("whole", r.whole),
            ] {
                assert!(n > 20, "{m} seed {seed}: {what} {n}: {r:?}");
            }
        }
    }
}

#[test]
fn rc_message_follows_the_opcode_and_length_rules() {
    if skip() {
        return;
    }
    for seed in 1..=4 {
        let r = rcmsg::run(&RcmCfg::new("rcm", seed)).unwrap_or_else(|e| panic!("{e}"));
        for (what, n) in [
            ("executed", r.executed),
            ("started", r.started),
            ("ended", r.ended),
            ("sequence", r.inv_sequence),
            ("length", r.inv_length),
            ("access", r.rem_access),
        ] {
            assert!(n > 20, "rcm seed {seed}: {what} {n}: {r:?}");
        }
    }
}

#[test]
fn mp_deferred_keeps_each_parked_completion_until_freed() {
    if skip() {
        return;
    }
    for m in ["mpd_q4_p2", "mpd_q16_p3", "mpd_q20_p8"] {
        for seed in 1..=2 {
            let r = mpdef::run(&MpdCfg::new(m, seed)).unwrap_or_else(|e| panic!("{e}"));
            for (what, n) in [
                ("parks", r.parks),
                ("dones", r.dones),
                ("drops", r.drops),
                ("full", r.full),
                ("QP full", r.qp_full),
                ("park and free", r.park_and_free),
            ] {
                assert!(n > 20, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            // several per QP (MP_WIMM > 1): parked out of PSN order too
            if m != "mpd_q4_p2" {
                assert!(r.out_of_order > 20, "{m} seed {seed}: {r:?}");
            }
        }
    }
}

const AFIFOS: [&str; 3] = ["afifo_w40_a1", "afifo_w40_a3", "afifo_w72_a4"];

fn afifo_go(c: &AfifoCfg) -> AfifoReport {
    async_fifo::run(c).unwrap_or_else(|e| panic!("{} seed {}: {e}", c.model, c.seed))
}

/// Random offers and stalls at every clock pair: every beat once, in
/// order; the memory never overrun; the pointers' two flops.
#[test]
fn afifo_random_traffic_at_every_clock_ratio() {
    if skip() {
        return;
    }
    for (n, m) in AFIFOS.iter().enumerate() {
        let depth = [2, 8, 16][n];
        for (k, clocks) in CLOCKS.into_iter().enumerate() {
            for (seed, pv, pr) in [(1, 0.7, 0.7), (2, 0.9, 0.2), (3, 0.3, 0.95)] {
                let mut c = AfifoCfg::new(m, seed + 10 * k as u64, clocks);
                c.p_valid = pv;
                c.p_ready = pr;
                let r = afifo_go(&c);
                assert_eq!(r.beats, c.beats, "{m} {}", clocks.name);
                assert!(r.min_read_edges >= 3 && r.min_write_edges >= 2);
                if pr < 0.5 {
                    // a slow sink fills the memory and the output register
                    assert_eq!(r.max_inside, depth + 1, "{m} {}: never full", clocks.name);
                }
            }
        }
    }
}

/// A source that always has a beat into a sink always ready: close to one
/// beat per edge of the slower clock.
#[test]
fn afifo_full_rate() {
    if skip() {
        return;
    }
    for (n, m) in AFIFOS.iter().enumerate() {
        let depth = [2.0, 8.0, 16.0][n];
        for (k, clocks) in CLOCKS.into_iter().enumerate() {
            let mut c = AfifoCfg::new(m, 40 + k as u64, clocks);
            c.saturate = true;
            c.p_ready = 1.0;
            let r = afifo_go(&c);
            let rate = r.rate_beats as f64 / r.rate_slow_edges as f64;
            // An entry is busy from its write until the read pointer that
            // frees it has crossed back: three read-clock edges to the
            // load (two sync flops, then the output register), then two
            // write-clock flops and the write edge; at most 4 periods of
            // each clock with the edges' misalignment. So DEPTH entries
            // carry at least DEPTH beats per 4 (Ts + Tm), and no more than
            // one per slower edge: at ADDR_W 3 and 4 every clock pair here
            // allows the full rate (4 (Ts + Tm) <= 8 slow periods); the
            // two-entry FIFO is bound by its round trip. 80 % of that
            // bound leaves a margin for the ends of the window.
            let round_trip = 4.0 * (clocks.s_period + clocks.m_period) as f64;
            let bound = (depth * clocks.slow() as f64 / round_trip).min(1.0);
            assert!(
                rate >= 0.8 * bound,
                "{m} {}: {} beats in {} slow edges ({rate:.3}), want at least 0.8 x {bound:.3}",
                clocks.name,
                r.rate_beats,
                r.rate_slow_edges
            );
        }
    }
}

/// Resets in the middle of the stream, driving both resets (held three to
/// six edges of the slower clock, as the block's header asks) or one
/// side's (held four to seven): afterwards the FIFO is empty (no beat
/// written before ever comes out) and a fresh stream passes.
#[test]
fn afifo_reset_mid_stream_empties_it() {
    if skip() {
        return;
    }
    for m in AFIFOS {
        for (k, clocks) in CLOCKS.into_iter().enumerate() {
            for (j, side) in [ResetSide::Both, ResetSide::Write, ResetSide::Read]
                .into_iter()
                .enumerate()
            {
                let mut c = AfifoCfg::new(m, 60 + 10 * k as u64 + j as u64, clocks);
                c.p_ready = 0.4;
                c.beats = 1500;
                c.resets = 5;
                c.reset_side = side;
                if side != ResetSide::Both {
                    // one side alone: the other learns of it through two
                    // of its flops and clears at its third edge, all
                    // before the side reset directly comes out: 3 periods
                    // of the other clock and one of its own
                    c.hold = (4, 7);
                }
                let r = afifo_go(&c);
                assert_eq!(r.resets, 5, "{m} {} {side:?}: {r:?}", clocks.name);
                assert!(
                    r.resets_not_empty >= 3 && r.lost > 0,
                    "{m} {} {side:?}: the resets found the FIFO empty: {r:?}",
                    clocks.name
                );
                assert!(
                    r.beats + r.lost == c.beats,
                    "{m} {} {side:?}: {r:?}",
                    clocks.name
                );
            }
        }
    }
}

const TLPUPS: [&str; 2] = ["tlpup_w64", "tlpup_w128"];
const TLPDOWNS: [&str; 2] = ["tlpdown_w64", "tlpdown_w128"];

fn tlp_go(c: &TlpCfg) -> TlpReport {
    tlp_size::run(c).unwrap_or_else(|e| panic!("{} seed {}: {e}", c.model, c.seed))
}

/// Random TLPs, gaps and stalls through both sizers: the TLPs, their
/// headers on every beat, the keep.
#[test]
fn tlp_upsize_and_downsize_random_traffic() {
    if skip() {
        return;
    }
    for m in TLPUPS.into_iter().chain(TLPDOWNS) {
        for (seed, pv, pr) in [(1, 0.7, 0.7), (2, 0.95, 0.3), (3, 0.3, 0.95), (4, 1.0, 1.0)] {
            let mut c = TlpCfg::new(m, seed);
            c.p_valid = pv;
            c.p_ready = pr;
            let r = tlp_go(&c);
            assert_eq!(r.tlps, c.tlps);
            assert!(
                r.low_only > 20 && r.junk_headers > 20,
                "{m} seed {seed}: {r:?}"
            );
        }
    }
}

/// A source that always has a beat into a sink always ready: tlp_upsize
/// takes an input beat every cycle, tlp_downsize sends an output beat
/// every cycle.
#[test]
fn tlp_upsize_and_downsize_full_rate() {
    if skip() {
        return;
    }
    for m in TLPUPS.into_iter().chain(TLPDOWNS) {
        let mut c = TlpCfg::new(m, 11);
        c.saturate = true;
        c.p_ready = 1.0;
        let r = tlp_go(&c);
        if m.starts_with("tlpup") {
            assert_eq!(r.refused, 0, "{m}: {r:?}");
            assert!(r.cycles <= r.in_beats + 3, "{m}: {r:?}");
        } else {
            assert_eq!(r.bubbles, 0, "{m}: {r:?}");
            assert!(r.cycles <= r.out_beats + 3, "{m}: {r:?}");
        }
        // a stalling sink: still every TLP, intact
        let mut c = TlpCfg::new(m, 12);
        c.saturate = true;
        c.p_ready = 0.5;
        tlp_go(&c);
    }
}

/// The ACK completer against the IB rules: every CQE request, drop,
/// retry and error, and every QP's records after each round.
#[test]
fn completer_retires_retries_and_flushes_as_the_rules_say() {
    if skip() {
        return;
    }
    // (seed mod 4 is the run's path health threshold: 1, 2, 3, 0 = off)
    for m in ["cmp_q2", "cmp_q3"] {
        for seed in 1..=4 {
            let r = completer::run(&CmpCfg::new(m, seed)).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            for (what, n) in [
                ("ACKs", r.acks),
                ("drops", r.dropped),
                ("sequence NAKs", r.seq_naks),
                ("RNR NAKs", r.rnr_naks),
                ("timeouts", r.timeouts),
                ("errors", r.errors),
                ("CQEs", r.cqes),
                ("flushed", r.flushed),
                ("lost", r.lost),
                ("pending statuses", r.pending_status),
                ("timed packets settled", r.timed),
            ] {
                assert!(n > 0, "{m} seed {seed}: no {what}: {r:?}");
            }
        }
    }
}

/// `path_pick`: every base, spray log and avoid mask.
#[test]
fn path_pick_every_input() {
    if skip() {
        return;
    }
    let r = path::run_pick("path_pick").unwrap_or_else(|e| panic!("{e}"));
    eprintln!("path_pick: {r:?}");
    assert_eq!(r.cases, 7 * 256 * 64);
    assert!(r.moved > 0);
}

/// `path_health`: random records and events against the rules, each case
/// at a threshold drawn from 0 (off) to 3.
#[test]
fn path_health_takes_out_and_probes() {
    if skip() {
        return;
    }
    for m in ["path_health"] {
        for seed in 1..=4 {
            let r = path::run_health(m, seed, 20_000).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            for (what, n) in [
                ("take-outs", r.takeouts),
                ("capped take-outs", r.capped),
                ("comebacks", r.comebacks),
                ("failed probes", r.failed_probes),
                ("blames in a new epoch", r.new_epoch),
            ] {
                assert!(n > 0, "{m} seed {seed}: no {what}: {r:?}");
            }
        }
    }
}

/// `read_reply`: random READ jobs through a DMA engine and a sink of
/// random readiness and delays, every packet, read and slot against the
/// contract; a few resets with jobs in flight.
#[test]
fn read_reply_sends_every_job_in_order() {
    if skip() {
        return;
    }
    for m in ["rr_j2_s2", "rr_j4_s4", "rr_j8_s8"] {
        for seed in 1..=3 {
            let c = RrCfg::new(m, seed);
            let r = read_reply::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert!(r.jobs >= c.jobs, "{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("ONLY", r.only),
                ("FIRST", r.first),
                ("MIDDLE", r.middle),
                ("LAST", r.last),
                ("zero-length jobs", r.zero_len),
                ("multiples of the PMTU", r.exact),
                ("PSN wraps", r.psn_wraps),
                ("NAKs", r.naks),
                ("ACK jobs", r.acks),
                ("ACK jobs with a length", r.acks_with_len),
                ("ACK jobs with a syndrome other than 0x1F", r.acks_not_1f),
                ("ACK jobs behind a READ job's packets", r.acks_behind_reads),
                ("cycles with the ring full", r.ring_full),
                ("cycles with every slot held", r.slots_full),
                ("reads ahead of an earlier job's packets", r.overlap),
                ("last packets waiting", r.last_waits),
                ("idle cycles", r.idle),
            ] {
                assert!(n > 5, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert_eq!(r.resets, c.resets, "{m} seed {seed}: {r:?}");
            // (the atomic inputs carried junk: nothing executed)
            assert_eq!(r.atomics + r.replays, 0, "{m} seed {seed}: {r:?}");
        }
    }
}

/// `read_reply` with ATOMIC_EN: READ, ACK and atomic jobs (CMP_SWAP,
/// FETCH_ADD, replays) on a few words of a host memory the bench keeps;
/// the original value snooped from the read engine's RAM writes in pieces,
/// the write-back through the staging RAM and a write descriptor, the
/// record, the ATOMIC ACKNOWLEDGE after the write-back's status, nothing
/// issued while an atomic runs; at the RAMs' word of 64 and of 256 bits.
#[test]
fn read_reply_executes_atomics_one_at_a_time() {
    if skip() {
        return;
    }
    for m in ["rr_atom_w64", "rr_atom_w256"] {
        for seed in 1..=3 {
            let c = RrCfg::new(m, seed);
            let r = read_reply::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert!(r.jobs >= c.jobs, "{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("ONLY", r.only),
                ("FIRST", r.first),
                ("LAST", r.last),
                ("NAKs of READs", r.naks - r.atomic_naks),
                ("ACK jobs", r.acks),
                ("atomics executed", r.atomics),
                ("CMP_SWAPs whose compare held", r.cmp_hits),
                ("CMP_SWAPs whose compare failed", r.cmp_misses),
                ("FETCH_ADDs", r.fetch_adds),
                ("FETCH_ADDs wrapping past 2^64", r.add_wraps),
                ("FETCH_ADDs carrying into bit 32", r.add_carry32),
                ("atomics on the word the atomic before wrote", r.chained),
                ("replays", r.replays),
                ("atomics whose read failed", r.atomic_naks),
                ("atomics' values written in pieces", r.split_snoops),
                (
                    "atomics' last pieces in their status's cycle",
                    r.snoop_at_status,
                ),
                ("READ reads held back by an atomic", r.held_back),
                ("atomics held back by an atomic", r.atomic_behind_atomic),
                ("cycles a staging RAM write waited", r.ram_waits),
                ("cycles a write descriptor waited", r.wr_waits),
                ("cycles with the ring full", r.ring_full),
                ("cycles with every slot held", r.slots_full),
                ("idle cycles", r.idle),
            ] {
                assert!(n > 5, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert_eq!(r.resets, c.resets, "{m} seed {seed}: {r:?}");
            assert_eq!(r.resets_in_atomic, c.resets, "{m} seed {seed}: {r:?}");
        }
    }
}

/// `read_track`: a requester's READs, a responder's lookups, placements
/// and asks, a completer's frees and QP loads over a few QPs, every lookup
/// answer, `alloc_ready` and `q_busy` against a model of the table.
#[test]
fn read_track_finds_places_and_frees_the_reads_in_flight() {
    if skip() {
        return;
    }
    for m in ["rt_q4_n4", "rt_q2_n3"] {
        for seed in 1..=4 {
            let r = read_track::run(&RtCfg::new(m, seed)).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("allocations", r.allocs),
                ("allocations refused", r.alloc_refused),
                ("cycles with the table full", r.full),
                ("spans across the wrap", r.wrapped),
                ("frees of placed READs", r.frees),
                ("frees of unplaced READs", r.flushes),
                ("bogus frees", r.bogus_frees),
                ("loads of a QP beside another's READs", r.drops),
                ("loads of a QP without READs", r.empty_drops),
                ("placements", r.advs),
                ("stale placements", r.stale_advs),
                ("READs placed", r.placed),
                ("placements of an asked READ", r.adv_of_asked),
                ("asks", r.asks),
                ("stale asks", r.stale_asks),
                ("hits", r.hits),
                ("hits at the last PSN", r.hits_at_last),
                ("misses just outside a span", r.misses_outside),
                ("hits across the wrap", r.hits_wrapped),
                ("hits of an asked READ", r.hits_asked),
                ("covered lookups", r.covs),
                ("several READs covered", r.cov_several),
                ("oldest covered at a lower index", r.cov_oldest_lower),
                ("covered READs asked", r.cov_asked),
                ("NAKs at the expected PSN", r.nak_at_next),
                ("covered from 2^23 away", r.cov_far_edge),
                ("q_busy with every READ placed", r.busy_placed),
            ] {
                assert!(n > 10, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert!(r.huge > 0, "{m} seed {seed}: {r:?}");
            assert_eq!(r.resets, 3, "{m} seed {seed}: {r:?}");
        }
    }
}

/// `atomic_replay`: records, clears, lookups and resets against a model
/// of the per-QP rings: each lookup's answer two cycles later, from the
/// records after its cycle, of several records of the PSN the newest, an
/// original value of 0 on a miss; a record written the cycle after it arrives,
/// a cycle later behind a clear; a QP's oldest record replaced after DEPTH
/// more of that QP (never by another QP's); a clear emptying its QP's ring
/// and dropping the record of its QP in its cycle or waiting; a reset
/// dropping the record arriving or waiting, keeping the records stored.
#[test]
fn atomic_replay_answers_from_the_newest_records() {
    if skip() {
        return;
    }
    for m in ["ar_n2_d2", "ar_n8_d2", "ar_n16_d4", "ar_n20_d8"] {
        let mut at_reset = [0usize; 4];
        for seed in 1..=3 {
            let c = ArCfg::new(m, seed);
            let r = atomic_replay::run(&c).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("records written", r.written),
                ("records written behind a clear", r.waited),
                (
                    "records dropped by a clear in their cycle",
                    r.dropped_at_clear,
                ),
                (
                    "records dropped by a clear while waiting",
                    r.dropped_waiting,
                ),
                ("records replacing a valid one", r.replacements),
                (
                    "records of a PSN a valid record of the QP held",
                    r.dup_records,
                ),
                ("hits", r.hits),
                ("hits where two or more valid records matched", r.hits_dup),
                (
                    "hits where an older match sat in a higher slot",
                    r.hits_dup_wrapped,
                ),
                ("hits of records with 2 x DEPTH written after", r.hits_old),
                (
                    "hits of the record written in the cycle",
                    r.hits_written_now,
                ),
                (
                    "hits of a waiting record in its write cycle",
                    r.hits_waited_now,
                ),
                ("misses", r.misses),
                ("misses of a PSN another QP holds", r.other_qp),
                ("misses one PSN off", r.psn_off),
                ("misses of replaced records", r.replaced),
                ("misses of cleared records", r.cleared),
                ("misses of dropped records", r.dropped),
                ("lookups of the record arriving", r.arriving),
                ("lookups of a record waiting", r.waiting),
                ("misses in the cycle of the QP's clear", r.at_clear),
                ("misses in the cycle after the QP's clear", r.after_clear),
            ] {
                assert!(n > 10, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            for (k, n) in r.hits_slot.iter().enumerate() {
                assert!(*n > 10, "{m} seed {seed}: hits in slot {k} {n}: {r:?}");
            }
            assert_eq!(r.resets, c.resets, "{m} seed {seed}: {r:?}");
            assert!(r.hits_after_reset > 5, "{m} seed {seed}: {r:?}");
            // an older record answers while a newer one of its PSN arrives
            // or waits
            assert!(r.hits_dup_arriving > 5, "{m} seed {seed}: {r:?}");
            for (a, n) in at_reset.iter_mut().zip([
                r.dropped_at_reset,
                r.written_at_reset,
                r.reset_misses,
                r.hits_after_reset,
            ]) {
                *a += n;
            }
        }
        for (what, n) in [
            "records dropped by a reset",
            "records written in a reset cycle",
            "answers a reset made misses",
            "hits of records from before a reset",
        ]
        .iter()
        .zip(at_reset)
        {
            assert!(n > 2, "{m}: {what} {n} over the seeds");
        }
    }
}

const QPC_MODELS: [&str; 5] = [
    "qpc_w1_s2",
    "qpc_w2_s4",
    "qpc_w4_s6",
    "qpc_w4_s4_q8",
    "qpc_alias",
];

/// `qp_cache`: random lookups of a working set far larger than the cache
/// and of a hot set, pins and unpins, fills answered late, out of order and
/// sometimes failing, invalidates, resets, against a model of the block
/// every cycle and the world's view of the ports: answers per QP in order
/// and once, pinned answers' slots, the fill commands' victims and
/// write-backs, invalidates refused only while pinned or filling,
/// back-pressure only with the queue full; drained at the end, the
/// counters against the fills.
#[test]
fn qp_cache_maps_qps_to_slots_and_answers_each_lookup_once_in_order() {
    if skip() {
        return;
    }
    for m in QPC_MODELS {
        for seed in 1..=3 {
            let c = QcCfg::new(m, seed);
            let r = qp_cache::run(&c).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("lookups", r.lookups),
                ("hits at the first pass", r.hits),
                ("answers after waiting in the queue", r.queued_answers),
                ("error answers (failed fills)", r.err_answers),
                ("fills", r.fills),
                ("failed fills", r.fills_failed),
                ("evictions", r.evictions),
                ("write-backs", r.writebacks),
                ("pinned-full stalls", r.stalls),
                ("lookups behind an older one of their QP", r.ordered),
                ("lookups joining a running fill", r.joined_fill),
                ("unpins", r.unpins),
                ("invalidates", r.invals),
                ("invalidates refused", r.inval_busy),
                ("invalidates that invalidated", r.inval_hit),
                ("cycles of back-pressure", r.backpressure),
            ] {
                // (a lookup meets its QP's running fill rarely with one way:
                // 3 to 8 in 20,000 cycles since fill commands come in the
                // order they are made)
                let least = if what.contains("joining") { 1 } else { 5 };
                assert!(n > least, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert_eq!(r.resets, c.resets, "{m} seed {seed}: {r:?}");
            assert!(r.resets_busy > 0 && r.sweeps > 0, "{m} seed {seed}: {r:?}");
            assert!(r.hwm as usize >= 2, "{m} seed {seed}: {r:?}");
            if m == "qpc_w2_s4" || m == "qpc_alias" {
                // PIN_W 2: a pin on a way pinned 3 times waits
                assert!(r.pin_full > 0, "{m} seed {seed}: {r:?}");
            }
        }
    }
}

/// `qp_cache`: misses never block hits. A hot set pinned in half the
/// sets, then misses in the other half whose fills are withheld (they
/// wait in the queue), then 200 lookups of the hot set back to back: each
/// answered 3 cycles after it was taken (the pipeline's latency), one a
/// cycle while at most MISSQ - 3 misses wait, two in three cycles with
/// MISSQ - 2, one in three with MISSQ - 1 (the queue keeps an entry for
/// each lookup in the pipeline); the misses still waiting at the end, then
/// answered once their fills come.
#[test]
fn qp_cache_hits_pass_while_misses_wait() {
    if skip() {
        return;
    }
    for m in QPC_MODELS {
        let mut c = QcCfg::new(m, 7);
        c.mode = qp_cache::Mode::HitsWhileMissesWait;
        c.resets = 0;
        let r = qp_cache::run(&c).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{m}: {r:?}");
        assert!(r.hot_hits >= 200, "{m}: {r:?}");
        assert_eq!(r.hot_latency_max, 3, "{m}: {r:?}");
        let missq = rtl_blocks_sim::CONFIGS
            .iter()
            .find(|x| x.name == m)
            .unwrap()
            .param("MISSQ") as usize;
        for &(waiting, rate) in &r.hot_rate {
            let want = if waiting + 3 <= missq {
                1000
            } else if waiting + 2 == missq {
                660
            } else {
                330
            };
            assert!(
                rate >= want,
                "{m}: {waiting} misses waiting, hot rate {rate}/1000: {r:?}"
            );
        }
    }
}

/// `qp_cache`: the random run with the world's checks alone (the ports:
/// per-QP answer order and ids, pinned answers' slots, error answers,
/// fill commands' victims and write-backs, invalidate results,
/// back-pressure, the drain and the counters), no comparison with the
/// model: what these catch does not depend on the model reading the
/// header as the RTL does.
#[test]
fn qp_cache_world_checks_alone() {
    if skip() {
        return;
    }
    for m in QPC_MODELS {
        for seed in 4..=5 {
            let mut c = QcCfg::new(m, seed);
            c.check_model = false;
            let r = qp_cache::run(&c).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert!(r.answers > 1000 && r.fills > 500, "{m} seed {seed}: {r:?}");
        }
    }
}

const QFL_MODELS: [&str; 2] = ["qfl_f1_r4", "qfl_f4_r16"];

/// `qpc_fill`: fill commands as qp_cache makes them (write-backs of dirty
/// and clean victims, QPs just written back missed again at once, QPs
/// beyond the table), a DMA model of random latencies with reads answered
/// out of order and 5 % failing, record RAMs of random latency, random
/// readiness, junk, resets with work in flight; every record moved, the
/// write-back before re-read order, the table bound, the record and buffer
/// ports' use, busy, the counters, each fill done once (src/qpc_fill.rs).
#[test]
fn qpc_fill_moves_records_and_orders_reads_after_write_backs() {
    if skip() {
        return;
    }
    for m in QFL_MODELS {
        for seed in 1..=3 {
            let c = QfCfg::new(m, seed);
            let r = qpc_fill::run(&c).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("fills", r.fills),
                ("fills done ok", r.fills_ok),
                ("read errors", r.read_errors),
                ("fills beyond the table", r.oob),
                ("write-backs", r.writebacks),
                ("saves", r.saves),
            ] {
                assert!(n > 5, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert_eq!(r.resets, c.resets, "{m} seed {seed}: {r:?}");
            assert!(r.resets_busy > 0 && r.peeks > 100, "{m} seed {seed}: {r:?}");
            if m == "qfl_f4_r16" {
                // (with one buffer a fill is taken only once the one
                // before, its write-back's status included, is over: no
                // hazard to meet)
                assert!(
                    r.hazards > 5
                        && r.hazard_waits > 5
                        && r.max_in_flight > 4
                        && r.reads_reordered > 1,
                    "{m} seed {seed}: {r:?}"
                );
            }
        }
    }
}

const QCC_MODELS: [&str; 2] = ["qcc_small", "qcc_real"];

/// `qp_ctx_cache`, the context cache end to end: lookups of a working set
/// far larger than the cache, pins, a core that modifies the pinned
/// records, a host table behind a DMA model of random latencies (reads out
/// of order, 4 % failing), record and buffer RAMs, invalidates; no state
/// lost: every answer's slot holds the QP's last record, every write-back
/// its last version, errors only for failed reads, every modified record
/// in a slot or home at rest and found again; the counters
/// (src/qp_ctx_cache.rs).
#[test]
fn qp_ctx_cache_loses_no_record_through_evictions_write_backs_and_refills() {
    if skip() {
        return;
    }
    for m in QCC_MODELS {
        for seed in 1..=3 {
            let c = QccCfg::new(m, seed);
            let r = qp_ctx_cache::run(&c).unwrap_or_else(|e| panic!("{e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // the run reached every case the checks are for
            for (what, n) in [
                ("lookups", r.lookups),
                ("pinned answers", r.pinned_answers),
                ("answers checked", r.checked_answers),
                ("error answers", r.err_answers),
                ("out-of-table answers", r.oob_answers),
                ("modifications", r.modifications),
                ("reads ok", r.reads_ok),
                ("read errors", r.read_errors),
                ("write-backs", r.writebacks),
                ("re-fills of modified records", r.refills_modified),
                ("invalidates", r.invals),
                ("invalidates refused", r.inval_busy),
                ("invalidates forgetting a modified record", r.inval_forgot),
                ("hits", r.stat_hits),
                ("evictions", r.stat_evictions),
                ("pinned-full stalls", r.stat_stalls),
                ("modified records in a slot at rest", r.end_in_slot),
                ("modified records home at rest", r.end_in_host),
                ("write-backs of a QP looked up again", r.remiss_on_wb),
                ("peeks", r.peeks),
            ] {
                assert!(n > 3, "{m} seed {seed}: {what} {n}: {r:?}");
            }
        }
    }
}

/// `qpn_doorbell`: random doorbells by number (two cycles apart, while the
/// table is not nearly full) against a directory whose bindings change
/// while the fetch owns the lookup port (junk answers then), fetches that
/// succeed, find every slot pinned or fail, misses switched off and the
/// records shrunk at random, random back-pressure; every doorbell handed
/// on is the queue's latest or a later one, of a number bound at its
/// lookup, every drop has a reason, and after a drain nothing is lost.
#[test]
fn qpn_doorbell_hands_on_every_queues_latest_index() {
    if skip() {
        return;
    }
    for m in ["qdb_p2", "qdb_p4", "qdb_p16"] {
        for seed in 1..=3 {
            let c = QdbCfg::new(m, seed);
            let r = qpn_doorbell::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            // (a table of two is busy with one doorbell waiting: nothing
            // can replace it)
            let replaced_min = if m == "qdb_p2" { 0 } else { 50 };
            for (what, n, min) in [
                ("doorbells handed on", r.handed_on, 500),
                ("doorbells replaced while waiting", r.replaced, replaced_min),
                ("fetches", r.fetches, 100),
                ("fetches that found every slot pinned", r.fetch_full, 20),
                ("fetches that failed", r.fetch_failed, 10),
                ("errors", r.errors, 10),
                ("output stalls", r.out_stalls, 100),
                ("junk answers", r.junk_answers, 500),
                ("drains", r.drains, 10),
            ] {
                assert!(n >= min, "{m} seed {seed}: {what} {n}: {r:?}");
            }
        }
    }
}

/// `qp_dir`: random binds and unbinds (valid and refused for every
/// reason), packets held in the stage while their number's binding
/// changes, random back-pressure, CQE reads, resets; every output every
/// cycle against a model of the slot and number tables; every number
/// swept after power-up (junk in the number RAM) and after a reset in the
/// middle of the run; the host's lookups (doorbells by number) held a few
/// cycles each, against the same model.
#[test]
fn qp_dir_maps_numbers_to_the_slots_holding_them() {
    if skip() {
        return;
    }
    for m in ["qd_n1", "qd_n20", "qd_n64"] {
        for seed in 1..=3 {
            let c = QdCfg::new(m, seed);
            let r = qp_dir::run(&c).unwrap_or_else(|e| panic!("{m} seed {seed}: {e}"));
            eprintln!("{m} seed {seed}: {r:?}");
            assert_eq!(r.late_binds, 0, "{m} seed {seed}: {r:?}");
            for (what, n, min) in [
                ("packets to a slot", r.to_slot, 500),
                ("packets to no slot", r.no_slot, 500),
                ("packets of numbers beyond the directory", r.beyond, 100),
                ("of which the low bits were bound", r.beyond_alias, 20),
                (
                    "answers that changed to a slot while held",
                    r.held_to_slot,
                    5,
                ),
                ("answers that changed to none while held", r.held_to_none, 5),
                ("cycles a packet was held", r.held_cycles, 1000),
                ("binds", r.binds, 200),
                ("unbinds", r.unbinds, 200),
                // (one slot: every hint written names it)
                (
                    "binds of a number whose hint names another slot",
                    r.rebinds,
                    if m == "qd_n1" { 0 } else { 20 },
                ),
                ("refused: number beyond", r.errs[2], 20),
                ("refused: number bound", r.errs[3], 20),
                ("refused: number bound to the slot itself", r.err3_own, 5),
                ("refused: slot bound or unbound", r.errs[4], 20),
                ("refused: slot beyond", r.errs[5], 20),
                (
                    "refused: slot beyond with a slot's low bits",
                    r.slot_alias,
                    3,
                ),
                ("refused: bad op", r.errs[6], 20),
                ("host lookups answered with a slot", r.lk_hits, 500),
                ("host lookups answered with none", r.lk_misses, 500),
                ("free-slot searches that found one", r.free_found, 500),
                ("free-slot searches that found none", r.free_none, 100),
                ("CQE reads of bound slots", r.cqe_bound, 500),
                ("CQE reads of unbound slots bound before", r.cqe_stale, 200),
            ] {
                assert!(n >= min, "{m} seed {seed}: {what} {n}: {r:?}");
            }
            assert!(r.resets >= 2, "{m} seed {seed}: {r:?}");
            let nums = 1usize << c_param(m, "QPN_W");
            assert_eq!(r.swept, 2 * (nums + 3), "{m} seed {seed}: {r:?}");
        }
    }
}

fn c_param(m: &str, p: &str) -> u32 {
    rtl_blocks_sim::CONFIGS
        .iter()
        .find(|c| c.name == m)
        .unwrap()
        .param(p)
}
