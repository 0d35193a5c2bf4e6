//! The GTP PCIe PHY (boards/artix7-pcie/rnic_gtp7_*.v) against this crate's
//! behavioural GTPE2 model (rtl/). Each test drives the PIPE side the way
//! PCIE_2_1 would and checks what the PIPE status outputs say. Passing means
//! the PHY logic agrees with the model of the GTP written for this test
//! (after UG482), not that a link trains on a card.
//!
//! `GTP7_PIPE_MUTATION=<name> cargo test -p gtp7-pipe-sim` builds the PHY
//! with a planted bug (build.rs lists them); some test must then fail.

use gtp7_pipe_sim::{lane_mode, power, Model, PortsIn, PortsOut, MODEL_AVAILABLE};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const K28_5: u8 = 0xBC; // COM
const K28_0: u8 = 0x1C; // SKP

fn skip() -> bool {
    if !MODEL_AVAILABLE {
        eprintln!("SKIPPED: gtp7-pipe-sim was built without Verilator (no model)");
        return true;
    }
    false
}

/// The bench plus the PIPE inputs held between cycles.
struct Bench {
    m: Model,
    pub i: PortsIn,
    pub o: PortsOut,
}

impl Bench {
    fn new(seed: u32) -> Self {
        let m = Model::new(seed).expect("model");
        let i = PortsIn {
            rst: 1,
            tx_elecidle: 0xf,
            tx_powerdown: [power::P1; 4],
            lane_mode: [lane_mode::LOOPBACK; 4],
            ..Default::default()
        };
        Bench {
            m,
            i,
            o: PortsOut::default(),
        }
    }

    fn tick(&mut self) -> &PortsOut {
        self.o = self.m.tick(&self.i);
        assert_eq!(self.o.flags & 2, 0, "the model reported an error");
        &self.o
    }

    fn run(&mut self, n: usize) {
        for _ in 0..n {
            self.tick();
        }
    }

    /// Releases reset and waits for phy_ready; returns the cycle count.
    fn bring_up(&mut self) -> usize {
        self.run(4);
        self.i.rst = 0;
        for c in 0..20_000 {
            if self.tick().phy_ready == 1 {
                return c;
            }
        }
        panic!("phy_ready never rose (reset state {})", self.o.reset_state);
    }

    /// Waits up to `n` cycles for `f`; returns the cycles waited.
    fn wait(&mut self, n: usize, what: &str, f: impl Fn(&PortsOut) -> bool) -> usize {
        for c in 0..n {
            if f(self.tick()) {
                return c;
            }
        }
        panic!("timeout waiting for {what}");
    }

    /// Power state change on all lanes: checks one PHYSTATUS pulse per lane.
    fn power_state(&mut self, p: u8) {
        self.i.tx_powerdown = [p; 4];
        let mut pulses = [0u32; 4];
        let mut last = 0u8;
        for _ in 0..60 {
            let o = self.tick().clone();
            for (l, n) in pulses.iter_mut().enumerate() {
                // count rising edges: a pulse is one or more cycles high
                if o.rx_phystatus >> l & 1 == 1 && last >> l & 1 == 0 {
                    *n += 1;
                }
            }
            last = o.rx_phystatus;
        }
        assert_eq!(
            pulses, [1; 4],
            "PHYSTATUS pulses per lane after POWERDOWN={p}"
        );
        assert_eq!(self.o.viol_rxpd, 0, "RXPD did not follow the power state");
    }
}

#[test]
fn reset_sequence_ends_with_phystatus_falling() {
    if skip() {
        return;
    }
    let mut b = Bench::new(1);
    // PHYSTATUS is high on every lane while PERST#-style reset is held
    for _ in 0..8 {
        let o = b.tick();
        assert_eq!(o.rx_phystatus, 0xf, "PHYSTATUS low during reset");
        assert_eq!(o.phy_ready, 0);
    }
    b.i.rst = 0;
    #[derive(Default)]
    struct Seen {
        pll_reset_fell: Option<usize>,
        lock: Option<usize>,
        user_rdy: Option<usize>,
        txreset_fell: Option<usize>,
        rxreset_fell: Option<usize>,
        all_done: Option<usize>,
        ready: Option<usize>,
        phystatus_fell: Option<usize>,
    }
    let mut s = Seen::default();
    let mut prev = b.o.clone();
    for c in 0..20_000 {
        let o = b.tick().clone();
        if prev.pll_reset == 1 && o.pll_reset == 0 {
            s.pll_reset_fell.get_or_insert(c);
        }
        if o.pll_lock == 1 {
            s.lock.get_or_insert(c);
        }
        if o.user_rdy == 1 {
            s.user_rdy.get_or_insert(c);
        }
        if prev.gt_txreset == 1 && o.gt_txreset == 0 {
            s.txreset_fell.get_or_insert(c);
            assert_eq!(o.pll_lock, 1, "GTTXRESET released without PLL lock");
        }
        if prev.gt_rxreset == 1 && o.gt_rxreset == 0 {
            s.rxreset_fell.get_or_insert(c);
            assert_eq!(o.pll_lock, 1, "GTRXRESET released without PLL lock");
        }
        if o.tx_resetdone == 0xf && o.rx_resetdone == 0xf {
            s.all_done.get_or_insert(c);
        }
        if o.phy_ready == 1 {
            s.ready.get_or_insert(c);
        }
        if o.rx_phystatus == 0 && s.phystatus_fell.is_none() {
            s.phystatus_fell = Some(c);
            // PIPE: PhyStatus stays high through reset and falls at its end
            assert!(
                s.ready.is_some_and(|r| c <= r + 2),
                "PHYSTATUS fell before the PHY was ready"
            );
        }
        if s.ready.is_none() {
            assert_eq!(
                o.rx_phystatus, 0xf,
                "PHYSTATUS dropped during reset (cycle {c})"
            );
            assert_eq!(o.rx_valid, 0, "RXVALID during reset");
            assert_eq!(o.rx_status, [0; 4], "RXSTATUS during reset");
        }
        prev = o;
        if s.phystatus_fell.is_some() && c > s.ready.unwrap() + 20 {
            break;
        }
    }
    let get = |v: Option<usize>, n: &str| v.unwrap_or_else(|| panic!("never saw {n}"));
    let (pf, lk, ur) = (
        get(s.pll_reset_fell, "PLL0RESET fall"),
        get(s.lock, "PLL0LOCK"),
        get(s.user_rdy, "USERRDY"),
    );
    let (tf, rf, dn, rd) = (
        get(s.txreset_fell, "GTTXRESET fall"),
        get(s.rxreset_fell, "GTRXRESET fall"),
        get(s.all_done, "all RESETDONE"),
        get(s.ready, "phy_ready"),
    );
    get(s.phystatus_fell, "PHYSTATUS fall");
    assert!(pf < lk, "PLL locked before its reset was released");
    assert!(lk < tf && lk < rf, "GT resets released before PLL lock");
    assert!(ur <= tf, "USERRDY after the GT reset release");
    assert!(
        tf < dn && rf < dn,
        "RESETDONE before the GT resets were released"
    );
    assert!(dn < rd, "phy_ready before every lane's RESETDONE");
    let o = &b.o;
    assert_eq!(
        o.viol_early_reset, 0,
        "the model saw a GT reset released too early"
    );
    assert_eq!(o.reset_restarts, 0, "the sequencer had to restart");
    assert_eq!(o.rx_phystatus, 0, "PHYSTATUS high after reset");
}

#[test]
fn receiver_detection_reports_present_and_absent_lanes() {
    if skip() {
        return;
    }
    let mut b = Bench::new(2);
    b.i.lane_mode = [
        lane_mode::IDLE,
        lane_mode::ABSENT,
        lane_mode::IDLE,
        lane_mode::ABSENT,
    ];
    b.bring_up();
    b.run(10);
    // Detect: TX in electrical idle, P1, TxDetectRx until PhyStatus
    b.i.tx_rcvrdet = 1;
    let mut status = [None::<u8>; 4];
    for _ in 0..200 {
        let o = b.tick().clone();
        for (l, st) in status.iter_mut().enumerate() {
            if o.rx_phystatus >> l & 1 == 1 {
                assert!(
                    st.is_none(),
                    "lane {l}: two PHYSTATUS pulses for one detection"
                );
                *st = Some(o.rx_status[l]);
            } else {
                assert_eq!(
                    o.rx_status[l], 0,
                    "lane {l}: RXSTATUS outside the PHYSTATUS pulse"
                );
            }
        }
        if status.iter().all(|s| s.is_some()) {
            break;
        }
    }
    b.i.tx_rcvrdet = 0;
    assert_eq!(
        status,
        [Some(3), Some(0), Some(3), Some(0)],
        "receiver detection result (3 = detected)"
    );
    assert_eq!(b.o.viol_detect_p0, 0);
}

#[test]
fn power_states_answer_with_one_phystatus_pulse() {
    if skip() {
        return;
    }
    let mut b = Bench::new(3);
    b.bring_up();
    b.run(10);
    for p in [
        power::P0,
        power::P0S,
        power::P0,
        power::P1,
        power::P2,
        power::P1,
        power::P0,
    ] {
        b.power_state(p);
    }
    // no pulse without a change
    for _ in 0..50 {
        assert_eq!(
            b.tick().rx_phystatus,
            0,
            "PHYSTATUS without a power state change"
        );
    }
}

/// Random symbol stream of one lane: data and the K codes PCIe uses (COM,
/// SKP, FTS, SDP, IDL, PAD, STP, END, EDB; not K28.7, which makes false
/// commas across symbol boundaries and is not used by PCIe).
fn symbols(rng: &mut ChaCha8Rng, n: usize) -> Vec<(bool, u8)> {
    const K: [u8; 9] = [0xBC, 0x1C, 0x3C, 0x5C, 0x7C, 0xF7, 0xFB, 0xFD, 0xFE];
    (0..n)
        .map(|_| {
            if rng.gen_ratio(1, 8) {
                (true, K[rng.gen_range(0..K.len())])
            } else {
                (false, rng.gen())
            }
        })
        .collect()
}

/// Brings up a link in loopback at P0 with COMs flowing for alignment.
fn loopback_up(b: &mut Bench) {
    b.bring_up();
    b.power_state(power::P0);
    b.i.tx_elecidle = 0;
    b.i.tx_data = [u16::from(K28_5) << 8 | u16::from(K28_5); 4];
    b.i.tx_charisk = [3; 4];
    b.wait(400, "RXVALID on all lanes", |o| o.rx_valid == 0xf);
    b.run(8);
}

#[test]
fn loopback_8b10b_lane_by_lane() {
    if skip() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut b = Bench::new(4);
    loopback_up(&mut b);
    // per lane a different stream of symbols (so a lane swap shows)
    let n = 600;
    let streams: Vec<Vec<(bool, u8)>> = (0..4).map(|_| symbols(&mut rng, n)).collect();
    let mut got: Vec<Vec<(bool, u8)>> = vec![Vec::new(); 4];
    for c in 0..(n / 2 + 200) {
        for (l, s) in streams.iter().enumerate() {
            let (w0, w1) = if c < n / 2 {
                (s[2 * c], s[2 * c + 1])
            } else {
                ((true, K28_5), (true, K28_5))
            };
            b.i.tx_data[l] = u16::from(w1.1) << 8 | u16::from(w0.1);
            b.i.tx_charisk[l] = u8::from(w0.0) | u8::from(w1.0) << 1;
        }
        let o = b.tick().clone();
        assert_eq!(
            o.rx_valid, 0xf,
            "RXVALID dropped during traffic (cycle {c})"
        );
        assert_eq!(
            o.rx_chanisaligned, 0xf,
            "CHANISALIGNED dropped during traffic"
        );
        for (l, g) in got.iter_mut().enumerate() {
            assert_eq!(
                o.rx_status[l], 0,
                "lane {l}: RXSTATUS {} in clean loopback",
                o.rx_status[l]
            );
            g.push((o.rx_charisk[l] & 1 == 1, o.rx_data[l] as u8));
            g.push((o.rx_charisk[l] & 2 == 2, (o.rx_data[l] >> 8) as u8));
        }
    }
    for l in 0..4 {
        let s = &streams[l];
        let g = &got[l];
        // the stream arrives whole and in order; the comma aligner may put a
        // symbol in either byte of the word, so search for the start
        let pos = g
            .windows(s.len())
            .position(|w| w == s.as_slice())
            .unwrap_or_else(|| panic!("lane {l}: the transmitted symbols did not arrive in order"));
        assert!(pos < 64, "lane {l}: latency {pos} symbols");
    }
}

/// RXVALID to the block only after the GT's RXVALID has been high for
/// RXVALID_FILTER (4) cycles, and never while it is low (one register).
fn check_valid_filter(hist: &[PortsOut]) -> usize {
    let mut rises = 0;
    for t in 1..hist.len() {
        for l in 0..4 {
            let v = |c: usize| hist[c].rx_valid >> l & 1 == 1;
            let g = |c: usize| hist[c].gt_rxvalid >> l & 1 == 1;
            if v(t) {
                assert!(
                    g(t - 1),
                    "lane {l}: RXVALID at cycle {t} without the GT's RXVALID"
                );
                assert!(
                    t >= 4 && (t - 4..t).all(g),
                    "lane {l}: RXVALID at cycle {t} before the GT's RXVALID was stable for 4 cycles"
                );
                if !v(t - 1) {
                    rises += 1;
                }
            }
        }
    }
    rises
}

#[test]
fn rxvalid_waits_for_a_stable_gt_rxvalid() {
    if skip() {
        return;
    }
    let mut b = Bench::new(9);
    b.bring_up();
    b.power_state(power::P0);
    b.i.tx_elecidle = 0;
    b.i.tx_data = [u16::from(K28_5) << 8 | u16::from(K28_5); 4];
    b.i.tx_charisk = [3; 4];
    let mut hist = Vec::new();
    for c in 0..600 {
        // lane 1 goes idle and comes back: RXVALID must be filtered again
        b.i.tx_elecidle = if (250..300).contains(&c) { 0b0010 } else { 0 };
        hist.push(b.tick().clone());
    }
    let rises = check_valid_filter(&hist);
    assert_eq!(
        rises, 5,
        "RXVALID rises: once per lane, and once more on lane 1"
    );
}

#[test]
fn compliance_maps_onto_txchardispmode_of_byte_0() {
    if skip() {
        return;
    }
    let mut b = Bench::new(5);
    loopback_up(&mut b);
    for l in 0..4u8 {
        // one register stage in the PHY: the cycle the block raises it
        // (sampled at that cycle's rising edge) the GT sees it
        b.i.tx_compliance = 1 << l;
        assert_eq!(
            b.tick().gt_txchardispmode0,
            1 << l,
            "TXCHARDISPMODE[0] after TXCOMPLIANCE on lane {l}"
        );
        b.i.tx_compliance = 0;
        assert_eq!(b.tick().gt_txchardispmode0, 0);
    }
}

#[test]
fn electrical_idle_per_lane() {
    if skip() {
        return;
    }
    let mut b = Bench::new(6);
    loopback_up(&mut b);
    assert_eq!(b.o.rx_elecidle, 0, "RXELECIDLE while receiving");
    b.i.tx_elecidle = 0b0100;
    b.wait(30, "RXELECIDLE on lane 2", |o| o.rx_elecidle == 0b0100);
    b.run(5);
    assert_eq!(
        b.o.rx_valid, 0b1011,
        "RXVALID of the idle lane (only) dropped"
    );
    b.run(50);
    assert_eq!(b.o.rx_elecidle, 0b0100, "RXELECIDLE of the other lanes");
    b.i.tx_elecidle = 0;
    b.wait(40, "RXELECIDLE off", |o| o.rx_elecidle == 0);
    b.wait(100, "RXVALID back on lane 2", |o| o.rx_valid == 0xf);
}

/// Link partner at a different bit rate: checks RXSTATUS reports SKP
/// removal (partner faster) or insertion (slower) and that no data symbol
/// is lost or repeated.
fn clock_correction(far_half: u32, want: u8) {
    let mut b = Bench::new(7);
    b.i.lane_mode = [lane_mode::PARTNER; 4];
    b.bring_up();
    b.power_state(power::P0);
    b.i.tx_elecidle = 0;
    b.i.far_half = far_half;
    b.i.far_en = 1;
    b.wait(400, "RXVALID from the link partner", |o| o.rx_valid == 0xf);
    let mut seen = [[0u32; 8]; 4];
    let mut last: [Option<u8>; 4] = [None; 4];
    for c in 0..6000 {
        let o = b.tick().clone();
        for l in 0..4 {
            // after the buffer has settled from its start level
            if c >= 300 {
                seen[l][o.rx_status[l] as usize] += 1;
            }
            assert!(
                o.rx_valid >> l & 1 == 1,
                "lane {l}: RXVALID dropped at cycle {c} (status {})",
                o.rx_status[l]
            );
            for byte in 0..2 {
                let k = o.rx_charisk[l] >> byte & 1 == 1;
                let d = (o.rx_data[l] >> (8 * byte)) as u8;
                if k {
                    assert!(
                        d == K28_5 || d == K28_0,
                        "lane {l}: unexpected K symbol {d:#x}"
                    );
                    continue;
                }
                if let Some(p) = last[l] {
                    assert_eq!(
                        d,
                        p.wrapping_add(1),
                        "lane {l}: data symbol lost or repeated at cycle {c}"
                    );
                }
                last[l] = Some(d);
            }
        }
    }
    for (l, s) in seen.iter().enumerate() {
        assert!(
            s[want as usize] > 0,
            "lane {l}: RXSTATUS {want} never reported: {s:?}"
        );
        assert_eq!(
            s[5] + s[6],
            0,
            "lane {l}: elastic buffer over/underflow: {s:?}"
        );
        let other = if want == 1 { 2 } else { 1 };
        assert_eq!(s[other], 0, "lane {l}: SKP corrected the wrong way: {s:?}");
    }
}

#[test]
fn clock_correction_removes_skp_for_a_faster_partner() {
    if skip() {
        return;
    }
    clock_correction(995, 2);
}

#[test]
fn clock_correction_adds_skp_for_a_slower_partner() {
    if skip() {
        return;
    }
    clock_correction(1005, 1);
}

#[test]
fn gen2_request_is_flagged() {
    if skip() {
        return;
    }
    let mut b = Bench::new(8);
    b.bring_up();
    b.run(10);
    assert_eq!(b.o.rate_error, 0);
    b.i.tx_rate = 1;
    b.run(3);
    assert_eq!(b.o.rate_error, 1, "a Gen2 rate request was not flagged");
}
