//! `rnic vm`: the full system in one command. Simulated NICs (the
//! Verilator model of the RTL, joined by a simulated fabric) are served as
//! PCIe functions over vfio-user (`rnic-vfio-user`, in this process) to a
//! QEMU guest (`host/rnic-interop`'s runner, the rxe image in its `vfio`
//! role), and the hardware-only `rnic` (built without the simulator) runs
//! inside the guest against the guest's own PCI functions, through the
//! guest kernel's VFIO (with a virtual IOMMU) or sysfs (`--no-iommu`).
//!
//!     rnic vm -- torture --messages 200 --seed 7 --json
//!
//! The guest command's standard output comes back byte for byte, its
//! standard error line by line, and its exit status unchanged. When the
//! arguments name no device (`info`, `regs`, `flash`, `torture`), the
//! guest's functions are supplied: `--device A` and, for `torture` with two
//! NICs or more, `--peer B` (with one NIC, `--onchip-loopback`). With the
//! IOMMU the functions are bound to vfio-pci first, by the commands `rnic
//! list` prints (`driver_override`, `drivers_probe`), so a plain `--device
//! BDF` opens them through VFIO; without it they stay unbound and open
//! through sysfs (huge pages are reserved for DMA by physical address).
//! (`rnic_interop::vm` does the work.)
//!
//! Every run boots a fresh guest and server, so a run never inherits a
//! dead server or a half-programmed NIC from the one before.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use rnic_interop::vm::{
    hardware_rnic, make_share, supply_devices, Vm, VmConfig, DEFAULT_CLOCK_MHZ,
};
use rnic_interop::GuestError;

#[derive(Args, Debug)]
pub struct VmArgs {
    /// Simulated NICs (one PCI function each in the guest).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub nics: u32,
    /// Fabric profile joining the NICs' ports (ideal, lossy, reorder,
    /// hostile, spray-K, spray-K-hostile, ...).
    #[arg(long, default_value = "ideal")]
    pub fabric: String,
    /// No virtual IOMMU: the guest reaches the functions through sysfs
    /// (registers through resource0, DMA by physical address from huge
    /// pages). Debian's guest kernel has no VFIO no-IOMMU mode.
    #[arg(long)]
    pub no_iommu: bool,
    /// The `rnic` to run in the guest (default: build the hardware-only
    /// one, `cargo build --release -p rnic-cli --no-default-features`, into
    /// target/no-sim).
    #[arg(long)]
    pub rnic: Option<PathBuf>,
    /// A file the guest command needs (e.g. an image for `flash write`),
    /// copied into its working directory (repeatable).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Guest image directory (vmlinuz, initrd.img, rootfs.ext4).
    #[arg(long, env = "RNIC_GUEST_IMAGE", default_value_os_t = rnic_interop::vm::default_image())]
    pub image: PathBuf,
    /// Sockets, the share, the console and QEMU's log go here (default: a
    /// new folder under the temporary directory, removed after a clean
    /// run).
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// Seed of the simulated world (fabric and model randomness).
    #[arg(long, default_value_t = 1)]
    pub sim_seed: u64,
    /// DATA_W of the simulated NICs (64 or 256).
    #[arg(long, default_value_t = 64)]
    pub sim_data_w: u32,
    /// The simulated NIC's clock as `rnic` in the guest counts it, in MHz
    /// (RNIC_PCI_CLOCK_MHZ in the guest): how fast the server simulates.
    /// Lower makes watchdogs and settling wait longer.
    #[arg(long, default_value_t = DEFAULT_CLOCK_MHZ)]
    pub clock_mhz: f64,
    /// Run the guest command as this guest user instead of root (e.g.
    /// nobody).
    #[arg(long)]
    pub user: Option<String>,
    /// Leave the functions unbound (no vfio-pci), as a fresh machine has
    /// them.
    #[arg(long)]
    pub no_bind: bool,
    /// Keep NIC i's flash in DIR/nicI.flash across runs.
    #[arg(long)]
    pub flash_dir: Option<PathBuf>,
    /// Advertise a BAR0 of this many bytes (a function smaller than the
    /// register map, which rnic must refuse).
    #[arg(long, value_parser = parse_size, hide = true)]
    pub bar0_size: Option<u64>,
    /// Seconds the guest may take to boot.
    #[arg(long, default_value_t = 240)]
    pub boot_timeout: u64,
    /// Seconds the guest command may run.
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
    /// Print the server's counters (cycles, BAR0 reads and their cost, DMA)
    /// and the guest's boot time on stderr at the end.
    #[arg(long)]
    pub stats: bool,
    /// The `rnic` command line to run in the guest (after `--`).
    #[arg(last = true, required = true, value_name = "RNIC ARGS")]
    pub args: Vec<String>,
}

fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("{s}: {e}"))
}

fn say(m: impl std::fmt::Display) {
    eprintln!("rnic vm: {m}");
}

pub fn run(a: &VmArgs) -> Result<ExitCode> {
    rnic_sim::FabricConfig::profile(&a.fabric).map_err(|e| anyhow!("--fabric: {e}"))?;
    if a.sim_data_w != 64 && a.sim_data_w != 256 {
        bail!("--sim-data-w must be 64 or 256");
    }
    if !(a.clock_mhz.is_finite() && a.clock_mhz > 0.0) {
        bail!("--clock-mhz must be above 0");
    }
    let rnic = hardware_rnic(a.rnic.as_deref())?;
    let (run_dir, temporary) = match &a.run_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rnic-vm-{}", std::process::id())),
            true,
        ),
    };
    let share = run_dir.join("share");
    make_share(&share, &rnic, &a.files)?;
    let cfg = VmConfig {
        nics: a.nics as usize,
        fabric: a.fabric.clone(),
        iommu: !a.no_iommu,
        bind: !a.no_bind,
        image: a.image.clone(),
        run_dir: run_dir.clone(),
        seed: a.sim_seed,
        data_w: a.sim_data_w,
        clock_mhz: a.clock_mhz,
        flash_dir: a.flash_dir.clone(),
        bar0_sizes: vec![a.bar0_size; a.nics as usize],
        shared_group: None,
        boot_timeout: Duration::from_secs(a.boot_timeout),
    };
    let mut vm = Vm::start(&cfg, &share)?;
    let args = supply_devices(&a.args, &vm.bdfs);
    if args != a.args {
        say(format!(
            "{} NIC(s) on fabric {}, {}: rnic {}",
            a.nics,
            a.fabric,
            if a.no_iommu {
                "sysfs (no IOMMU)"
            } else {
                "VFIO with the virtual IOMMU"
            },
            args.join(" ")
        ));
    }
    let res = vm.rnic(
        &args,
        a.user.as_deref(),
        Duration::from_secs(a.timeout),
        &mut |s| {
            eprint!("{s}");
        },
    );
    let boot = vm.guest.boot_time;
    let out = match res {
        Ok(o) => o,
        Err(e) => {
            // The guest and server go; the run dir stays for the logs.
            let lost = matches!(
                e.downcast_ref::<GuestError>(),
                Some(GuestError::DeviceLost { .. })
            );
            drop(vm);
            if lost {
                return Err(e.context("the guest's command lost its device"));
            }
            return Err(e.context(format!("logs in {}", run_dir.display())));
        }
    };
    std::io::stdout().write_all(&out.stdout)?;
    std::io::stdout().flush()?;
    let st = vm.stop();
    if a.stats {
        say(format!("guest boot {:.1} s", boot.as_secs_f64()));
        if let Some(st) = st {
            say(format!("server: {st}"));
        }
    }
    if temporary && out.rc == 0 {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    Ok(ExitCode::from(out.rc.clamp(0, 255) as u8))
}
