//! The server end to end over its sockets, without QEMU: this crate's
//! `VfioUserDevice` speaks the protocol from the test process (DMA memory
//! in a memfd it maps to the server, MSIs on eventfds) and the ordinary
//! driver runs on it: ID block, configuration space, local DMA copies into
//! the client's memory with a completion MSI, refused DMA after an unmap,
//! bus mastering, reset, reconnection. Prints the cost of a BAR0 read and
//! of DMA through the server.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rnic_device::{Device, IrqWait};
use rnic_driver::{CopyWr, Cqe, Nic, WcStatus};
use rnic_sim::{RootComplexConfig, WorldConfig, RTL_AVAILABLE};
use rnic_vfio_user::{start, ServerConfig, ServerHandle, VfioUserDevice};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-vfu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn server(name: &str, nics: usize, host: RootComplexConfig) -> Option<ServerHandle> {
    if !RTL_AVAILABLE {
        eprintln!("skipped: rnic-sim was built without the RTL");
        return None;
    }
    let world = WorldConfig {
        nics,
        root_complex: host,
        seed: 7,
        ..WorldConfig::default()
    };
    Some(start(ServerConfig::new(world, &dir(name))).expect("server starts"))
}

/// Wait (at most 10 s) until the server's counters satisfy `cond`.
fn wait_stats(
    h: &ServerHandle,
    cond: impl Fn(&rnic_vfio_user::ServerStats) -> bool,
) -> rnic_vfio_user::ServerStats {
    let t0 = Instant::now();
    loop {
        let s = h.stats();
        if cond(&s) || t0.elapsed() > Duration::from_secs(10) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn copy(nic: &Nic<VfioUserDevice>, len: usize, seed: u8, irq: bool) -> (Vec<Cqe>, bool) {
    let mut cq = nic.create_cq(16).unwrap();
    let mut sq = nic.create_sq(16, &mut cq).unwrap();
    let src = nic.device().alloc_dma(len).unwrap();
    let dst = nic.device().alloc_dma(len).unwrap();
    let data: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    src.write(0, &data);
    if irq {
        nic.arm_cq(&cq).unwrap();
    }
    nic.post_copy(
        &mut sq,
        &CopyWr {
            wr_id: 42,
            src: src.bus_addr(),
            dst: dst.bus_addr(),
            length: len as u32,
        },
    )
    .unwrap();
    nic.ring_sq(&sq).unwrap();
    // 20 s (the budget is in nanoseconds, this backend's `now`).
    let fired = irq && nic.wait_cq_event(&cq, 20_000_000_000).unwrap() == IrqWait::Fired;
    let mut out = Vec::new();
    let t0 = Instant::now();
    while out.is_empty() && t0.elapsed() < Duration::from_secs(60) {
        nic.poll_cq(&mut cq, 1, &mut out).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(out.len(), 1, "no completion within 60 s");
    if out[0].status == WcStatus::Success {
        assert_eq!(dst.to_vec(0, len), data, "copied bytes");
    }
    (out, fired)
}

#[test]
fn id_block_config_space_dma_and_msi_through_the_socket() {
    let Some(h) = server("basic", 1, RootComplexConfig::default()) else {
        return;
    };
    let dev = VfioUserDevice::connect(h.socket(0), 8 << 20).unwrap();
    let mut cfg = [0u8; 12];
    dev.config_read(0, &mut cfg).unwrap();
    assert_eq!(
        &cfg[0..4],
        &[0x34, 0x12, 0x49, 0x4e],
        "vendor 1234 device 4e49"
    );
    assert_eq!(&cfg[9..12], &[0x00, 0x00, 0x02], "class 020000");
    assert_eq!(dev.bar_len(), 0x10000);
    assert_eq!(dev.read32(0x0C).unwrap(), 0x524E_4943, "ID block magic");

    // BAR0 read cost, seen from the client and inside the server.
    let n = 200;
    let t0 = Instant::now();
    for _ in 0..n {
        dev.read32(0x0C).unwrap();
    }
    let per_read = t0.elapsed() / n;
    // A wait's budget is in cycles of `now` (nanoseconds here, a 1000 MHz
    // clock), as on every backend: 30 ms of them, with no interrupt
    // armed, time out after about 30 ms of `now` (not 30 s).
    assert_eq!(dev.clock_mhz(), 1000.0);
    let (t0, c0) = (Instant::now(), dev.now());
    assert_eq!(dev.wait_irq(0, 30_000_000).unwrap(), IrqWait::TimedOut);
    let (waited, cycles) = (t0.elapsed(), dev.now() - c0);
    assert!(
        cycles >= 30_000_000 && waited < Duration::from_secs(2),
        "{cycles} cycles, {waited:?}"
    );
    let nic = Nic::open(dev).unwrap();
    let (cqes, fired) = copy(&nic, 256 * 1024, 3, true);
    assert_eq!(cqes[0].status, WcStatus::Success, "{:?}", cqes[0]);
    assert_eq!(cqes[0].wr_id, 42);
    assert!(fired, "the CQ's MSI reached the eventfd");
    let st = wait_stats(&h, |s| s.msi_delivered >= 1 && s.dma_writes[0] > 0);
    eprintln!("client: {per_read:?} per BAR0 read; server: {st}");
    assert!(st.msi_delivered >= 1, "{st}");
    assert_eq!(st.iommu_faults, vec![0], "{st}");
    assert_eq!(st.model_errors, vec![0], "{st}");
    assert!(st.dma_maps >= 4, "rings, CQ, src, dst: {st}");
}

#[test]
fn dma_outside_the_mapped_regions_is_refused_and_recorded() {
    let Some(h) = server("fault", 1, RootComplexConfig::bench()) else {
        return;
    };
    let dev = VfioUserDevice::connect(h.socket(0), 4 << 20).unwrap();
    let nic = Nic::open(dev).unwrap();
    let mut cq = nic.create_cq(16).unwrap();
    let mut sq = nic.create_sq(16, &mut cq).unwrap();
    let src = nic.device().alloc_dma(4096).unwrap();
    let dst = nic.device().alloc_dma(4096).unwrap();
    nic.device().free_dma(&dst).unwrap();
    nic.post_copy(
        &mut sq,
        &CopyWr {
            wr_id: 1,
            src: src.bus_addr(),
            dst: dst.bus_addr(),
            length: 4096,
        },
    )
    .unwrap();
    nic.ring_sq(&sq).unwrap();
    let mut out = Vec::new();
    let t0 = Instant::now();
    while out.is_empty() && t0.elapsed() < Duration::from_secs(30) {
        nic.poll_cq(&mut cq, 1, &mut out).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let st = wait_stats(&h, |s| s.iommu_faults[0] > 0);
    assert!(
        st.iommu_faults[0] > 0,
        "the write to the unmapped page was refused: {st}"
    );
    assert!(
        dst.to_vec(0, 4096).iter().all(|&b| b == 0),
        "nothing landed"
    );
}

#[test]
fn no_dma_without_bus_mastering_then_reset_and_reconnect() {
    let Some(h) = server("bme", 1, RootComplexConfig::bench()) else {
        return;
    };
    {
        let dev = VfioUserDevice::connect(h.socket(0), 4 << 20).unwrap();
        dev.config_write(4, &[0x02, 0x00]).unwrap(); // memory on, bus master off
        let nic = Nic::open(dev).unwrap();
        let mut cq = nic.create_cq(16).unwrap();
        let mut sq = nic.create_sq(16, &mut cq).unwrap();
        let buf = nic.device().alloc_dma(8192).unwrap();
        nic.post_copy(
            &mut sq,
            &CopyWr {
                wr_id: 1,
                src: buf.bus_addr(),
                dst: buf.bus_addr() + 4096,
                length: 64,
            },
        )
        .unwrap();
        nic.ring_sq(&sq).unwrap();
        let st = wait_stats(&h, |s| s.iommu_faults[0] > 0);
        assert!(
            st.iommu_faults[0] > 0,
            "DMA with bus mastering off is refused: {st}"
        );
        // FLR: the NIC comes back, its queues gone, BAR0 answers.
        nic.device().reset().unwrap();
        assert_eq!(nic.device().read32(0x0C).unwrap(), 0x524E_4943);
        assert_eq!(wait_stats(&h, |s| s.resets == 1).resets, 1);
    }
    // The client went away; a new one gets a fresh NIC on the same socket.
    assert_eq!(wait_stats(&h, |s| !s.connected[0]).connected, vec![false]);
    let dev = VfioUserDevice::connect(h.socket(0), 4 << 20).unwrap();
    let nic = Nic::open(dev).unwrap();
    let (cqes, _) = copy(&nic, 4096, 9, false);
    assert_eq!(cqes[0].status, WcStatus::Success, "{:?}", cqes[0]);
    assert_eq!(
        wait_stats(&h, |s| s.mapped_regions == 4).mapped_regions,
        4,
        "the first client's regions are gone"
    );
}

#[test]
fn two_nics_two_sockets_independent_functions() {
    let Some(h) = server("two", 2, RootComplexConfig::bench()) else {
        return;
    };
    let a = Nic::open(VfioUserDevice::connect(h.socket(0), 2 << 20).unwrap()).unwrap();
    let b = Nic::open(VfioUserDevice::connect(h.socket(1), 2 << 20).unwrap()).unwrap();
    let (ca, _) = copy(&a, 8192, 1, false);
    let (cb, _) = copy(&b, 8192, 2, false);
    assert_eq!(
        (ca[0].status, cb[0].status),
        (WcStatus::Success, WcStatus::Success)
    );
    assert_eq!(
        wait_stats(&h, |s| s.connected == [true, true]).connected,
        vec![true, true]
    );
}

#[test]
#[ignore]
fn speed_probe() {
    let Some(h) = server("speed", 1, RootComplexConfig::default()) else {
        return;
    };
    let dev = VfioUserDevice::connect(h.socket(0), 2 << 20).unwrap();
    dev.read32(0x0C).unwrap();
    let c0 = h.stats().cycles;
    std::thread::sleep(Duration::from_secs(2));
    let c1 = h.stats().cycles;
    eprintln!("idle: {:.2} M cycles/s", (c1 - c0) as f64 / 2e6);
    let t0 = Instant::now();
    for _ in 0..500 {
        dev.read32(0x0C).unwrap();
    }
    eprintln!("read: {:?}", t0.elapsed() / 500);
    eprintln!("{}", h.stats());
}

/// `copies` local copies of `len` bytes, one at a time; returns the wall
/// time they took.
fn timed_copies<D: Device>(nic: &Nic<D>, len: usize, copies: u64) -> Duration {
    let mut cq = nic.create_cq(16).unwrap();
    let mut sq = nic.create_sq(16, &mut cq).unwrap();
    let src = nic.device().alloc_dma(len).unwrap();
    let dst = nic.device().alloc_dma(len).unwrap();
    let t0 = Instant::now();
    for k in 0..copies {
        let wr = CopyWr {
            wr_id: k,
            src: src.bus_addr(),
            dst: dst.bus_addr(),
            length: len as u32,
        };
        nic.post_copy(&mut sq, &wr).unwrap();
        nic.ring_sq(&sq).unwrap();
        let mut out = Vec::new();
        while out.is_empty() {
            nic.poll_cq(&mut cq, 1, &mut out).unwrap();
            nic.device().idle();
        }
    }
    t0.elapsed()
}

/// DMA through the server against the same copies in-process, at the same
/// moment on the same machine: simulated cycles per second and wall time
/// per DMA TLP. `cargo test --release -p rnic-vfio-user --test server
/// dma_speed_probe -- --ignored --nocapture`
#[test]
#[ignore]
fn dma_speed_probe() {
    use rnic_sim::{SimConfig, SimDevice};
    let (len, copies) = (1 << 20, 8);
    let report = |who: &str, cycles: u64, tlps: u64, t: Duration| {
        eprintln!(
            "{who}: {:.0} kcycles/s, {tlps} DMA TLPs, {:.2} us per TLP",
            cycles as f64 / t.as_secs_f64() / 1e3,
            t.as_secs_f64() * 1e6 / tlps as f64
        )
    };
    let dev = SimDevice::new(SimConfig {
        root_complex: RootComplexConfig::bench(),
        ..SimConfig::default()
    })
    .unwrap();
    let (c0, s0) = (dev.now(), dev.stats());
    let t = timed_copies(&Nic::open(dev.clone()).unwrap(), len, copies);
    let s1 = dev.stats();
    let tlps = |s: &rnic_sim::Stats| s.tx_wr_req.tlps + s.tx_rd_req.tlps;
    report("in-process", dev.now() - c0, tlps(&s1) - tlps(&s0), t);
    let Some(h) = server("dmaspeed", 1, RootComplexConfig::bench()) else {
        return;
    };
    let nic = Nic::open(VfioUserDevice::connect(h.socket(0), 4 << 20).unwrap()).unwrap();
    let s0 = wait_stats(&h, |_| true);
    let t = timed_copies(&nic, len, copies);
    let s1 = wait_stats(&h, |s| {
        s.dma_writes[0] >= s0.dma_writes[0] + copies * len as u64 / 256
    });
    let tlps = |s: &rnic_vfio_user::ServerStats| s.dma_writes[0] + s.dma_reads[0];
    report("server", s1.cycles - s0.cycles, tlps(&s1) - tlps(&s0), t);
}
