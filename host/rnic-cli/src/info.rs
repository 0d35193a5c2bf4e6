//! `rnic info` and `rnic regs`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use rnic_device::Device;

use crate::devices::{self, DeviceArgs};

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    #[arg(long)]
    pub json: bool,
}

pub fn info(a: &InfoArgs) -> Result<ExitCode> {
    let nic = devices::open(&a.dev)?;
    let id = nic.id();
    let blocks = rnic_regs::discover(nic.device())?;
    let verbs: Vec<&str> = [
        (0, "local_dma_copy"),
        (1, "rdma_write"),
        (2, "rdma_write_with_imm"),
        (3, "send"),
        (4, "send_with_imm"),
    ]
    .iter()
    .filter(|(b, _)| id.verbs >> b & 1 == 1)
    .map(|(_, n)| *n)
    .collect();
    let caps: Vec<&str> = [
        (0, "msi"),
        (1, "debug_cqe_ro"),
        (2, "debug_early_cqe"),
        (3, "debug_bypass"),
        (4, "cqe_flush"),
        (5, "mp_transport"),
        (6, "rc_transport"),
    ]
    .iter()
    .filter(|(b, _)| id.caps >> b & 1 == 1)
    .map(|(_, n)| *n)
    .collect();
    let budget = crate::state_budget::budget(
        id.num_queues,
        id.mp_window,
        id.verbs & 0x18 != 0,
        id.caps & (1 << 6) != 0,
        Some(pools(&id)?),
    )
    .map_err(anyhow::Error::msg)?;
    let version = format!(
        "{}.{}.{}",
        id.build_version >> 24,
        (id.build_version >> 16) & 0xff,
        id.build_version & 0xffff
    );
    if a.json {
        let v = serde_json::json!({
            "device": nic.device().name(),
            "build_version": version,
            "git_hash": format!("{:08x}", id.git_hash),
            "board_id": id.board_id,
            "board": board_name(id.board_id),
            "data_w": id.data_w,
            "num_queues": id.num_queues,
            "verbs": verbs,
            "caps": caps,
            "mp_window": id.mp_window,
            "state_budget": budget,
            "blocks": blocks.iter().map(|b| serde_json::json!({
                "offset": b.offset, "type": format!("{:#010x}", b.block_type),
                "name": b.name, "version": format!("{}.{}", b.version_major(), b.version_minor()),
            })).collect::<Vec<_>>(),
        });
        println!("{v}");
    } else {
        println!("device        {}", nic.device().name());
        println!("build         {version} (git {:08x})", id.git_hash);
        println!(
            "board         {} (board_id {})",
            board_name(id.board_id),
            id.board_id
        );
        println!("data path     {} bits", id.data_w);
        println!("queues        {}", id.num_queues);
        println!("verbs         {}", verbs.join(", "));
        println!("capabilities  {}", caps.join(", "));
        crate::state_budget::print(&budget);
        println!("register blocks:");
        for b in &blocks {
            println!(
                "  {:#06x}  type {:#010x}  v{}.{}  {}",
                b.offset,
                b.block_type,
                b.version_major(),
                b.version_minor(),
                b.name.unwrap_or("(unknown, skipped)")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct RegsArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
}

/// Name of the board a running build reports in its ID block.
fn board_name(board_id: u32) -> String {
    match rnic_firmware::board_by_id(board_id) {
        Some(b) => b.name.clone(),
        None => format!("unknown ({board_id:#x})"),
    }
}

pub fn regs(a: &RegsArgs) -> Result<ExitCode> {
    let nic = devices::open(&a.dev)?;
    let dev = nic.device();
    for b in rnic_regs::discover(dev)? {
        let Some(desc) = b.desc() else {
            println!(
                "block at {:#06x}: unknown type {:#010x}, skipped",
                b.offset, b.block_type
            );
            continue;
        };
        println!(
            "{} @ {:#06x} (v{}.{}): {}",
            desc.name,
            b.offset,
            b.version_major(),
            b.version_minor(),
            desc.desc
        );
        for r in desc.regs {
            let off = b.offset + r.block_offset;
            let readable = r.fields.iter().any(|f| f.sw.readable());
            if !readable {
                println!("  {off:#06x} {:<14} (write-only)", r.name);
                continue;
            }
            let v = dev.read32(off)?;
            println!("  {off:#06x} {:<14} = {v:#010x}", r.name);
            for f in r.fields {
                if f.sw.readable() {
                    println!(
                        "           {:<12} {:<8} = {:#x}",
                        f.name,
                        f.bits(),
                        f.extract(u64::from(v))
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The pools the running build reports (a build older than the mp_pend
/// and dmacs registers reads 0 there: its sizes follow from the QP count).
fn pools(id: &rnic_driver::IdInfo) -> anyhow::Result<crate::state_budget::Pools> {
    let mut p = crate::state_budget::Pools::of(id.num_queues, id.ost_rings, 0, 0)
        .map_err(anyhow::Error::msg)?;
    if id.mp_pend != 0 {
        p.mp_pend = id.mp_pend;
    }
    if id.dmacs != 0 {
        p.dmacs = id.dmacs;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_board_id_is_named_from_the_board_table() {
        assert_eq!(super::board_name(0), "sim");
        assert_eq!(super::board_name(4), "xc7a200t-core");
        assert_eq!(super::board_name(0xdead), "unknown (0xdead)");
    }
}
