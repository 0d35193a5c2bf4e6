//! The queue manager's send-queue scheduling, seen through local DMA copies
//! on several send queues that share one CQ: every queue with work gets its
//! turn in round robin, none runs ahead, and per-queue order holds.

use rnic_device::Device;
use rnic_driver::{CopyWr, Cqe, WcStatus};
use rnic_tests::*;

/// Completions of `queues` send queues, `per_queue` copies of `len` bytes
/// each, all posted before one doorbell per queue: the order the CQ saw.
fn round(w: u32, seed: u64, queues: usize, per_queue: usize, len: usize) -> Vec<(usize, u64)> {
    let nic = sim(w, seed);
    let mut cq = nic.create_cq(256).unwrap();
    let mut sqs: Vec<_> = (0..queues)
        .map(|_| nic.create_sq(64, &mut cq).unwrap())
        .collect();
    let src = nic.device().alloc_dma(queues * per_queue * len).unwrap();
    let dst = nic.device().alloc_dma(queues * per_queue * len).unwrap();
    let slot = |q: usize, i: usize| (q * per_queue + i) * len;
    for (q, sq) in sqs.iter_mut().enumerate() {
        for i in 0..per_queue {
            fill_pattern(&src, slot(q, i), len, (q * 1000 + i + 1) as u64);
            nic.post_copy(
                sq,
                &CopyWr {
                    wr_id: (q * 1000 + i) as u64,
                    src: src.bus_addr() + slot(q, i) as u64,
                    dst: dst.bus_addr() + slot(q, i) as u64,
                    length: len as u32,
                },
            )
            .unwrap();
        }
    }
    for sq in &sqs {
        nic.ring_sq(sq).unwrap();
    }
    // what each queue's CQEs name (its slot's QP number; the slot itself
    // without a QP directory)
    let qn_of: Vec<u32> = sqs.iter().map(|s| nic.cqe_qn(s.qn())).collect();
    let total = queues * per_queue;
    let mut cqes: Vec<Cqe> = Vec::new();
    let got = nic
        .poll_cq_blocking(&mut cq, total, 2_000_000, &mut cqes)
        .unwrap();
    assert_eq!(got, total, "hung after {got} completions: {cqes:?}");
    let mut order = Vec::new();
    for c in &cqes {
        assert_eq!(c.status, WcStatus::Success, "{c:?}");
        let q = qn_of
            .iter()
            .position(|&n| n == c.qn)
            .expect("a queue of this test");
        order.push((q, c.wr_id));
    }
    for q in 0..queues {
        let ids: Vec<u64> = order.iter().filter(|o| o.0 == q).map(|o| o.1).collect();
        let want: Vec<u64> = (0..per_queue).map(|i| (q * 1000 + i) as u64).collect();
        assert_eq!(ids, want, "queue {q}: completions out of order");
        for i in 0..per_queue {
            assert_eq!(
                check_pattern(&dst, slot(q, i), len, (q * 1000 + i + 1) as u64),
                None
            );
        }
    }
    order
}

/// The largest lead one queue had over another while both still had work:
/// 0 or 1 for a strict round robin.
fn largest_lead(order: &[(usize, u64)], queues: usize, per_queue: usize) -> usize {
    let mut done = vec![0usize; queues];
    let mut lead = 0;
    for &(q, _) in order {
        done[q] += 1;
        for r in 0..queues {
            if done[r] < per_queue {
                lead = lead.max(done[q].saturating_sub(done[r]));
            }
        }
    }
    lead
}

#[test]
fn send_queues_take_turns() {
    for w in WIDTHS {
        let order = round(w, 41, 4, 12, 256);
        let lead = largest_lead(&order, 4, 12);
        // The doorbells land one after another, so the first queue may
        // start up to two WQEs (the executor holds two per queue) before
        // the others are scheduled; after that the list keeps them level.
        assert!(lead <= 2, "DATA_W {w}: a queue ran {lead} ahead: {order:?}");
    }
}

#[test]
fn the_lead_detector_sees_a_queue_running_ahead() {
    // what a scheduler that drains one queue before the next would show
    let order: Vec<(usize, u64)> = (0..4).flat_map(|q| (0..12).map(move |i| (q, i))).collect();
    assert_eq!(largest_lead(&order, 4, 12), 12);
    let rr: Vec<(usize, u64)> = (0..12).flat_map(|i| (0..4).map(move |q| (q, i))).collect();
    assert_eq!(largest_lead(&rr, 4, 12), 1);
}
