//! Naming, finding and opening devices (`--device`).

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use rnic_device::Device;
use rnic_driver::Nic;

/// PCI vendor and device ID rnic boards enumerate with (set in the board's
/// PCIe core configuration).
pub const PCI_IDS: &[(u16, u16)] = &[(0x1234, 0x4e49)];

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

/// A PCI address `DDDD:BB:DD.F` (domain optional, `0000` assumed), as
/// sysfs spells it.
fn parse_bdf(s: &str) -> Option<String> {
    let full = if s.matches(':').count() == 1 {
        format!("0000:{s}")
    } else {
        s.to_string()
    };
    let (dom, rest) = full.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    let hex = |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_hexdigit());
    let ok = hex(dom, 4)
        && hex(bus, 2)
        && hex(dev, 2)
        && u8::from_str_radix(dev, 16).is_ok_and(|d| d < 32)
        && func.len() == 1
        && matches!(func.as_bytes()[0], b'0'..=b'7');
    ok.then(|| full.to_ascii_lowercase())
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
    match parse_bdf(addr) {
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

/// The error for a board: no hardware backend exists yet.
fn no_backend(t: &Target) -> anyhow::Error {
    let Target::Pci { addr, .. } = t else {
        unreachable!("only PCI targets have backends")
    };
    if find_boards().iter().any(|b| &b.address == addr) {
        anyhow::anyhow!(
            "{t} is an rnic board, but the hardware backends (VFIO, sysfs) are not implemented yet; use --device sim"
        )
    } else {
        anyhow::anyhow!("no such device: {t} (see `rnic list`)")
    }
}

/// Checks that `args` names the simulator, for the commands that only run
/// there (fuzz, bench, interop).
pub fn require_sim(args: &DeviceArgs) -> Result<()> {
    match parse_target(&args.device)? {
        #[cfg(feature = "sim")]
        Target::Sim => Ok(()),
        #[cfg(not(feature = "sim"))]
        Target::Sim => Err(no_sim("--device sim")),
        t => Err(no_backend(&t)),
    }
}

/// A simulated NIC at `args`' width and seed, with `cfg`'s other settings.
#[cfg(feature = "sim")]
pub fn open_sim(args: &DeviceArgs, cfg: rnic_sim::SimConfig) -> Result<Nic<rnic_sim::SimDevice>> {
    use anyhow::Context;
    require_sim(args)?;
    let dev = rnic_sim::SimDevice::new(rnic_sim::SimConfig {
        data_w: args.data_w,
        seed: args.seed,
        ..cfg
    })
    .context("starting the simulator")?;
    Nic::open(dev).context("opening the simulated NIC")
}

/// The device `args` names, whatever its backend (nothing checked or
/// written yet).
pub fn open_device(args: &DeviceArgs) -> Result<Box<dyn Device>> {
    match parse_target(&args.device)? {
        #[cfg(feature = "sim")]
        Target::Sim => {
            use anyhow::Context;
            Ok(Box::new(
                rnic_sim::SimDevice::new(rnic_sim::SimConfig {
                    data_w: args.data_w,
                    seed: args.seed,
                    ..rnic_sim::SimConfig::default()
                })
                .context("starting the simulator")?,
            ))
        }
        #[cfg(not(feature = "sim"))]
        Target::Sim => Err(no_sim("--device sim")),
        t => Err(no_backend(&t)),
    }
}

/// The device `args` names, whatever its backend, opened as an rnic: its
/// ID block checked before anything is written to it.
pub fn open(args: &DeviceArgs) -> Result<Nic<Box<dyn Device>>> {
    use anyhow::Context;
    let dev = open_device(args)?;
    let name = dev.name();
    Nic::open(dev).with_context(|| format!("opening {name}"))
}

/// A board found in sysfs.
pub struct Board {
    pub address: String,
    pub vendor: u16,
    pub device: u16,
}

fn read_hex(p: &Path) -> Option<u16> {
    let s = std::fs::read_to_string(p).ok()?;
    u16::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// rnic boards under /sys/bus/pci/devices, by vendor and device ID.
pub fn find_boards() -> Vec<Board> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/bus/pci/devices") else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        let (Some(vendor), Some(device)) =
            (read_hex(&p.join("vendor")), read_hex(&p.join("device")))
        else {
            continue;
        };
        if PCI_IDS.contains(&(vendor, device)) {
            out.push(Board {
                address: e.file_name().to_string_lossy().into_owned(),
                vendor,
                device,
            });
        }
    }
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
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
            println!(
                "{}",
                serde_json::json!({"device": b.address, "kind": "pci", "vendor": format!("{:04x}", b.vendor), "device_id": format!("{:04x}", b.device)})
            );
        }
    } else {
        if sim {
            println!("sim            Verilator model of the rnic RTL (--data-w 64 or 256)");
        } else {
            println!("(no simulator: this rnic was built without the `sim` feature)");
        }
        for b in &boards {
            println!(
                "{:<14} rnic board, PCI {:04x}:{:04x}",
                b.address, b.vendor, b.device
            );
        }
        if boards.is_empty() {
            println!("(no rnic boards found in /sys/bus/pci/devices)");
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
