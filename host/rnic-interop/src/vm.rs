//! The full system for `rnic` commands: simulated NICs (the Verilator
//! model of the RTL, joined by a simulated fabric) served as PCIe functions
//! over vfio-user (`rnic-vfio-user`, in this process) to a QEMU guest in
//! its `vfio` role ([`crate::guest`]), and an `rnic` binary shared into the
//! guest at `/mnt/host` run there against the guest's own functions,
//! through the guest kernel's VFIO (with a virtual IOMMU) or sysfs.
//! `rnic vm` is the command line of this; the tests use it to run many
//! guest commands in one boot.
//!
//! With the IOMMU the functions are bound to vfio-pci by the commands
//! `rnic list` prints (`driver_override`, `drivers_probe`), so a plain
//! `--device BDF` opens them through VFIO; without it they stay unbound and
//! open through sysfs, and huge pages are reserved for DMA by physical
//! address.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};

use crate::{Guest, GuestConfig, GuestError};

/// The commands that take `--device`.
const DEVICE_COMMANDS: &[&str] = &["info", "regs", "flash", "torture"];

/// Default speed of the simulated NIC as `now()` counts it in the guest
/// (`RNIC_PCI_CLOCK_MHZ`): a conservative guess of the server's simulated
/// clock on a loaded 2-core machine (0.1-0.2 M cycles/s there). Lower is
/// safe: watchdogs and settling wait longer.
pub const DEFAULT_CLOCK_MHZ: f64 = 0.05;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The hardware-only `rnic`: `--rnic`, or built now into target/no-sim.
pub fn hardware_rnic(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        if !p.is_file() {
            bail!("--rnic {}: no such file", p.display());
        }
        return Ok(p.to_path_buf());
    }
    let root = repo_root();
    let target = root.join("target/no-sim");
    let st = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args([
            "build",
            "-q",
            "--release",
            "-p",
            "rnic-cli",
            "--no-default-features",
            "--target-dir",
        ])
        .arg(&target)
        .status()
        .context("running cargo to build the hardware-only rnic (or give --rnic PATH)")?;
    if !st.success() {
        bail!("cargo build --release -p rnic-cli --no-default-features failed ({st}); or give --rnic PATH");
    }
    Ok(target.join("release/rnic"))
}

/// One shell word.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `args` with the guest's functions supplied where they name none:
/// `--device A` for the commands that take a device, and for `torture`
/// `--peer B` (or `--onchip-loopback` with one function).
pub fn supply_devices(args: &[String], bdfs: &[String]) -> Vec<String> {
    let Some(cmd) = args.first() else {
        return args.to_vec();
    };
    let named = |flag: &str| {
        args.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    if !DEVICE_COMMANDS.contains(&cmd.as_str())
        || named("--device")
        || args.iter().any(|a| a == "-d" || a.starts_with("-d"))
        || bdfs.is_empty()
        || args.iter().any(|a| a == "--help" || a == "-h")
    {
        return args.to_vec();
    }
    let mut extra = vec!["--device".to_string(), bdfs[0].clone()];
    if cmd == "torture"
        && !named("--peer")
        && !named("--onchip-loopback")
        && !args.iter().any(|a| a == "--transport=local-copy")
    {
        if bdfs.len() >= 2 {
            extra.extend(["--peer".to_string(), bdfs[1].clone()]);
        } else {
            extra.push("--onchip-loopback".into());
        }
    }
    let mut out = vec![cmd.clone()];
    out.extend(extra);
    out.extend(args[1..].iter().cloned());
    out
}

/// Hex dump (`od -An -v -tx1`) back to bytes.
fn unhex(s: &str) -> Result<Vec<u8>> {
    s.split_whitespace()
        .map(|w| u8::from_str_radix(w, 16).map_err(|e| anyhow!("guest output dump: {w:?}: {e}")))
        .collect()
}

/// Lays out a share folder: `rnic` at its top, `files` (and nothing
/// else) under `files/` (the guest command's working directory gets a
/// copy of them). The folder itself stays, so a guest that has it mounted
/// sees the new contents.
pub fn make_share(share: &Path, rnic: &Path, files: &[PathBuf]) -> Result<()> {
    let _ = std::fs::remove_dir_all(share.join("files"));
    std::fs::create_dir_all(share.join("files"))?;
    put(rnic, share, "rnic")?;
    for f in files {
        let name = f
            .file_name()
            .ok_or_else(|| anyhow!("{}: not a file name", f.display()))?;
        put(f, &share.join("files"), &name.to_string_lossy())?;
    }
    Ok(())
}

/// Copies `from` into `dir` (a hard link when it can).
fn put(from: &Path, dir: &Path, name: &str) -> Result<()> {
    let to = dir.join(name);
    let _ = std::fs::remove_file(&to);
    if std::fs::hard_link(from, &to).is_err() {
        std::fs::copy(from, &to)
            .with_context(|| format!("copying {} into {}", from.display(), dir.display()))?;
    }
    Ok(())
}

/// The guest's rnic functions, in address order (= NIC order).
const LIST_FUNCTIONS: &str = "for d in /sys/bus/pci/devices/*; do \
     [ \"$(cat $d/vendor) $(cat $d/device)\" = '0x1234 0x4e49' ] && echo ${d##*/}; done; true";

/// Binds every function to vfio-pci with the commands `rnic list` prints,
/// and checks that each got it.
fn bind_script(bdfs: &[String]) -> String {
    let mut s = String::from("modprobe vfio-pci; ");
    for b in bdfs {
        let d = format!("/sys/bus/pci/devices/{b}");
        s += &format!(
            "[ -e {d}/driver ] && echo {b} > {d}/driver/unbind; \
             echo vfio-pci > {d}/driver_override; echo {b} > /sys/bus/pci/drivers_probe; "
        );
    }
    s += "for d in";
    for b in bdfs {
        s += &format!(" {b}");
    }
    s += "; do echo $d $(basename $(readlink /sys/bus/pci/devices/$d/driver 2>/dev/null) 2>/dev/null) \
          $(basename $(readlink /sys/bus/pci/devices/$d/iommu_group 2>/dev/null) 2>/dev/null); done";
    s
}

/// A guest with the server behind it, set up for `rnic` runs.
pub struct Vm {
    pub guest: Guest,
    /// The server, when it runs in this process (None: the caller's, e.g.
    /// an `rnic-vfio-user` process).
    pub server: Option<rnic_vfio_user::ServerHandle>,
    /// The guest's rnic functions, NIC order.
    pub bdfs: Vec<String>,
    pub clock_mhz: f64,
}

/// What a guest command gave back.
pub struct Outcome {
    pub rc: i32,
    pub stdout: Vec<u8>,
    /// Standard error (with any output the agent itself adds), line by
    /// line.
    pub stderr: String,
}

impl Outcome {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// How a [`Vm`] is made.
#[derive(Debug, Clone)]
pub struct VmConfig {
    pub nics: usize,
    pub fabric: String,
    pub iommu: bool,
    /// Bind the functions to vfio-pci (with the IOMMU).
    pub bind: bool,
    pub image: PathBuf,
    pub run_dir: PathBuf,
    pub seed: u64,
    pub data_w: u32,
    pub clock_mhz: f64,
    pub flash_dir: Option<PathBuf>,
    /// Per NIC: advertise a BAR0 of this size (see
    /// `rnic_vfio_user::ServerConfig::bar0_sizes`).
    pub bar0_sizes: Vec<Option<u64>>,
    /// Put this NIC behind a PCIe-to-PCI bridge with a virtio device, so
    /// its IOMMU group is shared ([`GuestConfig::shared_group`]).
    pub shared_group: Option<usize>,
    pub boot_timeout: Duration,
}

impl VmConfig {
    /// `nics` NICs on `fabric`, with the IOMMU, bound, the default image.
    pub fn new(nics: usize, fabric: &str, run_dir: impl Into<PathBuf>) -> Self {
        Self {
            nics,
            fabric: fabric.into(),
            iommu: true,
            bind: true,
            image: default_image(),
            run_dir: run_dir.into(),
            seed: 1,
            data_w: 64,
            clock_mhz: DEFAULT_CLOCK_MHZ,
            flash_dir: None,
            bar0_sizes: Vec::new(),
            shared_group: None,
            boot_timeout: Duration::from_secs(240),
        }
    }

    /// The guest's configuration for the functions behind `sockets`.
    pub fn guest(&self, sockets: Vec<PathBuf>, share: &Path) -> GuestConfig {
        let mut gc =
            GuestConfig::vfio(&self.image, self.run_dir.join("guest"), sockets, self.iommu);
        gc.share = Some(share.to_path_buf());
        gc.boot_timeout = self.boot_timeout;
        gc.shared_group = self.shared_group;
        gc
    }
}

/// `target/rxe-guest` of this checkout, or `RNIC_GUEST_IMAGE`.
pub fn default_image() -> PathBuf {
    std::env::var_os("RNIC_GUEST_IMAGE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/rxe-guest"))
}

impl Vm {
    /// Starts the server in this process, boots the guest with `share` at
    /// /mnt/host and sets it up ([`Vm::setup`]).
    pub fn start(c: &VmConfig, share: &Path) -> Result<Self> {
        let fabric = rnic_sim::FabricConfig::profile(&c.fabric).map_err(|e| anyhow!("{e}"))?;
        std::fs::create_dir_all(&c.run_dir)?;
        let world = rnic_sim::WorldConfig {
            nics: c.nics,
            data_w: c.data_w,
            seed: c.seed,
            fabric,
            ..rnic_sim::WorldConfig::default()
        };
        let mut sc = rnic_vfio_user::ServerConfig::new(world, &c.run_dir);
        sc.flash_dir = c.flash_dir.clone();
        sc.bar0_sizes = c.bar0_sizes.clone();
        let server = rnic_vfio_user::start(sc).context("starting the vfio-user server")?;
        let guest = Guest::boot(&c.guest(server.sockets().to_vec(), share)).map_err(|e| match e {
            GuestError::ImageMissing { .. } | GuestError::QemuMissing(_) => anyhow!(
                "{e} (the vfio-user QEMU: sim/vm/install-qemu.sh; the image: sim/rxe-guest/build-image.sh {})",
                c.image.display()
            ),
            e => anyhow!(e),
        })?;
        Self::setup(guest, Some(server), c)
    }

    /// Sets a booted guest up for `rnic` runs: finds the rnic functions,
    /// binds them to vfio-pci (with the IOMMU, unless `c.bind` is off) or
    /// reserves huge pages (without), makes the working directory.
    pub fn setup(
        mut guest: Guest,
        server: Option<rnic_vfio_user::ServerHandle>,
        c: &VmConfig,
    ) -> Result<Self> {
        let out = guest.run(LIST_FUNCTIONS, Duration::from_secs(60))?;
        let bdfs: Vec<String> = out.output.split_whitespace().map(str::to_string).collect();
        if bdfs.len() != c.nics {
            bail!(
                "the guest shows {} rnic functions ({}), the server serves {}; console: {}",
                bdfs.len(),
                bdfs.join(" "),
                c.nics,
                guest.console_path().display()
            );
        }
        if c.iommu && c.bind {
            let r = guest.run(&bind_script(&bdfs), Duration::from_secs(120))?;
            for b in &bdfs {
                let ok = r.output.lines().any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.first() == Some(&b.as_str()) && f.get(1) == Some(&"vfio-pci")
                });
                if !ok {
                    bail!("binding {b} to vfio-pci in the guest failed:\n{}", r.output);
                }
            }
        }
        if !c.iommu {
            // DMA by physical address comes from 2 MiB huge pages.
            guest.run(
                "echo 64 > /proc/sys/vm/nr_hugepages",
                Duration::from_secs(60),
            )?;
        }
        guest.run(
            "rm -rf /tmp/rnic-vm && mkdir -p /tmp/rnic-vm && chmod 1777 /tmp/rnic-vm",
            Duration::from_secs(30),
        )?;
        Ok(Self {
            guest,
            server,
            bdfs,
            clock_mhz: c.clock_mhz,
        })
    }

    /// Runs one shell command in the guest (setup, or a bad case), output
    /// and status.
    pub fn sh(&mut self, cmd: &str) -> Result<crate::guest::CmdResult> {
        Ok(self.guest.run(cmd, Duration::from_secs(300))?)
    }

    /// Runs `/mnt/host/rnic ARGS` in the guest's working directory (the
    /// share's `files/` copied in), as `user` if given, with the guest's
    /// functions supplied where ARGS name no device ([`supply_devices`]). Standard error
    /// goes to `on_stderr` as it comes; standard output is collected
    /// whole.
    pub fn rnic(
        &mut self,
        args: &[String],
        user: Option<&str>,
        limit: Duration,
        on_stderr: &mut dyn FnMut(&str),
    ) -> Result<Outcome> {
        let args = supply_devices(args, &self.bdfs);
        let words: Vec<String> = args.iter().map(|a| quote(a)).collect();
        let mut cmd = format!(
            "cd /tmp/rnic-vm && {{ [ ! -d /mnt/host/files ] || cp -f /mnt/host/files/* . 2>/dev/null; true; }} && \
             RNIC_PCI_CLOCK_MHZ={} ",
            self.clock_mhz
        );
        if let Some(u) = user {
            cmd += &format!(
                "setpriv --reuid={u} --regid=$(id -g {u}) --clear-groups --inh-caps=-all "
            );
        }
        cmd += &format!("/mnt/host/rnic {} >/tmp/rnic-vm.out", words.join(" "));
        self.guest.start(&cmd)?;
        let mut shown = 0;
        let t0 = Instant::now();
        let r = loop {
            let polled = self.guest.poll();
            let so_far = self.guest.output_so_far();
            if so_far.len() > shown {
                on_stderr(&so_far[shown..]);
                shown = so_far.len();
            }
            match polled {
                Ok(Some(r)) => break r,
                Ok(None) => {}
                Err(e) => return Err(e.into()),
            }
            if t0.elapsed() > limit {
                self.guest.check_deadline(limit)?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if r.output.len() > shown {
            on_stderr(&r.output[shown..]);
        }
        let dump = self
            .guest
            .run("od -An -v -tx1 /tmp/rnic-vm.out", Duration::from_secs(600))?;
        if dump.rc != 0 {
            bail!("reading the guest command's output: {}", dump.output);
        }
        Ok(Outcome {
            rc: r.rc,
            stdout: unhex(&dump.output)?,
            stderr: r.output,
        })
    }

    /// Powers the guest off, then stops the server (its counters).
    pub fn stop(self) -> Option<rnic_vfio_user::ServerStats> {
        self.guest.shutdown();
        self.server.map(|s| s.stop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn devices_are_supplied_where_none_is_named() {
        let b = v("0000:00:03.0 0000:00:04.0");
        assert_eq!(
            supply_devices(&v("torture --messages 200 --seed 7 --json"), &b),
            v("torture --device 0000:00:03.0 --peer 0000:00:04.0 --messages 200 --seed 7 --json")
        );
        assert_eq!(
            supply_devices(&v("torture --onchip-loopback"), &b),
            v("torture --device 0000:00:03.0 --onchip-loopback")
        );
        assert_eq!(
            supply_devices(&v("torture"), &b[..1]),
            v("torture --device 0000:00:03.0 --onchip-loopback")
        );
        assert_eq!(
            supply_devices(&v("flash write img.rnic -y"), &b),
            v("flash --device 0000:00:03.0 write img.rnic -y")
        );
        for kept in [
            "list",
            "info --device sysfs:00:03.0",
            "regs --device=00:04.0",
            "torture -d 00:03.0 --peer 00:04.0",
            "info --help",
        ] {
            assert_eq!(supply_devices(&v(kept), &b), v(kept), "{kept}");
        }
    }

    #[test]
    fn words_are_quoted_for_the_guest_shell() {
        assert_eq!(quote("--device"), "--device");
        assert_eq!(quote("vfio:0000:00:03.0"), "vfio:0000:00:03.0");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(unhex(" 7b 0a\n ff").unwrap(), vec![0x7b, 0x0a, 0xff]);
    }
}
