//! The completion barrier on the PCIe layer: a copy's CQE never becomes
//! visible before the copy's bytes, although the root complex lets payload
//! writes (RO=1) pass each other. The debug switch that gives CQEs RO=1 must
//! make the same test see stale data: a detector that cannot fire proves
//! nothing.

use rand::Rng;
use rnic_device::Device;
use rnic_tests::*;

/// Copies a run needs before the broken barrier is seen, at most.
const BREAK_WITHIN: usize = 200;

fn run(data_w: u32, seed: u64, break_ro: bool, n: usize) -> usize {
    let nic = sim(data_w, seed);
    nic.debug_switches()
        .set(rnic_driver::Break::CqeRo, break_ro)
        .unwrap();
    let mut cq = nic.create_cq(64).unwrap();
    let mut sq = nic.create_sq(64, &mut cq).unwrap();
    let src = nic.device().alloc_dma(16 * 4096).unwrap();
    let dst = nic.device().alloc_dma(16 * 4096).unwrap();
    let mut r = rng(seed);
    let spec: Vec<_> = (0..n)
        .map(|_| {
            (
                r.gen_range(64..3000),
                r.gen_range(0..64),
                r.gen_range(0..64),
            )
        })
        .collect();
    let copies = slotted(&spec, 16, 4096);
    run_copies(&nic, &mut sq, &mut cq, &src, &dst, &copies, 16)
}

#[test]
fn cqe_never_passes_its_data() {
    for w in WIDTHS {
        for seed in 0..3 {
            assert_eq!(
                run(w, 100 + seed, false, 400),
                0,
                "DATA_W={w} seed={}",
                100 + seed
            );
        }
    }
}

#[test]
fn cqe_with_relaxed_ordering_is_caught() {
    for w in WIDTHS {
        let v = run(w, 200, true, BREAK_WITHIN);
        assert!(
            v > 0,
            "DATA_W={w}: RO=1 on CQEs went unnoticed in {BREAK_WITHIN} copies"
        );
    }
}
