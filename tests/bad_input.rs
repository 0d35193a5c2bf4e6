//! Bad input never loses anything: DMA outside registered memory, doorbells
//! to queues that do not exist, bad ring sizes and unknown opcodes each end
//! in an error status, and the NIC keeps serving the other queues.

use rnic_device::Device;
use rnic_driver::{CopyWr, DriverError, QueueCmd, WcStatus};
use rnic_tests::*;

/// A bus address no buffer is mapped at (the simulator maps above 4 GiB).
const UNMAPPED: u64 = 0x7_7700_0000;

#[test]
fn read_outside_registered_memory_gives_error_cqe() {
    for w in WIDTHS {
        let nic = sim(w, 10);
        let mut cq = nic.create_cq(8).unwrap();
        let mut sq = nic.create_sq(8, &mut cq).unwrap();
        let dst = nic.device().alloc_dma(8192).unwrap();
        guard_fill(&dst, 64, 1000);
        nic.post_copy(
            &mut sq,
            &CopyWr {
                wr_id: 1,
                src: UNMAPPED,
                dst: dst.bus_addr() + 64,
                length: 1000,
            },
        )
        .unwrap();
        nic.ring_sq(&sq).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            nic.poll_cq_blocking(&mut cq, 1, 100_000, &mut out).unwrap(),
            1
        );
        assert_eq!(out[0].wr_id, 1);
        assert_eq!(out[0].status, WcStatus::LocProtErr);
        assert_eq!(guard_check(&dst, 64, 0), None);
        assert_eq!(
            dst.to_vec(64, 1000),
            vec![0xEE; 1000],
            "nothing may be written after a failed read"
        );
        let st = nic.error_status().unwrap();
        assert_eq!(st.code, 4);
        assert!(nic.device().stats().unsupported_requests > 0);
        // The queue still works.
        let src = nic.device().alloc_dma(8192).unwrap();
        let copies = slotted(&[(500, 3, 5)], 1, 1024);
        run_copies(&nic, &mut sq, &mut cq, &src, &dst, &copies, 1);
    }
}

#[test]
fn write_outside_registered_memory_is_an_iommu_fault() {
    for w in WIDTHS {
        let nic = sim(w, 11);
        let mut cq = nic.create_cq(8).unwrap();
        let mut sq = nic.create_sq(8, &mut cq).unwrap();
        let src = nic.device().alloc_dma(8192).unwrap();
        let dst = nic.device().alloc_dma(8192).unwrap();
        fill_pattern(&src, 0, 3000, 9);
        // Runs off the end of dst into the unmapped guard gap.
        let start = dst.bus_addr() + 8192 - 1000;
        nic.post_copy(
            &mut sq,
            &CopyWr {
                wr_id: 2,
                src: src.bus_addr(),
                dst: start,
                length: 3000,
            },
        )
        .unwrap();
        nic.post_copy(
            &mut sq,
            &CopyWr {
                wr_id: 3,
                src: src.bus_addr(),
                dst: UNMAPPED,
                length: 100,
            },
        )
        .unwrap();
        nic.ring_sq(&sq).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            nic.poll_cq_blocking(&mut cq, 2, 100_000, &mut out).unwrap(),
            2
        );
        let faults = nic.device().iommu_faults();
        assert!(
            !faults.is_empty(),
            "writes outside every buffer must be recorded"
        );
        for f in &faults {
            assert!(f.addr >= dst.bus_addr() + 8192 - 1000, "fault {f:?}");
        }
        assert!(faults.iter().any(|f| f.addr == UNMAPPED));
        // Nothing outside registered buffers: the model drops faulting writes
        // whole, so src is untouched and dst only got bytes inside it.
        assert_eq!(check_pattern(&src, 0, 3000, 9), None);
    }
}

#[test]
fn doorbell_to_missing_or_disabled_queue() {
    for w in WIDTHS {
        let nic = sim(w, 12);
        let mut cq = nic.create_cq(8).unwrap();
        let mut sq = nic.create_sq(8, &mut cq).unwrap();
        let io = nic.io();
        let q = io.csr().queue();
        // queue 9 was never set up; queue 40000 does not exist
        for qn in [9u16, 40000] {
            let before = nic.error_status().unwrap().count;
            q.sq_db()
                .try_write(|r| {
                    r.set_qn(qn);
                    r.set_pi(1);
                })
                .unwrap();
            let st = nic.error_status().unwrap();
            assert_eq!(st.count, before + 1);
            assert_eq!((st.code, st.qn), (1, qn));
        }
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        run_copies(
            &nic,
            &mut sq,
            &mut cq,
            &src,
            &dst,
            &slotted(&[(100, 0, 0), (200, 1, 2)], 1, 1024),
            1,
        );
    }
}

/// A doorbell that moves the producer index back (withdrawing posted WQEs,
/// which the NIC may already hold) is refused with code 7, and the WQEs
/// stay posted: every one completes with its bytes.
#[test]
fn doorbell_behind_the_producer_index() {
    for w in WIDTHS {
        let nic = sim(w, 14);
        let mut cq = nic.create_cq(8).unwrap();
        let mut sq = nic.create_sq(8, &mut cq).unwrap();
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        for i in 0..3u64 {
            let off = i as usize * 1024;
            fill_pattern(&src, off, 1000, i + 1);
            nic.post_copy(
                &mut sq,
                &CopyWr {
                    wr_id: i,
                    src: src.bus_addr() + off as u64,
                    dst: dst.bus_addr() + off as u64,
                    length: 1000,
                },
            )
            .unwrap();
        }
        nic.ring_sq(&sq).unwrap();
        let before = nic.error_status().unwrap().count;
        let io = nic.io();
        io.csr()
            .queue()
            .sq_db()
            .try_write(|r| {
                r.set_qn(sq.qn());
                r.set_pi(1);
            })
            .unwrap();
        let st = nic.error_status().unwrap();
        assert_eq!(st.count, before + 1);
        assert_eq!((st.code, st.qn), (7, sq.qn()));
        let mut got = Vec::new();
        assert_eq!(
            nic.poll_cq_blocking(&mut cq, 3, 100_000, &mut got).unwrap(),
            3,
            "{got:?}"
        );
        for (i, c) in got.iter().enumerate() {
            assert_eq!((c.status, c.wr_id), (WcStatus::Success, i as u64), "{c:?}");
            assert_eq!(check_pattern(&dst, i * 1024, 1000, i as u64 + 1), None);
        }
    }
}

#[test]
fn ring_size_not_power_of_two() {
    for w in WIDTHS {
        let nic = sim(w, 13);
        let ring = nic.device().alloc_dma(4096).unwrap();
        for bad in [0u32, 1, 3, 48, 65536] {
            match nic.queue_command(5, QueueCmd::EnableCq, ring.bus_addr(), bad, 0) {
                Err(DriverError::Refused { code: 2, qn: 5 }) => {}
                other => panic!("ring size {bad}: {other:?}"),
            }
        }
        // Misaligned ring base
        match nic.queue_command(5, QueueCmd::EnableSq, ring.bus_addr() + 8, 4, 0) {
            Err(DriverError::Refused { code: 2, .. }) => {}
            other => panic!("misaligned: {other:?}"),
        }
        // The driver refuses before touching the NIC.
        assert!(matches!(nic.create_cq(48), Err(DriverError::InvalidArg(_))));
        let mut cq = nic.create_cq(4).unwrap();
        let mut sq = nic.create_sq(4, &mut cq).unwrap();
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        run_copies(
            &nic,
            &mut sq,
            &mut cq,
            &src,
            &dst,
            &slotted(&[(10, 0, 0)], 1, 1024),
            1,
        );
    }
}

#[test]
fn unknown_opcode_completes_in_error_and_others_go_on() {
    for w in WIDTHS {
        let nic = sim(w, 14);
        let mut cq = nic.create_cq(16).unwrap();
        let mut bad_sq = nic.create_sq(8, &mut cq).unwrap();
        let mut good_sq = nic.create_sq(8, &mut cq).unwrap();
        let src = nic.device().alloc_dma(4096).unwrap();
        let dst = nic.device().alloc_dma(4096).unwrap();
        fill_pattern(&src, 0, 700, 5);
        nic.post_raw(
            &mut bad_sq,
            0x37,
            &CopyWr {
                wr_id: 70,
                src: src.bus_addr(),
                dst: dst.bus_addr(),
                length: 700,
            },
        )
        .unwrap();
        nic.post_copy(
            &mut good_sq,
            &CopyWr {
                wr_id: 71,
                src: src.bus_addr(),
                dst: dst.bus_addr() + 1024,
                length: 700,
            },
        )
        .unwrap();
        nic.ring_sq(&bad_sq).unwrap();
        nic.ring_sq(&good_sq).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            nic.poll_cq_blocking(&mut cq, 2, 100_000, &mut out).unwrap(),
            2
        );
        let bad = out.iter().find(|c| c.wr_id == 70).unwrap();
        let good = out.iter().find(|c| c.wr_id == 71).unwrap();
        assert_eq!(bad.status, WcStatus::LocQpOpErr);
        assert_eq!(good.status, WcStatus::Success);
        assert_eq!(check_pattern(&dst, 1024, 700, 5), None);
        assert_eq!(
            dst.to_vec(0, 700),
            vec![0; 700],
            "an unknown opcode must not move data"
        );
        let st = nic.error_status().unwrap();
        assert!(st.count >= 1);
    }
}
