//! The Artix-7 TRN shim against the bench's model of the PCIE_2_1 block and
//! of rnic_core, at both TRN widths. Every run checks every beat's protocol
//! and every byte delivered (see src/bench.rs); the tests below choose the
//! traffic and add the checks specific to them.

use pcie7_shim_sim::bench::*;
use pcie7_shim_sim::MODEL_AVAILABLE;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const WIDTHS: [u32; 2] = [64, 128];

fn skip() -> bool {
    if !MODEL_AVAILABLE {
        eprintln!("SKIPPED: pcie7-shim-sim was built without Verilator (no model)");
        return true;
    }
    false
}

fn go(sc: &Scenario) -> Report {
    match run(sc) {
        Ok(r) => r,
        Err(Fail(m)) => panic!("DATA_W={} seed={}: {m}", sc.cfg.data_w, sc.cfg.seed),
    }
}

fn bar0_addr(four: bool, rng: &mut ChaCha8Rng) -> u64 {
    let base: u64 = if four {
        0x0000_0020_f000_0000
    } else {
        0xf000_0000
    };
    base + (rng.gen_range(0..0x4000u64) << 2)
}

#[test]
fn mmio_requests_3dw_and_4dw() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 1..=3u64 {
            let mut cfg = Config::new(w, seed);
            if seed == 3 {
                // no stalls anywhere: the full-rate path
                cfg.rx_gap = 0.0;
                cfg.rx_stall = 0.0;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(seed * 77);
            let mut sc = Scenario::new(cfg);
            for n in 0..300 {
                let write = rng.gen_bool(0.5);
                let four = rng.gen_bool(0.5);
                let len = rng.gen_range(1..=18);
                let a = bar0_addr(four, &mut rng);
                let t = Tlp::mem(write, a, len, 0x0000, n as u8, &mut rng);
                sc.rx.push(RxItem::new(t, RxExpect::Req));
            }
            let r = go(&sc);
            assert_eq!(r.rx.len(), 300);
            assert!(r.rx.iter().all(|(cpl, _)| !cpl));
        }
    }
}

#[test]
fn completions_at_every_alignment() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 10..=12u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(Config::new(w, seed));
            // lengths 0..=70 dwords cover every end position in a beat;
            // 3DW completions and 4DW writes (and, at 128 bits, starts in
            // slot 0 and slot 2) cover every start position of the payload
            for n in 0..400usize {
                if n % 5 == 4 {
                    let a = bar0_addr(true, &mut rng);
                    let len = rng.gen_range(1..=40);
                    let t = Tlp::mem(true, a, len, 0x0000, n as u8, &mut rng);
                    sc.rx.push(RxItem::new(t, RxExpect::Req));
                } else {
                    let len = if n < 71 { n } else { rng.gen_range(0..=70) };
                    let t = Tlp::cpl(len, 0x0300, n as u8, rng.gen(), &mut rng);
                    sc.rx.push(RxItem::new(t, RxExpect::Cpl));
                }
            }
            let r = go(&sc);
            // payload start slot within the beat: (SOF slot + header dwords) mod W
            let lanes = (w / 32) as usize;
            let mut starts = std::collections::BTreeSet::new();
            for (k, it) in sc.rx.iter().enumerate() {
                starts.insert((r.sof_slots[k] + it.tlp.hdr_dws()) % lanes);
            }
            assert_eq!(
                starts.len(),
                lanes,
                "DATA_W={w}: payload start positions seen {starts:?}"
            );
        }
    }
}

#[test]
fn unsupported_tlps_are_dropped_and_counted() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 20..=22u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(Config::new(w, seed));
            let mut drops = 0;
            for n in 0..240usize {
                let tag = n as u8;
                let item = match n % 12 {
                    0 => {
                        // message to the root complex, 4DW header, no data
                        let t = Tlp {
                            hdr: [Tlp::dw0(0b001, TYPE_MSG_RC, 0), 0x0100_0014, 0, 0],
                            data: vec![],
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    1 => {
                        // vendor message with data (MsgD), 4DW header
                        let len = rng.gen_range(1..9);
                        let t = Tlp {
                            hdr: [Tlp::dw0(0b011, 0b1_0010, len), 0x0100_007f, 0x1234, 0x5678],
                            data: (0..len * 4).map(|_| rng.gen()).collect(),
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    2 => {
                        // I/O write
                        let t = Tlp {
                            hdr: [Tlp::dw0(0b010, TYPE_IO, 1), 0x0000_000f, 0x100, 0],
                            data: vec![1, 2, 3, 4],
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    3 => {
                        // configuration read that reached the user side
                        let t = Tlp {
                            hdr: [Tlp::dw0(0b000, TYPE_CFG0, 1), 0x0000_000f, 0x0100_0010, 0],
                            data: vec![],
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    4 => {
                        // locked read
                        let t = Tlp {
                            hdr: [
                                Tlp::dw0(0b000, TYPE_MEM_LOCKED, 1),
                                0x0000_000f,
                                0xf000_0000,
                                0,
                            ],
                            data: vec![],
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    5 => {
                        // memory write to BAR2
                        let a = bar0_addr(false, &mut rng);
                        let t = Tlp::mem(true, a, rng.gen_range(1..20), 0, tag, &mut rng);
                        let mut it = RxItem::new(t, RxExpect::Drop);
                        it.bar_hit = 0x04;
                        it
                    }
                    6 => {
                        // poisoned write (EP)
                        let a = bar0_addr(rng.gen(), &mut rng);
                        let mut t = Tlp::mem(true, a, rng.gen_range(1..20), 0, tag, &mut rng);
                        t.hdr[0] |= 1 << 14;
                        RxItem::new(t, RxExpect::Drop)
                    }
                    7 => {
                        // write the block flags with TRNRERRFWD
                        let a = bar0_addr(rng.gen(), &mut rng);
                        let t = Tlp::mem(true, a, rng.gen_range(1..20), 0, tag, &mut rng);
                        let mut it = RxItem::new(t, RxExpect::Drop);
                        it.errfwd = true;
                        it
                    }
                    8 => {
                        // a TLP prefix in front (Fmt 100): not supported
                        let t = Tlp {
                            hdr: [0x9000_0000, Tlp::dw0(0b010, TYPE_MEM, 1), 0x0000_000f, 0],
                            data: vec![9, 9, 9, 9],
                        };
                        RxItem::new(t, RxExpect::Drop)
                    }
                    9 => {
                        // poisoned completion: passed on (the core checks EP)
                        let mut t = Tlp::cpl(rng.gen_range(0..30), 0x0300, tag, 0, &mut rng);
                        t.hdr[0] |= 1 << 14;
                        RxItem::new(t, RxExpect::Cpl)
                    }
                    10 => {
                        let a = bar0_addr(rng.gen(), &mut rng);
                        let t = Tlp::mem(rng.gen(), a, rng.gen_range(1..20), 0, tag, &mut rng);
                        RxItem::new(t, RxExpect::Req)
                    }
                    _ => {
                        let t = Tlp::cpl(rng.gen_range(0..50), 0x0300, tag, 0, &mut rng);
                        RxItem::new(t, RxExpect::Cpl)
                    }
                };
                if item.expect == RxExpect::Drop {
                    drops += 1;
                }
                sc.rx.push(item);
            }
            let r = go(&sc);
            assert_eq!(r.stats[0], drops, "DATA_W={w}: stat_rx_dropped");
            assert_eq!(r.rx.len(), 240 - drops as usize);
        }
    }
}

#[test]
fn digest_after_the_payload_is_not_delivered() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        let mut rng = ChaCha8Rng::seed_from_u64(30);
        let mut sc = Scenario::new(Config::new(w, 30));
        for n in 0..120usize {
            let a = bar0_addr(rng.gen(), &mut rng);
            let mut t = Tlp::mem(rng.gen(), a, rng.gen_range(1..24), 0, n as u8, &mut rng);
            let mut exp = RxExpect::Req;
            if n % 3 == 0 {
                t = Tlp::cpl(rng.gen_range(0..24), 0x0300, n as u8, 0, &mut rng);
                exp = RxExpect::Cpl;
            }
            t.hdr[0] |= 1 << 15; // TD
            let mut it = RxItem::new(t, exp);
            it.digest = Some(rng.gen());
            sc.rx.push(it);
        }
        let r = go(&sc);
        assert_eq!(r.rx.len(), 120);
    }
}

#[test]
fn discontinued_tlps_are_padded_and_counted() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 40..=41u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(Config::new(w, seed));
            for n in 0..200usize {
                let mut it = if n % 2 == 0 {
                    let a = bar0_addr(rng.gen(), &mut rng);
                    let t = Tlp::mem(true, a, rng.gen_range(1..40), 0, n as u8, &mut rng);
                    RxItem::new(t, RxExpect::Req)
                } else {
                    let t = Tlp::cpl(rng.gen_range(1..40), 0x0300, n as u8, 0, &mut rng);
                    RxItem::new(t, RxExpect::Cpl)
                };
                if n % 7 == 3 {
                    it.expect = RxExpect::Drop;
                    it.bar_hit = 0x02;
                    it.tlp = Tlp::mem(true, 0x1000, 12, 0, n as u8, &mut rng);
                }
                if n % 3 == 1 {
                    it.cut_on_beat = Some(rng.gen_range(1..6));
                }
                sc.rx.push(it);
            }
            let r = go(&sc);
            assert!(
                r.stats[2] > 20,
                "DATA_W={w}: only {} TLPs were cut",
                r.stats[2]
            );
            assert!(
                r.stats[1] > 5,
                "DATA_W={w}: only {} TLPs were padded",
                r.stats[1]
            );
        }
    }
}

#[test]
fn stray_beats_are_counted_and_do_not_hang() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        let mut rng = ChaCha8Rng::seed_from_u64(50);
        let mut cfg = Config::new(w, 50);
        cfg.straddle = 0.0; // a straddled start leaves no room for a stray beat
        let mut sc = Scenario::new(cfg);
        for n in 0..100usize {
            let t = Tlp::cpl(rng.gen_range(0..20), 0x0300, n as u8, 0, &mut rng);
            let mut it = RxItem::new(t, RxExpect::Cpl);
            it.stray_before = n % 4 == 0;
            sc.rx.push(it);
        }
        let r = go(&sc);
        assert_eq!(r.stats[1], 25, "DATA_W={w}: stat_rx_malformed");
    }
}

fn wr_tlp(len: usize, tag: u8, rng: &mut ChaCha8Rng) -> Tlp {
    let four = rng.gen_bool(0.5);
    let a = if four {
        0x0000_0001_0000_0000 + (rng.gen_range(0..1u64 << 20) << 2)
    } else {
        0x8000_0000 + (rng.gen_range(0..1u64 << 20) << 2)
    };
    Tlp::mem(true, a, len, 0x0300, tag, rng)
}

#[test]
fn posted_writes_under_back_pressure() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 60..=62u64 {
            let mut cfg = Config::new(w, seed);
            cfg.tx_stall = 0.5;
            cfg.tbuf_max = 12;
            cfg.tbuf_drain = 0.02; // the block's buffers run out often
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(cfg);
            for n in 0..300usize {
                let len = rng.gen_range(1..=64);
                sc.tx_wr.push(TxItem {
                    tlp: wr_tlp(len, n as u8, &mut rng),
                    at: 0,
                });
            }
            let r = go(&sc);
            assert_eq!(r.tx.len(), 300);
            // transmitted in order, byte for byte (the bench matched each
            // TRN TLP against the next write; here the order once more)
            for (k, (ch, idx, _)) in r.tx.iter().enumerate() {
                assert_eq!((*ch, *idx), (Chan::Wr, k));
                assert_eq!(r.tx_tlps[k], sc.tx_wr[k].tlp);
            }
        }
    }
}

#[test]
fn reads_and_completions_never_pass_an_earlier_write() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        // a fixed case: the block has no transmit buffer until cycle 100, so
        // everything waits at the shim's ports in the order of `at`:
        // C (19) is ahead of W0 (20), R (21) is behind it; W1 only shows
        // once W0 has gone (one stream), after R has long been waiting
        let mut cfg = Config::new(w, 70);
        cfg.tx_gap = 0.0;
        cfg.tbuf_zero_until = 100;
        let mut rng = ChaCha8Rng::seed_from_u64(70);
        let mut sc = Scenario::new(cfg);
        sc.tx_cpl.push(TxItem {
            tlp: Tlp::cpl(1, 0x0000, 3, 0x10, &mut rng),
            at: 19,
        });
        sc.tx_wr.push(TxItem {
            tlp: wr_tlp(64, 0, &mut rng),
            at: 20,
        });
        sc.tx_rd.push(TxItem {
            tlp: Tlp::mem(false, 0x9000_0000, 32, 0x0300, 1, &mut rng),
            at: 21,
        });
        sc.tx_wr.push(TxItem {
            tlp: wr_tlp(4, 2, &mut rng),
            at: 22,
        });
        let r = go(&sc);
        let order: Vec<(Chan, usize)> = r.tx.iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(
            order,
            vec![(Chan::Cpl, 0), (Chan::Wr, 0), (Chan::Rd, 0), (Chan::Wr, 1)],
            "DATA_W={w}"
        );

        // random traffic on all three channels; the bench checks the rule
        // for every pair
        for seed in 71..=73u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(Config::new(w, seed));
            let mut t = 10u64;
            for n in 0..200usize {
                t += rng.gen_range(0..30);
                // payload writes then the small CQE write behind them
                let len = if n % 4 == 3 { 8 } else { rng.gen_range(1..=32) };
                sc.tx_wr.push(TxItem {
                    tlp: wr_tlp(len, n as u8, &mut rng),
                    at: t,
                });
                if n % 2 == 0 {
                    let a = 0x4000_0000 + ((n as u64) << 8);
                    sc.tx_rd.push(TxItem {
                        tlp: Tlp::mem(false, a, rng.gen_range(1..=32), 0x0300, n as u8, &mut rng),
                        at: t + rng.gen_range(0..20),
                    });
                }
                if n % 3 == 0 {
                    sc.tx_cpl.push(TxItem {
                        tlp: Tlp::cpl(rng.gen_range(0..=2), 0x0000, n as u8, 0, &mut rng),
                        at: t + rng.gen_range(0..20),
                    });
                }
            }
            let r = go(&sc);
            assert_eq!(r.tx.len(), 200 + 100 + 67);
        }
    }
}

#[test]
fn msi_vectors_follow_the_enabled_count_and_wait_for_writes() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for mm in [0u8, 2, 5] {
            let mut cfg = Config::new(w, 80 + u64::from(mm));
            cfg.mm_enable = mm;
            let mut rng = ChaCha8Rng::seed_from_u64(80 + u64::from(mm));
            let mut sc = Scenario::new(cfg);
            let mut t = 10u64;
            for n in 0..60usize {
                t += rng.gen_range(5..60);
                sc.tx_wr.push(TxItem {
                    tlp: wr_tlp(rng.gen_range(1..=48), n as u8, &mut rng),
                    at: t,
                });
                // the CQE write, then its interrupt right behind it
                sc.tx_wr.push(TxItem {
                    tlp: wr_tlp(8, n as u8, &mut rng),
                    at: t + 1,
                });
                sc.msi.push((rng.gen_range(0..32), t + 2));
            }
            let r = go(&sc);
            assert_eq!(r.msi.len(), 60, "DATA_W={w} mm={mm}");
        }
        // MSI disabled by the host: taken from the core, counted, not sent
        let mut cfg = Config::new(w, 90);
        cfg.msi_enable = false;
        let mut sc = Scenario::new(cfg);
        for n in 0..10u64 {
            sc.msi.push((n as u8, 20 + 10 * n));
        }
        let r = go(&sc);
        assert_eq!(r.stats[3], 10);
    }
}

#[test]
fn configuration_completions_get_the_link_between_tlps() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        let mut cfg = Config::new(w, 100);
        cfg.tcfg_rate = 0.05;
        let mut rng = ChaCha8Rng::seed_from_u64(100);
        let mut sc = Scenario::new(cfg);
        for n in 0..200usize {
            sc.tx_wr.push(TxItem {
                tlp: wr_tlp(rng.gen_range(1..=32), n as u8, &mut rng),
                at: 0,
            });
            if n % 2 == 0 {
                sc.tx_cpl.push(TxItem {
                    tlp: Tlp::cpl(1, 0, n as u8, 0, &mut rng),
                    at: 0,
                });
            }
        }
        let r = go(&sc);
        assert!(r.tcfg_grants > 10, "DATA_W={w}: {} grants", r.tcfg_grants);
    }
}

#[test]
fn everything_at_once() {
    if skip() {
        return;
    }
    for w in WIDTHS {
        for seed in 110..=112u64 {
            let mut cfg = Config::new(w, seed);
            cfg.tcfg_rate = 0.01;
            cfg.tbuf_drain = 0.2;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sc = Scenario::new(cfg);
            sc.cfg_vals = (rng.gen_range(0..6), rng.gen_range(0..6), rng.gen());
            let mut t = 10;
            for n in 0..300usize {
                t += rng.gen_range(0..12);
                let tag = n as u8;
                let a = bar0_addr(rng.gen(), &mut rng);
                let m = Tlp::mem(rng.gen(), a, 1, 0, tag, &mut rng);
                sc.rx.push(RxItem::new(m, RxExpect::Req));
                let c = Tlp::cpl(rng.gen_range(0..=64), 0x0300, tag, 0, &mut rng);
                sc.rx.push(RxItem::new(c, RxExpect::Cpl));
                sc.tx_wr.push(TxItem {
                    tlp: wr_tlp(rng.gen_range(1..=64), tag, &mut rng),
                    at: t,
                });
                if n % 2 == 0 {
                    sc.tx_rd.push(TxItem {
                        tlp: Tlp::mem(false, 0x5000_0000, 16, 0x0300, tag, &mut rng),
                        at: t,
                    });
                }
                if n % 3 == 0 {
                    sc.tx_cpl.push(TxItem {
                        tlp: Tlp::cpl(1, 0, tag, 0, &mut rng),
                        at: t + 1,
                    });
                }
                if n % 10 == 0 {
                    sc.msi.push((rng.gen_range(0..32), t + 2));
                }
            }
            go(&sc);
        }
    }
}
