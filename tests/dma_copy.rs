//! Local DMA copies through the RTL, byte-exact: sizes, alignments, page
//! crossings, MPS/MRRS, copies in flight, ring wrap-around; at DATA_W 64 and 256.

use rand::Rng;
use rnic_device::Device;
use rnic_sim::RootComplexConfig;
use rnic_tests::*;

fn copy_case(
    data_w: u32,
    seed: u64,
    copies: &[Copy],
    window: usize,
    sq_entries: u32,
    cq_entries: u32,
    buf: usize,
) {
    let nic = sim(data_w, seed);
    let mut cq = nic.create_cq(cq_entries).unwrap();
    let mut sq = nic.create_sq(sq_entries, &mut cq).unwrap();
    let src = nic.device().alloc_dma(buf).unwrap();
    let dst = nic.device().alloc_dma(buf).unwrap();
    run_copies(&nic, &mut sq, &mut cq, &src, &dst, copies, window);
    let d = nic.device();
    assert!(
        d.iommu_faults().is_empty(),
        "IOMMU faults: {:?}",
        d.iommu_faults()
    );
    assert!(
        d.model_errors().is_empty(),
        "malformed TLPs: {:?}",
        d.model_errors()
    );
}

#[test]
fn sizes_1b_to_1mib() {
    for w in WIDTHS {
        let mut sizes = vec![
            1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
        ];
        sizes.extend([
            511,
            512,
            513,
            1023,
            1024,
            4095,
            4096,
            4097,
            8191,
            12289,
            65536,
            65537,
            262_144 + 3,
        ]);
        sizes.push(1 << 20);
        let spec: Vec<_> = sizes.iter().map(|&l| (l, 0, 0)).collect();
        let copies = slotted(&spec, 2, (1 << 20) + 4096);
        copy_case(w, 1, &copies, 2, 16, 16, 2 * ((1 << 20) + 4096) + 4096);
    }
}

#[test]
fn every_alignment_mod_64() {
    for w in WIDTHS {
        let mut r = rng(2);
        let mut spec = Vec::new();
        for sa in 0..64 {
            for da in 0..64 {
                spec.push((rand_len(&mut r, 200), sa, da));
            }
        }
        let copies = slotted(&spec, 32, 512);
        copy_case(w, 2, &copies, 32, 64, 64, 32 * 512 + 4096);
    }
}

#[test]
fn page_crossings() {
    for w in WIDTHS {
        let mut copies = Vec::new();
        // Source, destination, or both straddle 4 KiB pages, by a byte or more.
        for (i, &(so, d, len)) in [
            (4095usize, 100usize, 2usize),
            (4090, 8190, 13),
            (100, 4095, 1),
            (4096 - 33, 4096 - 7, 4096 + 100),
            (8191, 12287, 9000),
            (4000, 4000, 20000),
        ]
        .iter()
        .enumerate()
        {
            let base = i * 65536;
            copies.push(Copy {
                src_off: base + so,
                dst_off: base + d,
                len,
            });
        }
        copy_case(w, 3, &copies, 1, 8, 8, 6 * 65536 + 4096);
    }
}

#[test]
fn mps_and_mrrs() {
    for w in WIDTHS {
        for mps in 0..3u8 {
            for mrrs in 0..6u8 {
                let nic = sim(w, 4 + u64::from(mps * 8 + mrrs));
                nic.device().set_max_payload(mps);
                nic.device().set_max_read_req(mrrs);
                let mut cq = nic.create_cq(8).unwrap();
                let mut sq = nic.create_sq(8, &mut cq).unwrap();
                let src = nic.device().alloc_dma(4 * 16384).unwrap();
                let dst = nic.device().alloc_dma(4 * 16384).unwrap();
                let mut r = rng(u64::from(mps * 8 + mrrs));
                let spec: Vec<_> = (0..8)
                    .map(|_| {
                        (
                            rand_len(&mut r, 12000),
                            r.gen_range(0..64),
                            r.gen_range(0..64),
                        )
                    })
                    .collect();
                let copies = slotted(&spec, 4, 16384);
                run_copies(&nic, &mut sq, &mut cq, &src, &dst, &copies, 4);
                assert!(
                    nic.device().model_errors().is_empty(),
                    "{:?}",
                    nic.device().model_errors()
                );
            }
        }
    }
}

#[test]
fn copies_in_flight_1_to_256() {
    for w in WIDTHS {
        for window in [1usize, 2, 7, 64, 256] {
            let mut r = rng(window as u64);
            let spec: Vec<_> = (0..256)
                .map(|_| {
                    (
                        rand_len(&mut r, 300),
                        r.gen_range(0..64),
                        r.gen_range(0..64),
                    )
                })
                .collect();
            let copies = slotted(&spec, window, 512);
            copy_case(w, 5, &copies, window, 256, 256, window * 512 + 4096);
        }
    }
}

#[test]
fn ring_wrap_around() {
    for w in WIDTHS {
        let mut r = rng(6);
        let spec: Vec<_> = (0..100)
            .map(|_| {
                (
                    rand_len(&mut r, 700),
                    r.gen_range(0..64),
                    r.gen_range(0..64),
                )
            })
            .collect();
        let copies = slotted(&spec, 3, 1024);
        // SQ of 4 and CQ of 2 entries wrap 25 and 50 times.
        copy_case(w, 6, &copies, 3, 4, 2, 3 * 1024 + 4096);
    }
}

#[test]
fn slow_root_complex() {
    // Long, jittery latencies and heavy back-pressure on every channel.
    for w in WIDTHS {
        let rc = RootComplexConfig::stress();
        let nic = sim_with(w, 7, rc);
        let mut cq = nic.create_cq(16).unwrap();
        let mut sq = nic.create_sq(16, &mut cq).unwrap();
        let src = nic.device().alloc_dma(8 * 8192).unwrap();
        let dst = nic.device().alloc_dma(8 * 8192).unwrap();
        let mut r = rng(7);
        let spec: Vec<_> = (0..40)
            .map(|_| {
                (
                    rand_len(&mut r, 6000),
                    r.gen_range(0..64),
                    r.gen_range(0..64),
                )
            })
            .collect();
        let copies = slotted(&spec, 8, 8192);
        run_copies(&nic, &mut sq, &mut cq, &src, &dst, &copies, 8);
        assert!(nic.device().model_errors().is_empty());
    }
}
