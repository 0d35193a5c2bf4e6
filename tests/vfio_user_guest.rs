//! The simulated NICs as PCI functions of a Linux guest: `rnic-vfio-user`
//! serves them over vfio-user sockets, the guest (the rxe image of
//! `sim/rxe-guest/build-image.sh` in its `vfio` role) is booted by the QEMU
//! of `sim/vm/install-qemu.sh` (both made by `.ci/setup` and `.ci/run`).
//!
//! Proven here, in the guest: `lspci` lists the functions with their IDs
//! and class; the ID block's magic reads back through
//! `/sys/bus/pci/devices/BDF/resource0`; with the virtual IOMMU the
//! functions bind to `vfio-pci` and get `/dev/vfio/N`, and a guest VFIO
//! mapping becomes an entry of the server's IOMMU table at the same IOVA;
//! the `rnic` binary shared from the host sees them (`rnic list`). Without
//! the IOMMU the functions still work through sysfs, and a server that
//! dies under a running guest command ends that command with an error
//! naming the device instead of a hang. BAR0 read and write costs from the
//! guest are printed.
//!
//! Without the image or the QEMU the tests fail with the command that
//! fixes it; `RNIC_VFIO_USER=skip` skips them explicitly (and says so).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rnic_interop::{Guest, GuestConfig, GuestError};
use rnic_sim::WorldConfig;
use rnic_vfio_user::{start, ServerConfig};

fn image() -> PathBuf {
    rnic_tests::guest_image()
}

fn skip() -> bool {
    rnic_tests::skip_vfio_user_guest("the vfio-user guest tests")
}

fn work_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-vfu-guest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("share")).unwrap();
    for f in ["mmio_probe.py", "vfio_map.py"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("guest").join(f),
            d.join("share").join(f),
        )
        .unwrap();
    }
    d
}

/// A binary of this build next to the test executable (target/release).
fn sibling_binary(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join(name);
    p.is_file().then_some(p)
}

fn boot(cfg: &GuestConfig) -> Guest {
    match Guest::boot(cfg) {
        Ok(g) => {
            eprintln!("guest ready after {:.1} s", g.boot_time.as_secs_f64());
            g
        }
        Err(e) => panic!(
            "{e}\n(the guest needs `sudo sim/vm/install-qemu.sh` and `sudo sim/rxe-guest/build-image.sh {}`, \
             both run by .ci/setup and .ci/run; RNIC_VFIO_USER=skip skips these tests)",
            image().display()
        ),
    }
}

fn run(g: &mut Guest, cmd: &str) -> String {
    let r = g.run(cmd, Duration::from_secs(120)).unwrap();
    assert_eq!(r.rc, 0, "`{cmd}` exited {}:\n{}", r.rc, r.output);
    r.output
}

/// `lspci -nn` lines of rnic functions -> their full BDFs.
fn rnic_functions(g: &mut Guest) -> Vec<String> {
    let out = run(g, "lspci -nn -D -d 1234:4e49");
    eprintln!("{out}");
    for l in out.lines() {
        assert!(l.contains("[0200]") && l.contains("[1234:4e49]"), "{l}");
    }
    out.lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// The magic through resource0, and the BAR0 costs the probe prints.
fn probe(g: &mut Guest, bdf: &str) -> (f64, f64) {
    let out = run(g, &format!("python3 /mnt/host/mmio_probe.py {bdf} 300"));
    eprintln!("{bdf}: {}", out.trim());
    assert!(out.contains("magic=0x524e4943"), "{out}");
    let field = |k: &str| -> f64 {
        out.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    (field("read_us="), field("write_us="))
}

#[test]
fn guest_sees_the_nics_binds_vfio_pci_and_maps_through_the_iommu() {
    if skip() {
        return;
    }
    let dir = work_dir("iommu");
    let world = WorldConfig {
        nics: 2,
        seed: 3,
        ..WorldConfig::default()
    };
    let h = start(ServerConfig::new(world, &dir)).expect("server");
    let rnic = sibling_binary("rnic");
    if let Some(b) = &rnic {
        std::fs::copy(b, dir.join("share/rnic")).unwrap();
    }
    let mut cfg = GuestConfig::vfio(image(), dir.join("run"), h.sockets().to_vec(), true);
    cfg.share = Some(dir.join("share"));
    let mut g = boot(&cfg);

    let bdfs = rnic_functions(&mut g);
    assert_eq!(bdfs.len(), 2, "two rnic functions");
    for bdf in &bdfs {
        let (rd, wr) = probe(&mut g, bdf);
        eprintln!("BAR0 from the guest (sysfs, TCG): read {rd:.1} us, write {wr:.1} us");
    }
    if rnic.is_some() {
        let out = run(&mut g, "/mnt/host/rnic list");
        eprintln!("rnic list in the guest:\n{out}");
        for bdf in &bdfs {
            assert!(out.contains(bdf.as_str()), "rnic list names {bdf}:\n{out}");
        }
    } else {
        eprintln!("no target/release/rnic next to the test: `rnic list` in the guest not run");
    }

    // vfio-pci with the virtual IOMMU.
    let out = run(
        &mut g,
        "echo 1234 4e49 > /sys/bus/pci/drivers/vfio-pci/new_id && sleep 1 && \
         for d in /sys/bus/pci/devices/*; do [ \"$(cat $d/vendor)$(cat $d/device)\" = 0x12340x4e49 ] && \
         echo \"${d##*/} $(basename $(readlink $d/driver)) $(basename $(readlink $d/iommu_group))\"; done; ls /dev/vfio",
    );
    eprintln!("{out}");
    let mut groups = Vec::new();
    for bdf in &bdfs {
        let line = out
            .lines()
            .find(|l| l.starts_with(bdf.as_str()))
            .unwrap_or_else(|| panic!("{bdf} missing:\n{out}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[1], "vfio-pci", "{line}");
        assert!(
            out.lines().any(|l| l.trim() == f[2]),
            "/dev/vfio/{} exists:\n{out}",
            f[2]
        );
        groups.push(f[2].to_string());
    }

    // A guest VFIO mapping reaches the server's IOMMU at its IOVA.
    let (iova, size) = (0x4000_0000u64, 0x20_0000u64);
    let before = h.stats().dma_maps;
    g.start(&format!(
        "python3 /mnt/host/vfio_map.py {} {} {iova:#x} {size:#x} 20",
        groups[0], bdfs[0]
    ))
    .unwrap();
    let t0 = Instant::now();
    let covered = loop {
        let st = h.stats();
        let m = &st.mappings[0];
        let mut at = iova;
        for &(bus, len) in m {
            if bus <= at && at < bus + len {
                at = bus + len;
            }
        }
        if at >= iova + size {
            break true;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            break false;
        }
        if let Some(r) = g.poll().unwrap() {
            panic!("vfio_map.py ended early ({}):\n{}", r.rc, r.output);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let st = h.stats();
    assert!(
        covered,
        "IOVA {iova:#x}+{size:#x} not in NIC 0's IOMMU table: {:x?}",
        st.mappings[0]
    );
    eprintln!(
        "guest MAP_DMA {iova:#x}+{size:#x}: {} DMA_MAP messages at the server",
        st.dma_maps - before
    );
    let r = loop {
        if let Some(r) = g.poll().unwrap() {
            break r;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(r.rc, 0, "{}", r.output);
    assert!(
        r.output.contains("vendor=0x1234 device=0x4e49"),
        "{}",
        r.output
    );
    // The process exited: its mapping left the server's table.
    let t0 = Instant::now();
    while h.stats().mappings[0]
        .iter()
        .any(|&(b, l)| b < iova + size && iova < b + l)
        && t0.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let st = h.stats();
    assert!(
        !st.mappings[0]
            .iter()
            .any(|&(b, l)| b < iova + size && iova < b + l),
        "unmapped when the guest process exited: {:x?}",
        st.mappings[0]
    );
    g.shutdown();
    let st = h.stop();
    eprintln!("server: {st}");
    assert_eq!(st.model_errors, vec![0, 0], "{st}");
}

struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn without_iommu_sysfs_works_and_a_dead_server_ends_the_command() {
    if skip() {
        return;
    }
    let Some(server) = sibling_binary("rnic-vfio-user") else {
        panic!("target/release/rnic-vfio-user missing (cargo build --release -p rnic-vfio-user)");
    };
    let dir = work_dir("noiommu");
    let sock = dir.join("nic0.sock");
    let child = Command::new(server)
        .args(["--socket", sock.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("server.log")).unwrap())
        .spawn()
        .unwrap();
    let mut child = ServerProcess(child);
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening"), "{line}");
    let mut cfg = GuestConfig::vfio(image(), dir.join("run"), vec![sock.clone()], false);
    cfg.share = Some(dir.join("share"));
    let mut g = boot(&cfg);
    let bdfs = rnic_functions(&mut g);
    assert_eq!(bdfs.len(), 1);
    probe(&mut g, &bdfs[0]);
    let groups = run(&mut g, "ls /sys/kernel/iommu_groups | wc -l");
    assert_eq!(
        groups.trim(),
        "0",
        "no IOMMU, no groups: vfio-pci cannot take the function"
    );

    // A command that reads BAR0 for ever; then the server dies.
    g.start(&format!(
        "python3 /mnt/host/mmio_probe.py {} 10 --forever",
        bdfs[0]
    ))
    .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let _ = child.0.kill();
    let t0 = Instant::now();
    let err = loop {
        match g.poll() {
            Ok(Some(r)) => panic!("the command ended by itself ({}): {}", r.rc, r.output),
            Ok(None) => {}
            Err(e) => break e,
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no error 60 s after the server died"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("after {:.1} s: {err}", t0.elapsed().as_secs_f64());
    match &err {
        GuestError::DeviceLost { device, .. } => {
            assert!(device.contains(sock.to_str().unwrap()), "{err}")
        }
        e => panic!("expected DeviceLost, got {e}"),
    }
}
