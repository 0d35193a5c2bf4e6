//! Every writer of `dma.debug` goes through one read-modify-write API
//! (`rnic_driver::DebugSwitches`): a switch set through one entry point
//! holds while another entry point sets its own, and each takes back only
//! its own. (Before, the torture wrote the whole register and silently
//! cleared a `no-mr-check` set by the fuzz path.)

use rnic_sim::SimDevice;
use rnic_torture::sim::{self, SimOpts};
use rnic_torture::torture::{self, Hooks};
use rnic_torture::{Break, Config};
use rnic_verbs::Context;

/// The switches as the register holds them, read through the generated
/// register API (not through `DebugSwitches`).
fn raw(ctx: &Context<SimDevice>) -> (bool, bool, bool, bool) {
    let io = rnic_regs::DeviceIo::new(ctx.device());
    let r = io.csr().dma().debug().try_read().expect("dma.debug");
    (r.cqe_ro(), r.early_cqe(), r.bypass(), r.no_mr_check())
}

/// Reads NIC b's register while the torture runs.
struct Watch<'a> {
    b: &'a Context<SimDevice>,
    seen: Vec<(bool, bool, bool, bool)>,
}

impl Hooks for Watch<'_> {
    fn tick(&mut self, _now: u64, checked: u64) {
        if self.seen.len() < 4 && checked > 0 {
            self.seen.push(raw(self.b));
        }
    }
}

#[test]
fn two_switches_set_through_two_entry_points_both_hold() {
    let pair = sim::pair(&SimOpts::default()).expect("simulated pair");
    // Entry point 1: the driver's switch API, as `rnic fuzz --break
    // no-mr-check` arms the NIC under attack.
    pair.b
        .nic()
        .debug_switches()
        .set(Break::NoMrCheck, true)
        .expect("no-mr-check");
    assert_eq!(raw(&pair.b), (false, false, false, true));
    // Entry point 2: a torture run that breaks the CQE ordering.
    let cfg = Config {
        messages: 20,
        brk: Some(Break::CqeRo),
        ..Config::default()
    };
    let mut watch = Watch {
        b: &pair.b,
        seen: Vec::new(),
    };
    torture::run(
        &pair.a,
        pair.addrs[0],
        &pair.b,
        pair.addrs[1],
        &cfg,
        &sim::run_info(&pair),
        &mut watch,
    )
    .expect("torture run");
    assert!(!watch.seen.is_empty(), "the run never ticked");
    for s in &watch.seen {
        assert_eq!(
            *s,
            (true, false, false, true),
            "during the run NIC b must hold both cqe-ro and no-mr-check"
        );
    }
    // The run took back its own switch and left the other one on.
    assert_eq!(raw(&pair.b), (false, false, false, true));
    let on: Vec<Break> = pair
        .b
        .nic()
        .debug_switches()
        .get()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(on, [Break::NoMrCheck]);
}

#[test]
fn switch_names_round_trip_and_unknown_ones_are_refused() {
    for b in Break::ALL {
        assert_eq!(b.name().parse::<Break>().unwrap(), b);
    }
    let e = "no-such".parse::<Break>().unwrap_err().to_string();
    assert!(e.contains("cqe-ro, early-cqe, bypass, no-mr-check"), "{e}");
    // The torture refuses the switch it cannot catch, and says who does.
    let cfg = Config {
        brk: Some(Break::NoMrCheck),
        ..Config::default()
    };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("rnic fuzz --break no-mr-check"), "{e}");
    let cfg = Config {
        brk: Some(Break::ResendAfterCqe),
        ..Config::default()
    };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("tests/mp_wire.rs"), "{e}");
    let cfg = Config {
        brk: Some(Break::UnpinnedMove),
        ..Config::default()
    };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("tests/qp_record.rs"), "{e}");
}
