//! Completion queues under pressure: a full CQ holds the NIC's completions
//! back until the host polls (none lost, none overwritten, in order), and
//! MSI fires once per arm on each of many CQs; at DATA_W 64 and 256. A
//! function-level reset clears every CQ, SQ and QP state (they are in
//! block RAM, which has no reset: the NIC sweeps them and holds MMIO
//! meanwhile).

use rnic_device::Device;
use rnic_driver::{CopyWr, Cqe, WcStatus, CQE_SIZE};
use rnic_tests::*;

/// The producer index the NIC reports for CQ `cqn` (queue.q_cq_state).
fn cq_pi(nic: &rnic_driver::Nic<rnic_sim::SimDevice>, cqn: u16) -> u16 {
    let io = nic.io();
    let q = io.csr().queue();
    q.q_sel().try_write(|r| r.set_qn(cqn)).unwrap();
    q.q_cq_state().try_read().unwrap().cq_pi()
}

#[test]
fn a_full_cq_holds_completions_until_polled() {
    const CQ: u32 = 4;
    const COPIES: usize = 13;
    for w in WIDTHS {
        let nic = sim(w, 31);
        let mut cq = nic.create_cq(CQ).unwrap();
        let mut sq = nic.create_sq(16, &mut cq).unwrap();
        let src = nic.device().alloc_dma(COPIES * 256).unwrap();
        let dst = nic.device().alloc_dma(COPIES * 256).unwrap();
        for i in 0..COPIES {
            fill_pattern(&src, i * 256, 200, i as u64 + 1);
            nic.post_copy(
                &mut sq,
                &CopyWr {
                    wr_id: i as u64,
                    src: src.bus_addr() + (i * 256) as u64,
                    dst: dst.bus_addr() + (i * 256) as u64,
                    length: 200,
                },
            )
            .unwrap();
        }
        nic.ring_sq(&sq).unwrap();
        // Long enough for every copy; the CQ takes 4 CQEs and then the NIC
        // must wait.
        nic.device().run(200_000);
        assert_eq!(
            cq_pi(&nic, cq.cqn()),
            CQ as u16,
            "DATA_W {w}: the NIC filled more than the ring"
        );
        assert_eq!(nic.cqe_count().unwrap(), CQ, "DATA_W {w}: CQEs written");
        // The ring still holds the first four, untouched.
        for slot in 0..CQ as usize {
            let mut raw = [0u8; CQE_SIZE];
            cq.ring().read(slot * CQE_SIZE, &mut raw);
            assert_eq!(
                Cqe::decode(&raw).wr_id,
                slot as u64,
                "DATA_W {w}: slot {slot} overwritten"
            );
        }
        let mut seen = Vec::new();
        let mut budget = 2_000_000u64;
        while seen.len() < COPIES && budget > 0 {
            let mut out = Vec::new();
            // at most the ring's worth per poll, as the hardware allows
            if nic.poll_cq(&mut cq, CQ as usize, &mut out).unwrap() == 0 {
                nic.device().idle();
                budget -= 1;
            }
            seen.extend(out);
        }
        assert_eq!(seen.len(), COPIES, "DATA_W {w}: completions lost");
        for (i, c) in seen.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status),
                (i as u64, WcStatus::Success),
                "DATA_W {w}: {c:?}"
            );
            assert_eq!(
                check_pattern(&dst, i * 256, 200, i as u64 + 1),
                None,
                "DATA_W {w}: copy {i}"
            );
        }
        nic.device().run(20_000);
        assert_eq!(
            nic.cqe_count().unwrap(),
            COPIES as u32,
            "DATA_W {w}: extra CQEs"
        );
    }
}

#[test]
fn msi_once_per_arm_on_many_cqs() {
    const N: usize = 8;
    for w in WIDTHS {
        let nic = sim(w, 32);
        let mut cqs: Vec<_> = (0..N).map(|_| nic.create_cq(8).unwrap()).collect();
        let mut sqs: Vec<_> = cqs
            .iter_mut()
            .map(|cq| nic.create_sq(8, cq).unwrap())
            .collect();
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        let msis = || nic.device().with_root_complex(|rc| *rc.msi_counts());
        // post `per` copies on every queue, ring them all, take every CQE
        let round = |cqs: &mut Vec<rnic_driver::CompletionQueue>,
                     sqs: &mut Vec<rnic_driver::SendQueue>,
                     per: usize| {
            for (q, sq) in sqs.iter_mut().enumerate() {
                for k in 0..per {
                    let wr = CopyWr {
                        wr_id: (q * 16 + k) as u64,
                        src: src.bus_addr() + (q * 64) as u64,
                        dst: dst.bus_addr() + (q * 64) as u64,
                        length: 64,
                    };
                    nic.post_copy(sq, &wr).unwrap();
                }
            }
            for sq in sqs.iter() {
                nic.ring_sq(sq).unwrap();
            }
            for cq in cqs.iter_mut() {
                let mut out = Vec::new();
                assert_eq!(
                    nic.poll_cq_blocking(cq, per, 100_000, &mut out).unwrap(),
                    per
                );
            }
            nic.device().run(5_000);
        };
        for cq in &cqs {
            nic.arm_cq(cq).unwrap();
        }
        round(&mut cqs, &mut sqs, 3);
        let after_one = msis();
        for (v, &n) in after_one.iter().enumerate() {
            assert_eq!(
                n,
                u64::from(v < N),
                "DATA_W {w}: vector {v}: one MSI per armed CQ, however many CQEs"
            );
        }
        // Not re-armed: no more; then only the re-armed CQ fires.
        round(&mut cqs, &mut sqs, 2);
        assert_eq!(msis(), after_one, "DATA_W {w}: an MSI without an arm");
        nic.arm_cq(&cqs[5]).unwrap();
        round(&mut cqs, &mut sqs, 1);
        let mut want = after_one;
        want[5] += 1;
        assert_eq!(msis(), want, "DATA_W {w}");
    }
}

/// The state the NIC reports for QP `qpn` (ibv_qp_state numbering).
fn qp_state(nic: &rnic_driver::Nic<rnic_sim::SimDevice>, qpn: u16) -> u8 {
    let io = nic.io();
    let qp = io.csr().qp();
    qp.qp_sel().try_write(|r| r.set_qpn(qpn)).unwrap();
    qp.qp_status().try_read().unwrap().state()
}

/// Whether the NIC reports send queue `qn` enabled.
fn sq_enabled(nic: &rnic_driver::Nic<rnic_sim::SimDevice>, qn: u16) -> bool {
    let io = nic.io();
    let q = io.csr().queue();
    q.q_sel().try_write(|r| r.set_qn(qn)).unwrap();
    q.q_cq_state().try_read().unwrap().sq_en()
}

/// The enable and armed bits the NIC reports for CQ `cqn`.
fn cq_bits(nic: &rnic_driver::Nic<rnic_sim::SimDevice>, cqn: u16) -> (bool, bool) {
    let io = nic.io();
    let q = io.csr().queue();
    q.q_sel().try_write(|r| r.set_qn(cqn)).unwrap();
    let st = q.q_cq_state().try_read().unwrap();
    (st.cq_en(), st.cq_armed())
}

#[test]
fn a_reset_clears_the_queues_and_holds_mmio_meanwhile() {
    use rnic_sim::{ModelKnobs, SimConfig, SimDevice};
    // 16 CQs (the sweep is shorter than the host's first request after
    // the reset) and 1,024 (it is longer: MMIO must wait)
    for knobs in [ModelKnobs::Full, ModelKnobs::ManyQps] {
        let dev = SimDevice::new(SimConfig {
            knobs,
            seed: 33,
            ..SimConfig::default()
        })
        .unwrap_or_else(|e| panic!("simulator: {e}"));
        let msis = || dev.with_root_complex(|rc| *rc.msi_counts());
        // one copy on a new CQ and SQ, armed: its MSI; the CQ armed again
        let copy_with_msi = |nic: &rnic_driver::Nic<SimDevice>| {
            let mut cq = nic.create_cq(8).unwrap();
            let mut sq = nic.create_sq(8, &mut cq).unwrap();
            let buf = nic.device().alloc_dma(256).unwrap();
            nic.arm_cq(&cq).unwrap();
            let before = msis();
            let wr = CopyWr {
                wr_id: 1,
                src: buf.bus_addr(),
                dst: buf.bus_addr() + 128,
                length: 64,
            };
            nic.post_copy(&mut sq, &wr).unwrap();
            nic.ring_sq(&sq).unwrap();
            let mut out = Vec::new();
            assert_eq!(
                nic.poll_cq_blocking(&mut cq, 1, 100_000, &mut out).unwrap(),
                1
            );
            nic.device().run(2_000);
            let after = msis();
            let v = usize::from(cq.cqn()) % after.len();
            assert_eq!(
                after[v],
                before[v] + 1,
                "{knobs:?}: one MSI for the armed CQ"
            );
            nic.arm_cq(&cq).unwrap();
            assert_eq!(
                cq_bits(nic, cq.cqn()),
                (true, true),
                "{knobs:?}: enabled and armed"
            );
            cq.cqn()
        };
        let nic = rnic_driver::Nic::open(dev.clone()).unwrap();
        let cqn = copy_with_msi(&nic);
        // and QP 0 moved to INIT (a state-only command)
        {
            let io = nic.io();
            let qp = io.csr().qp();
            qp.qp_sel().try_write(|r| r.set_qpn(0)).unwrap();
            qp.qp_attr()
                .try_write(|r| {
                    r.set_state(1);
                    r.set_pmtu(1);
                })
                .unwrap();
            qp.qp_cmd().try_write(|r| r.set_op(2)).unwrap();
        }
        assert_eq!(qp_state(&nic, 0), 1, "{knobs:?}: QP 0 in INIT");

        let world = dev.world();
        world.with_world(|w| w.reset_nic(dev.index()));
        while world.with_world(|w| w.in_reset(dev.index())) {
            dev.run(1);
        }
        let released = world.now();
        // At once, before any read (a driver's first request is a read,
        // which waits out the sweep anyway): the writes of a create of
        // another CQ. They must wait too, not be refused in the sweep.
        let other = cqn + 1;
        let ring = dev.alloc_dma(8 * rnic_driver::CQE_SIZE).unwrap();
        {
            let io = nic.io();
            let q = io.csr().queue();
            q.q_sel().try_write(|r| r.set_qn(other)).unwrap();
            q.q_base_lo()
                .try_write(|r| r.set_addr(ring.bus_addr() as u32))
                .unwrap();
            q.q_base_hi()
                .try_write(|r| r.set_addr((ring.bus_addr() >> 32) as u32))
                .unwrap();
            q.q_size().try_write(|r| r.set_entries(8)).unwrap();
            q.q_cqn().try_write(|r| r.set_cqn(0)).unwrap();
            q.q_cmd()
                .try_write(|r| r.set_op(rnic_driver::QueueCmd::EnableCq as u8))
                .unwrap();
        }
        // A fresh driver: the CQ and SQ used before the reset are cleared.
        let nic = rnic_driver::Nic::open(dev.clone()).unwrap();
        assert!(
            !sq_enabled(&nic, 0),
            "{knobs:?}: SQ 0 still enabled after the reset"
        );
        assert_eq!(
            qp_state(&nic, 0),
            0,
            "{knobs:?}: QP 0 not in RESET after the reset"
        );
        assert_eq!(
            cq_bits(&nic, cqn),
            (false, false),
            "{knobs:?}: CQ {cqn} still enabled or armed after the reset"
        );
        assert_eq!(
            cq_bits(&nic, other),
            (true, false),
            "{knobs:?}: the create written at once after the reset was lost: {:?}",
            nic.error_status().unwrap()
        );
        let cqn2 = copy_with_msi(&nic);
        assert_eq!(cqn2, cqn, "{knobs:?}: a fresh driver takes the same CQ");
        let errors = nic.error_status().unwrap();
        assert_eq!(
            errors.count, 0,
            "{knobs:?}: errors after the reset: {errors:?}"
        );
        eprintln!("{knobs:?}: reset released at cycle {released}; the fresh driver's CQ works");
    }
}
