//! The full system, in one boot per test: the simulated NICs as PCI
//! functions of a QEMU guest (`rnic-vfio-user`), and the hardware-only
//! `rnic` (built without the simulator, as a lab has it) run inside the
//! guest against them, as `rnic vm` does (`rnic_interop::vm`).
//!
//! Without any rnic code first: `lspci` lists the functions with their IDs
//! and class; with the virtual IOMMU a guest VFIO mapping (the guest
//! kernel's type1, tests/guest/vfio_map.py) becomes an entry of the
//! server's IOMMU table at the same IOVA and leaves it when its process
//! exits; without it there are no IOMMU groups and BAR0 reads the ID
//! block's magic through sysfs (tests/guest/mmio_probe.py, which prints
//! what a register access costs from the guest).
//!
//! The CI slice: with the virtual IOMMU, `rnic list`, `info`, a QP's state
//! saved to a context table in guest memory and loaded back by DMA
//! (`regs --qp-ctx-check`), the torture
//! test through VFIO (100 messages clean, polled and again waiting for
//! the CQs' MSIs with `--completions event`; `--break early-cqe` caught; a
//! torture killed with SIGKILL mid-run, then a fresh run that resets the
//! functions on open and is clean),
//! `flash write` and `verify` through BAR0; the bad cases (exit 2, one
//! line, nothing written to BAR0): a function not bound to vfio-pci asked
//! for as `vfio:`, an absent or malformed address, a function that is not
//! an rnic (the guest's virtio device), permission denied (a non-root
//! user), a BAR0 smaller than the register map, an IOMMU group shared with
//! a device VFIO does not own (the function behind a PCIe-to-PCI bridge
//! with a virtio-rng device); those two functions never run a cycle (the
//! server parks a NIC until its BAR0 is first used). Without the IOMMU, sysfs:
//! the on-chip loopback torture by physical address. A server that dies
//! under a running torture ends the guest command with an error naming the
//! device, and the next run starts clean.
//!
//! Longer runs (other fabrics, mp, every `--break`) are `rnic vm`'s, from
//! the command line (README, "Full-system simulation").
//!
//! `RNIC_VFIO_USER=skip` skips these tests (and says so).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rnic_interop::vm::{hardware_rnic, make_share, Outcome, Vm, VmConfig};
use rnic_interop::{Guest, GuestError};

fn skip() -> bool {
    rnic_tests::skip_vfio_user_guest("the rnic-in-the-guest tests")
}

fn work_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-vm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The share: the hardware-only rnic (built on first use into
/// target/no-sim, as `rnic vm` does), and the guest-side probes of
/// tests/guest that use no rnic code (in /mnt/host/files).
fn share(dir: &Path) -> PathBuf {
    let rnic = hardware_rnic(None).expect("the hardware-only rnic");
    let s = dir.join("share");
    let guest = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest");
    make_share(
        &s,
        &rnic,
        &[guest.join("mmio_probe.py"), guest.join("vfio_map.py")],
    )
    .unwrap();
    s
}

/// `cmd` in the guest, which must succeed: its output.
fn sh_ok(vm: &mut Vm, cmd: &str) -> String {
    let r = vm.sh(cmd).unwrap();
    assert_eq!(r.rc, 0, "`{cmd}` exited {}:\n{}", r.rc, r.output);
    r.output
}

/// `lspci -nn` lines of rnic functions (a network controller, the rnic
/// IDs) -> their full addresses.
fn lspci_rnic_functions(vm: &mut Vm) -> Vec<String> {
    let out = sh_ok(vm, "lspci -nn -D -d 1234:4e49");
    eprintln!("{out}");
    for l in out.lines() {
        assert!(l.contains("[0200]") && l.contains("[1234:4e49]"), "{l}");
    }
    out.lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn rnic(vm: &mut Vm, args: &str, user: Option<&str>) -> Outcome {
    let t0 = Instant::now();
    let o = vm
        .rnic(&words(args), user, Duration::from_secs(900), &mut |_| {})
        .unwrap_or_else(|e| panic!("rnic {args}: {e:#}"));
    eprintln!(
        "rnic {args}{}: exit {} in {:.1} s\n{}{}",
        user.map(|u| format!(" (as {u})")).unwrap_or_default(),
        o.rc,
        t0.elapsed().as_secs_f64(),
        o.stdout_text(),
        o.stderr
    );
    o
}

/// A refusal: exit 2, one line on stderr containing `why`, and no BAR0
/// access of any kind reached the server (nothing written, nothing read).
fn refused(vm: &mut Vm, args: &str, user: Option<&str>, why: &str) {
    let before = vm.server.as_ref().map(|s| s.stats());
    let o = rnic(vm, args, user);
    assert_eq!(o.rc, 2, "rnic {args}: {}", o.stderr);
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {:?}", o.stderr);
    assert!(
        lines[0].contains(why),
        "rnic {args}: expected {why:?} in {:?}",
        lines[0]
    );
    if let (Some(b), Some(s)) = (before, vm.server.as_ref()) {
        let a = s.stats();
        assert_eq!(
            (a.mmio_writes, a.mmio_reads),
            (b.mmio_writes, b.mmio_reads),
            "rnic {args} touched BAR0"
        );
    }
}

fn boot(c: &VmConfig, share: &Path) -> Vm {
    let t0 = Instant::now();
    let vm = Vm::start(c, share).unwrap_or_else(|e| {
        panic!(
            "{e:#}\n(the guest needs `sudo sim/vm/install-qemu.sh` and `sudo sim/rxe-guest/build-image.sh {}`, \
             both run by .ci/setup and .ci/run; RNIC_VFIO_USER=skip skips these tests)",
            c.image.display()
        )
    });
    eprintln!(
        "guest ready after {:.1} s (boot {:.1} s), functions {:?}",
        t0.elapsed().as_secs_f64(),
        vm.guest.boot_time.as_secs_f64(),
        vm.bdfs
    );
    vm
}

fn json_field(out: &str, k: &str) -> String {
    let key = format!("\"{k}\":");
    let i = out.find(&key).unwrap_or_else(|| panic!("{k} in {out}")) + key.len();
    out[i..]
        .split([',', '}'])
        .next()
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn rnic_in_the_guest_through_vfio() {
    if skip() {
        return;
    }
    let dir = work_dir("vfio");
    let share = share(&dir);
    // NIC 2 advertises a BAR0 smaller than the register map; NIC 3 sits
    // behind a PCIe-to-PCI bridge with a virtio-rng device, in one IOMMU
    // group with it.
    let mut c = VmConfig::new(4, "ideal", &dir);
    c.bar0_sizes = vec![None, None, Some(0x400)];
    c.shared_group = Some(3);
    let mut vm = boot(&c, &share);
    let (a, b, small) = (vm.bdfs[0].clone(), vm.bdfs[1].clone(), vm.bdfs[2].clone());
    let shared = vm.bdfs[3].clone();

    // lspci sees the four with the rnic IDs and class, and rnic list
    // sees them bound to vfio-pci.
    assert_eq!(lspci_rnic_functions(&mut vm), vm.bdfs);
    let o = rnic(&mut vm, "list", None);
    assert_eq!(o.rc, 0);
    let list = o.stdout_text();
    for f in [&a, &b] {
        assert!(
            list.lines()
                .any(|l| l.starts_with(f.as_str()) && l.contains("vfio-pci")),
            "{f} bound to vfio-pci in:\n{list}"
        );
    }
    guest_vfio_mapping_reaches_the_server(&mut vm, &a);
    // With the latency probe: a doorbell's way to its CQE polled, and by
    // the armed CQ's interrupt.
    let o = rnic(
        &mut vm,
        &format!("info --device vfio:{a} --latency 20"),
        None,
    );
    assert_eq!(o.rc, 0, "{}", o.stderr);
    let irq_line = o
        .stdout_text()
        .lines()
        .find(|l| l.contains("... by interrupt"))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(irq_line.contains("(20 interrupts)"), "{}", o.stdout_text());

    // A QP's whole state to a context table in guest memory and back, by
    // the NIC's DMA through VFIO and the virtual IOMMU.
    let o = rnic(
        &mut vm,
        &format!("regs --device vfio:{a} --qp-ctx-check 3"),
        None,
    );
    let out = o.stdout_text();
    assert_eq!(o.rc, 0, "{out}{}", o.stderr);
    assert!(
        out.contains("round trip: ok") && out.contains("1 fills, 1 write-backs, 0 failed"),
        "{out}"
    );

    // The torture test through VFIO: A -> B over the simulated fabric.
    let o = rnic(
        &mut vm,
        &format!("torture --device {a} --peer {b} --messages 100 --seed 7 --json"),
        None,
    );
    let out = o.stdout_text();
    assert_eq!(o.rc, 0, "{out}{}", o.stderr);
    assert_eq!(json_field(&out, "messages"), "100", "{out}");
    assert_eq!(json_field(&out, "violations"), "0", "{out}");
    // The same torture waiting for the CQs' interrupts: each MSI goes from
    // the server's eventfd through QEMU's MSI emulation and the guest's
    // vfio-pci to the eventfd rnic sleeps on.
    let msi0 = vm.server.as_ref().unwrap().stats().msi_delivered;
    let t0 = Instant::now();
    let o = rnic(
        &mut vm,
        &format!(
            "torture --device {a} --peer {b} --messages 100 --seed 7 --completions event --json"
        ),
        None,
    );
    let event_s = t0.elapsed().as_secs_f64();
    let out = o.stdout_text();
    assert_eq!(o.rc, 0, "{out}{}", o.stderr);
    assert_eq!(json_field(&out, "messages"), "100", "{out}");
    assert_eq!(json_field(&out, "violations"), "0", "{out}");
    assert_eq!(json_field(&out, "missed_interrupts"), "0", "{out}");
    let taken: u64 = json_field(&out, "interrupts").parse().unwrap();
    let msis = vm.server.as_ref().unwrap().stats().msi_delivered - msi0;
    eprintln!(
        "event mode: {taken} interrupts taken, {msis} MSIs delivered by the server, {event_s:.1} s"
    );
    // Most messages' completions were waited for by interrupt, and every
    // interrupt taken is an MSI the server raised.
    assert!(taken >= 50, "{out}");
    assert!(msis >= taken, "{msis} MSIs for {taken} interrupts");

    // ... and a broken interrupt path is caught: the server loses the next
    // two MSIs; each leaves a completion in its CQ with no interrupt for it
    // (a missed interrupt, exit 1).
    let lost0 = vm.server.as_ref().unwrap().stats().msi_lost;
    vm.server.as_ref().unwrap().lose_msis(2);
    let o = rnic(
        &mut vm,
        &format!("torture --device {a} --peer {b} --messages 30 --seed 7 --completions event --irq-budget 25000 --json"),
        None,
    );
    let out = o.stdout_text();
    assert_eq!(o.rc, 1, "lost MSIs caught: {out}{}", o.stderr);
    assert_eq!(vm.server.as_ref().unwrap().stats().msi_lost - lost0, 2);
    let missed: u64 = json_field(&out, "missed_interrupts").parse().unwrap();
    assert!((1..=2).contains(&missed), "{out}");
    assert!(out.contains("\"kind\":\"missed-interrupt\""), "{out}");
    assert_eq!(json_field(&out, "messages"), "30", "{out}");
    assert_eq!(json_field(&out, "violations"), "0", "{out}");

    // A torture killed (SIGKILL) mid-run leaves its functions to the next
    // process: the fresh run resets them on open, and is clean. (The
    // guest's vfio-pci turns bus mastering off and resets them when the
    // killed process's descriptors close: DMA the NICs had under way is
    // refused, counted as IOMMU faults, written nowhere.)
    let before = vm.server.as_ref().unwrap().stats();
    let t0 = Instant::now();
    let r = vm
        .sh(&format!(
            "cd /tmp/rnic-vm || exit; RNIC_PCI_CLOCK_MHZ={} /mnt/host/rnic torture --device {a} --peer {b} \
             --messages 100000 --seed 11 --completions event > killed.log 2>&1 & p=$!; \
             sleep 12; kill -0 $p && kill -9 $p; wait $p; echo exit=$?; cat killed.log",
            vm.clock_mhz
        ))
        .unwrap();
    let t_kill = Instant::now();
    // The killed functions go quiet: no DMA, refused or not, once the
    // guest's vfio-pci has closed them (the server publishes its counts
    // every 100 ms: wait until two readings 500 ms apart agree).
    let quiet = |s: &rnic_vfio_user::ServerStats| {
        (
            s.dma_writes.clone(),
            s.dma_reads.clone(),
            s.iommu_faults.clone(),
        )
    };
    let mut killed = vm.server.as_ref().unwrap().stats();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = vm.server.as_ref().unwrap().stats();
        if quiet(&now) == quiet(&killed) {
            break;
        }
        assert!(
            t_kill.elapsed() < Duration::from_secs(10),
            "DMA still under way 10 s after the kill: {now}"
        );
        killed = now;
    }
    eprintln!(
        "quiet {:.1} s after the kill returned",
        t_kill.elapsed().as_secs_f64()
    );
    eprintln!("{}", r.output);
    assert!(
        r.output.contains("exit=137"),
        "killed by SIGKILL: {}",
        r.output
    );
    assert!(
        killed.dma_writes.iter().sum::<u64>() > before.dma_writes.iter().sum::<u64>() + 100,
        "the killed torture was moving data: {killed}"
    );
    let o = rnic(
        &mut vm,
        &format!(
            "torture --device {a} --peer {b} --messages 100 --seed 12 --completions event --json"
        ),
        None,
    );
    let after = vm.server.as_ref().unwrap().stats();
    let out = o.stdout_text();
    assert_eq!(o.rc, 0, "the run after the kill: {out}{}", o.stderr);
    assert_eq!(json_field(&out, "messages"), "100", "{out}");
    assert_eq!(json_field(&out, "violations"), "0", "{out}");
    assert_eq!(json_field(&out, "missed_interrupts"), "0", "{out}");
    // Not asserted: refused DMA during the rerun. Started within about
    // 1 s of the kill, 2 of the 3 reruns whose counts were read here saw 3
    // refused DMAs on NIC A, and reruns saw 1-2 ACK timeouts (recovered:
    // every run stayed clean); started 2 s later, none in 2. Why is not
    // known yet; the counts are printed.
    assert!(
        after.resets >= killed.resets + 2,
        "both functions reset on open: {} -> {}",
        killed.resets,
        after.resets
    );
    eprintln!(
        "kill and clean rerun: {:.1} s; resets {} before the kill, {} after it, {} after the rerun; \
         IOMMU faults {:?} before the kill, {:?} after it, {:?} after the rerun",
        t0.elapsed().as_secs_f64(),
        before.resets,
        killed.resets,
        after.resets,
        before.iommu_faults,
        killed.iommu_faults,
        after.iommu_faults
    );

    // ... and a broken layer is caught, with the command that reproduces it.
    let o = rnic(
        &mut vm,
        &format!("torture --device {a} --peer {b} --messages 300 --seed 3 --break early-cqe --stop-on-failure"),
        None,
    );
    assert_eq!(o.rc, 1, "early-cqe caught: {}{}", o.stdout_text(), o.stderr);
    assert!(o.stdout_text().contains("FAILED"), "{}", o.stdout_text());
    assert!(
        o.stderr.contains(&format!(
            "reproduce with: rnic torture --device {a} --peer {b}"
        )),
        "{}",
        o.stderr
    );

    // Flash through BAR0: an image written and verified, golden refused.
    let r = vm
        .sh(
            "cd /tmp/rnic-vm && head -c 6000 /dev/urandom > bits.bin && \
             /mnt/host/rnic image pack --board sim --bitstream bits.bin -o img.rnic",
        )
        .unwrap();
    assert_eq!(r.rc, 0, "{}", r.output);
    let o = rnic(
        &mut vm,
        &format!("flash --device {a} write img.rnic -y"),
        None,
    );
    assert_eq!(o.rc, 0, "{}{}", o.stdout_text(), o.stderr);
    let o = rnic(
        &mut vm,
        &format!("flash --device {a} verify img.rnic"),
        None,
    );
    assert_eq!(o.rc, 0, "{}{}", o.stdout_text(), o.stderr);
    let o = rnic(
        &mut vm,
        &format!("flash --device {a} write img.rnic --slot golden -y"),
        None,
    );
    assert_eq!(o.rc, 2, "golden refused: {}", o.stderr);

    // Bad cases.
    let virtio = vm
        .sh("lspci -D -n -d 1af4: | head -1 | cut -d' ' -f1")
        .unwrap()
        .output
        .trim()
        .to_string();
    assert!(!virtio.is_empty(), "the guest has a virtio function");
    refused(
        &mut vm,
        &format!("info --device {virtio}"),
        None,
        "not an rnic",
    );
    refused(
        &mut vm,
        "info --device vfio:0000:00:1f.6",
        None,
        "0000:00:1f.6",
    );
    refused(
        &mut vm,
        "info --device vfio:00:03",
        None,
        "not a device name",
    );
    refused(
        &mut vm,
        &format!("info --device vfio:{a}"),
        Some("nobody"),
        "permission denied",
    );
    refused(
        &mut vm,
        &format!("info --device {small}"),
        None,
        "the register map needs 0x800",
    );
    refused(
        &mut vm,
        &format!("info --device vfio:{shared}"),
        None,
        "is shared with",
    );
    // B unbound from vfio-pci, then asked for through VFIO.
    let r = vm
        .sh(&format!(
            "echo > /sys/bus/pci/devices/{b}/driver_override && echo {b} > /sys/bus/pci/devices/{b}/driver/unbind"
        ))
        .unwrap();
    assert_eq!(r.rc, 0, "{}", r.output);
    refused(
        &mut vm,
        &format!("info --device vfio:{b}"),
        None,
        "is bound to no driver, not to vfio-pci; bind it: ",
    );

    let st = vm.stop().unwrap();
    eprintln!("server: {st}");
    assert_eq!(st.model_errors, vec![0, 0, 0, 0], "{st}");
    // The two functions every access to was refused never ran a cycle.
    assert_eq!(st.clocked, vec![true, true, false, false], "{st}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rnic_in_the_guest_without_iommu_through_sysfs() {
    if skip() {
        return;
    }
    let dir = work_dir("sysfs");
    let share = share(&dir);
    let mut c = VmConfig::new(1, "ideal", &dir);
    c.iommu = false;
    let mut vm = boot(&c, &share);
    let a = vm.bdfs[0].clone();
    assert_eq!(lspci_rnic_functions(&mut vm), vm.bdfs);
    let groups = sh_ok(&mut vm, "ls /sys/kernel/iommu_groups | wc -l");
    assert_eq!(
        groups.trim(),
        "0",
        "no IOMMU, no groups: vfio-pci cannot take the function"
    );
    // BAR0 through sysfs with no rnic code: the ID block's magic, and
    // what a register read and write cost from the guest.
    let out = sh_ok(
        &mut vm,
        &format!("python3 /mnt/host/files/mmio_probe.py {a} 300"),
    );
    eprintln!("BAR0 from the guest (sysfs, TCG): {}", out.trim());
    assert!(out.contains("magic=0x524e4943"), "{out}");
    let o = rnic(&mut vm, &format!("info --device {a}"), None);
    assert_eq!(o.rc, 0, "{}", o.stderr);
    let o = rnic(
        &mut vm,
        &format!("torture --device sysfs:{a} --onchip-loopback --messages 40 --json"),
        None,
    );
    let out = o.stdout_text();
    assert_eq!(o.rc, 0, "{out}{}", o.stderr);
    assert_eq!(json_field(&out, "messages"), "40", "{out}");
    let st = vm.stop().unwrap();
    eprintln!("server: {st}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A guest VFIO mapping made with no rnic code (tests/guest/vfio_map.py:
/// the guest kernel's VFIO type1 with the virtual IOMMU) becomes an entry
/// of the server's IOMMU table for `bdf` at the same IOVA, and leaves it
/// when the guest process exits.
fn guest_vfio_mapping_reaches_the_server(vm: &mut Vm, bdf: &str) {
    let nic = vm.bdfs.iter().position(|b| b == bdf).unwrap();
    let group = sh_ok(
        vm,
        &format!("basename $(readlink /sys/bus/pci/devices/{bdf}/iommu_group)"),
    );
    let (iova, size) = (0x4000_0000u64, 0x20_0000u64);
    let mapped = |vm: &Vm| {
        let st = vm.server.as_ref().unwrap().stats();
        let mut at = iova;
        for &(bus, len) in &st.mappings[nic] {
            if bus <= at && at < bus + len {
                at = bus + len;
            }
        }
        (at >= iova + size, st)
    };
    let overlaps = |vm: &Vm| {
        vm.server.as_ref().unwrap().stats().mappings[nic]
            .iter()
            .any(|&(b, l)| b < iova + size && iova < b + l)
    };
    assert!(!overlaps(vm), "IOVA {iova:#x} mapped before the test");
    let before = vm.server.as_ref().unwrap().stats().dma_maps;
    // The script holds its mapping 6 s: the server publishes its table
    // every 100 ms.
    vm.guest
        .start(&format!(
            "python3 /mnt/host/files/vfio_map.py {} {bdf} {iova:#x} {size:#x} 6",
            group.trim()
        ))
        .unwrap();
    let t0 = Instant::now();
    let st = loop {
        let (covered, st) = mapped(vm);
        if covered {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "IOVA {iova:#x}+{size:#x} not in NIC {nic}'s IOMMU table: {:x?}",
            st.mappings[nic]
        );
        if let Some(r) = vm.guest.poll().unwrap() {
            panic!("vfio_map.py ended early ({}):\n{}", r.rc, r.output);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "guest MAP_DMA {iova:#x}+{size:#x}: {} DMA_MAP messages at the server",
        st.dma_maps - before
    );
    let r = loop {
        if let Some(r) = vm.guest.poll().unwrap() {
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
    let t0 = Instant::now();
    while overlaps(vm) && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !overlaps(vm),
        "unmapped when the guest process exited: {:x?}",
        vm.server.as_ref().unwrap().stats().mappings[nic]
    );
}

struct ServerProcess(std::process::Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server binary next to this test's (target/release).
fn server_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("rnic-vfio-user");
    assert!(
        p.is_file(),
        "{} missing (cargo build --release -p rnic-vfio-user)",
        p.display()
    );
    p
}

/// A server process (so that it can die) and a guest on it.
fn vm_on_process(dir: &Path, share: &Path) -> (Vm, ServerProcess, Vec<PathBuf>) {
    let socks = vec![dir.join("nic0.sock"), dir.join("nic1.sock")];
    let child = Command::new(server_binary())
        .args(["--socket", socks[0].to_str().unwrap()])
        .args(["--socket", socks[1].to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("server.log")).unwrap())
        .spawn()
        .unwrap();
    let mut child = ServerProcess(child);
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(child.0.stdout.take().unwrap());
    for _ in 0..2 {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with("listening"), "{line}");
    }
    let c = VmConfig::new(2, "ideal", dir);
    let guest = Guest::boot(&c.guest(socks.clone(), share)).expect("guest");
    (Vm::setup(guest, None, &c).unwrap(), child, socks)
}

#[test]
fn a_dying_server_ends_the_guest_command_and_the_next_run_is_clean() {
    if skip() {
        return;
    }
    let dir = work_dir("death");
    let share = share(&dir);
    let (mut vm, mut server, socks) = vm_on_process(&dir, &share);
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(8));
        let _ = server.0.kill();
        let _ = server.0.wait();
        Instant::now()
    });
    let args = words("torture --messages 100000 --seed 5");
    let r = vm.rnic(&args, None, Duration::from_secs(300), &mut |_| {});
    let killed = killer.join().unwrap();
    let err = match r {
        Ok(o) => panic!(
            "the command ended by itself (exit {}): {}{}",
            o.rc,
            o.stdout_text(),
            o.stderr
        ),
        Err(e) => e,
    };
    eprintln!(
        "{:.1} s after the kill: {err:#}",
        killed.elapsed().as_secs_f64()
    );
    match err.downcast_ref::<GuestError>() {
        Some(GuestError::DeviceLost { device, .. }) => {
            // Both NICs were that process's: both are named.
            for s in &socks {
                assert!(device.contains(s.to_str().unwrap()), "{device}");
            }
            assert!(!device.contains("one of"), "{device}");
        }
        _ => panic!("expected DeviceLost, got {err:#}"),
    }
    drop(vm);

    // The next run: a fresh server and guest, clean.
    let (mut vm, _server, _) = vm_on_process(&dir, &share);
    let o = rnic(&mut vm, "torture --messages 30 --seed 5 --json", None);
    assert_eq!(o.rc, 0, "{}{}", o.stdout_text(), o.stderr);
    vm.guest.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
