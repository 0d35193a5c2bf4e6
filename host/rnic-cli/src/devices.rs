//! Naming, finding and opening devices (`--device`).

use std::fmt;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use rnic_device::Device;
use rnic_driver::Nic;

/// Which device to use.
#[derive(Args, Clone, Debug)]
pub struct DeviceArgs {
    /// `sim` (the Verilator model of the RTL), or a board's PCI function:
    /// `BDF` (e.g. 0000:03:00.0), `vfio:BDF` or `sysfs:BDF`.
    #[arg(long, short = 'd', default_value = "sim")]
    pub device: String,
    /// Data-path width of the simulated NIC (64 or 256).
    #[arg(long, default_value_t = 64, value_parser = parse_data_w)]
    pub data_w: u32,
    /// Seed of every random choice in the simulator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Which build of the simulated core: `full` (every verb, both
    /// transports, and RDMA READ served: `READ_EN=1`), `write-only` (`rnic build --verbs write`) or `mp-only`
    /// (`--transports mp --verbs write`), each with 64 QPs, or `many-qps`
    /// (`full` with 1,024 QPs); all but `full` at DATA_W 64.
    #[arg(long, default_value = "full")]
    pub sim_model: SimModel,
    /// Step the two simulated NICs of a pair on a thread each: `auto` when
    /// the machine has a core per NIC, `on`, or `off`. The results are the
    /// same bit for bit (only the wall time changes); the environment
    /// variable RNIC_SIM_THREADS (0, 1, auto) overrides it.
    #[arg(long, default_value = "auto")]
    pub sim_threads: SimThreads,
}

/// `--sim-threads`: whether a simulated world steps its NICs in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimThreads {
    Off,
    On,
    Auto,
}

#[cfg(feature = "sim")]
impl From<SimThreads> for rnic_sim::Parallel {
    fn from(t: SimThreads) -> Self {
        match t {
            SimThreads::Off => Self::Off,
            SimThreads::On => Self::On,
            SimThreads::Auto => Self::Auto,
        }
    }
}

/// `--sim-model`: rnic_sim's knob sets, named without needing the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimModel {
    Full,
    WriteOnly,
    MpOnly,
    ManyQps,
}

impl DeviceArgs {
    /// ` --sim-model M` when it is not the default, for the reproducing
    /// command of a simulated run (empty otherwise).
    pub fn sim_model_flag(&self) -> String {
        use clap::ValueEnum;
        match self.sim_model {
            SimModel::Full => String::new(),
            m => format!(
                " --sim-model {}",
                m.to_possible_value()
                    .expect("no skipped variant")
                    .get_name()
            ),
        }
    }
}

#[cfg(feature = "sim")]
impl From<SimModel> for rnic_sim::ModelKnobs {
    fn from(m: SimModel) -> Self {
        match m {
            SimModel::Full => Self::Full,
            SimModel::WriteOnly => Self::WriteOnly,
            SimModel::MpOnly => Self::MpOnly,
            SimModel::ManyQps => Self::ManyQps,
        }
    }
}

fn parse_data_w(s: &str) -> std::result::Result<u32, String> {
    match s.parse::<u32>() {
        Ok(w @ (64 | 256)) => Ok(w),
        _ => Err(format!("data-path width must be 64 or 256, not {s}")),
    }
}

/// How a PCI function is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// VFIO if the function is bound to vfio-pci, else sysfs.
    Auto,
    Vfio,
    Sysfs,
}

/// What `--device` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Sim,
    Pci { addr: String, backend: Backend },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Sim => f.write_str("sim"),
            Target::Pci { addr, backend } => match backend {
                Backend::Auto => f.write_str(addr),
                Backend::Vfio => write!(f, "vfio:{addr}"),
                Backend::Sysfs => write!(f, "sysfs:{addr}"),
            },
        }
    }
}

/// Parses `--device`.
pub fn parse_target(s: &str) -> Result<Target> {
    if s == "sim" {
        return Ok(Target::Sim);
    }
    let (backend, addr) = match s.split_once(':') {
        Some(("vfio", a)) => (Backend::Vfio, a),
        Some(("sysfs", a)) => (Backend::Sysfs, a),
        _ => (Backend::Auto, s),
    };
    match rnic_pci::parse_bdf(addr) {
        Some(addr) => Ok(Target::Pci { addr, backend }),
        None => bail!(
            "--device {s}: not a device name (sim, a PCI address such as 0000:03:00.0, vfio:BDF or sysfs:BDF)"
        ),
    }
}

/// The error for a simulator device in a build without the simulator.
#[cfg(not(feature = "sim"))]
pub fn no_sim(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} needs the simulator, and this rnic was built without it (cargo feature `sim`, on by default; it needs Verilator)"
    )
}

/// The error for a PCI function given to a command that runs on the
/// simulator only.
fn sim_only(t: &Target) -> anyhow::Error {
    anyhow::anyhow!("--device {t}: this command runs on the simulator only (--device sim)")
}

/// Checks that `args` names the simulator, for the commands that only run
/// there (fuzz, bench, interop).
pub fn require_sim(args: &DeviceArgs) -> Result<()> {
    match parse_target(&args.device)? {
        #[cfg(feature = "sim")]
        Target::Sim => Ok(()),
        #[cfg(not(feature = "sim"))]
        Target::Sim => Err(no_sim("--device sim")),
        t => Err(sim_only(&t)),
    }
}

/// A simulated NIC at `args`' width and seed, with `cfg`'s other settings.
#[cfg(feature = "sim")]
pub fn open_sim(args: &DeviceArgs, cfg: rnic_sim::SimConfig) -> Result<Nic<rnic_sim::SimDevice>> {
    use anyhow::Context;
    require_sim(args)?;
    let dev = rnic_sim::SimDevice::new(rnic_sim::SimConfig {
        data_w: args.data_w,
        knobs: args.sim_model.into(),
        seed: args.seed,
        ..cfg
    })
    .context("starting the simulator")?;
    Nic::open(dev).context("opening the simulated NIC")
}

/// The device `args` names, whatever its backend. A PCI function is
/// opened by `rnic-pci`: `vfio:BDF` through VFIO, `sysfs:BDF` through
/// sysfs `resource0`, a plain `BDF` through VFIO when it is bound to
/// vfio-pci and through sysfs otherwise. Either backend refuses a function
/// that is not an rnic (PCI IDs, then the ID block) before writing to it.
pub fn open_device(args: &DeviceArgs) -> Result<Box<dyn Device>> {
    match parse_target(&args.device)? {
        #[cfg(feature = "sim")]
        Target::Sim => {
            use anyhow::Context;
            Ok(Box::new(
                rnic_sim::SimDevice::new(rnic_sim::SimConfig {
                    data_w: args.data_w,
                    knobs: args.sim_model.into(),
                    seed: args.seed,
                    ..rnic_sim::SimConfig::default()
                })
                .context("starting the simulator")?,
            ))
        }
        #[cfg(not(feature = "sim"))]
        Target::Sim => Err(no_sim("--device sim")),
        Target::Pci { addr, backend } => open_pci(&addr, backend),
    }
}

/// Opens a PCI function with the backend `backend` names.
fn open_pci(addr: &str, backend: Backend) -> Result<Box<dyn Device>> {
    let sysfs = rnic_pci::Sysfs::from_env();
    let backend = match backend {
        Backend::Auto => {
            let f = sysfs.function(addr)?;
            f.check_rnic()?;
            if f.driver.as_deref() == Some("vfio-pci") {
                Backend::Vfio
            } else {
                Backend::Sysfs
            }
        }
        b => b,
    };
    Ok(match backend {
        Backend::Vfio => Box::new(rnic_pci::VfioDevice::open_with(
            &sysfs,
            addr,
            rnic_pci::vfio::Options::default(),
        )?),
        _ => Box::new(rnic_pci::SysfsDevice::open_in(&sysfs, addr)?),
    })
}

/// The device `args` names, whatever its backend, opened as an rnic: its
/// ID block checked before anything is written to it.
pub fn open(args: &DeviceArgs) -> Result<Nic<Box<dyn Device>>> {
    use anyhow::Context;
    let dev = open_device(args)?;
    let name = dev.name();
    Nic::open(dev).with_context(|| format!("opening {name}"))
}

/// rnic functions under the sysfs root (`RNIC_SYSFS_ROOT` or `/sys`), by
/// PCI vendor and device ID.
pub fn find_boards() -> Vec<rnic_pci::Function> {
    rnic_pci::discover(&rnic_pci::Sysfs::from_env())
        .into_iter()
        .filter(|f| f.is_rnic())
        .collect()
}

#[derive(Args)]
pub struct ListArgs {
    /// One JSON object per device.
    #[arg(long)]
    pub json: bool,
}

pub fn list(a: &ListArgs) -> Result<ExitCode> {
    let boards = find_boards();
    let sim = cfg!(feature = "sim");
    if a.json {
        if sim {
            println!(
                "{}",
                serde_json::json!({"device": "sim", "kind": "simulation", "data_w": [64, 256]})
            );
        }
        for b in &boards {
            let plan = b.open_plan();
            println!(
                "{}",
                serde_json::json!({
                    "device": b.bdf,
                    "kind": "pci",
                    "vendor": format!("{:04x}", b.vendor),
                    "device_id": format!("{:04x}", b.device),
                    "driver": b.driver,
                    "iommu_group": b.iommu_group,
                    "iommu": b.iommu_on,
                    "noiommu_mode": b.noiommu_mode,
                    "bar0_len": b.bar0_len,
                    "opens_with": plan.as_ref().ok(),
                    "why_not": plan.as_ref().err(),
                    "vfio": b.check_vfio().err().map(|e| e.to_string()),
                    "bind_vfio": b.bind_commands(),
                    "driverctl": b.driverctl_command(),
                })
            );
        }
    } else {
        if sim {
            println!("sim            Verilator model of the rnic RTL (--data-w 64 or 256)");
        } else {
            println!("(no simulator: this rnic was built without the `sim` feature)");
        }
        for b in &boards {
            let group = b
                .iommu_group
                .map_or("no IOMMU group".to_string(), |g| format!("IOMMU group {g}"));
            let driver = b.driver.as_deref().unwrap_or("no driver");
            let open = match b.open_plan() {
                Ok(via) => format!("opens with {via}:{}", b.bdf),
                Err(why) => format!("cannot open: {why}"),
            };
            println!(
                "{:<14} rnic PCI {:04x}:{:04x}, {driver}, {group}; {open}",
                b.bdf, b.vendor, b.device
            );
            if b.check_vfio().is_err() && b.is_rnic() {
                println!("               to bind it to vfio-pci (as root):");
                for c in b.bind_commands() {
                    println!("                 {c}");
                }
                println!("               or: {}", b.driverctl_command());
            }
        }
        if boards.is_empty() {
            println!(
                "(no rnic functions in {})",
                rnic_pci::Sysfs::from_env().devices_dir().display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse() {
        assert_eq!(parse_target("sim").unwrap(), Target::Sim);
        let pci = |a: &str, backend| Target::Pci {
            addr: a.into(),
            backend,
        };
        assert_eq!(
            parse_target("0000:03:00.0").unwrap(),
            pci("0000:03:00.0", Backend::Auto)
        );
        assert_eq!(
            parse_target("03:00.1").unwrap(),
            pci("0000:03:00.1", Backend::Auto)
        );
        assert_eq!(
            parse_target("vfio:0000:0A:1f.7").unwrap(),
            pci("0000:0a:1f.7", Backend::Vfio)
        );
        assert_eq!(
            parse_target("sysfs:00:03.0").unwrap(),
            pci("0000:00:03.0", Backend::Sysfs)
        );
        for bad in [
            "",
            "simulator",
            "0000:03:00",
            "0000:03:20.0",
            "03:00.8",
            "vfio:",
            "x:03:00.0",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
