//! Finding and opening devices.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use rnic_driver::Nic;
use rnic_sim::{SimConfig, SimDevice};

/// PCI vendor and device ID rnic boards enumerate with (set in the board's
/// PCIe core configuration).
pub const PCI_IDS: &[(u16, u16)] = &[(0x1234, 0x4e49)];

/// Which device to use.
#[derive(Args, Clone, Debug)]
pub struct DeviceArgs {
    /// `sim` (the Verilator model of the RTL) or a PCI address of a board.
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

/// Checks that `args` names a device this build can drive (the simulator
/// for now).
pub fn require_sim(args: &DeviceArgs) -> Result<()> {
    if args.device != "sim" {
        let known = find_boards();
        if known.iter().any(|b| b.address == args.device) {
            bail!(
                "{} is an rnic board, but the hardware backends (VFIO, sysfs) are not implemented yet; use --device sim",
                args.device
            );
        }
        bail!("no such device: {} (see `rnic list`)", args.device);
    }
    Ok(())
}

/// Opens the device named by `args` (the simulator for now).
pub fn open(args: &DeviceArgs, cfg: SimConfig) -> Result<Nic<SimDevice>> {
    require_sim(args)?;
    let dev = SimDevice::new(SimConfig {
        data_w: args.data_w,
        seed: args.seed,
        ..cfg
    })
    .context("starting the simulator")?;
    Nic::open(dev).context("opening the simulated NIC")
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
    if a.json {
        println!(
            "{}",
            serde_json::json!({"device": "sim", "kind": "simulation", "data_w": [64, 256]})
        );
        for b in &boards {
            println!(
                "{}",
                serde_json::json!({"device": b.address, "kind": "pci", "vendor": format!("{:04x}", b.vendor), "device_id": format!("{:04x}", b.device)})
            );
        }
    } else {
        println!("sim            Verilator model of the rnic RTL (--data-w 64 or 256)");
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
