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
    /// Also measure, N times each: a BAR0 read's round trip, and a
    /// doorbell's way to its CQE (a 64-byte local DMA copy), polled and
    /// waited for by interrupt (the CQ armed; not on sysfs, which has no
    /// interrupts), in wall time and in cycles of the device's clock
    /// (`Device::now`).
    #[arg(long, value_name = "N")]
    pub latency: Option<u32>,
}

/// Mean and smallest of some samples.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Stat {
    mean: f64,
    min: f64,
}

fn stat(v: &[f64]) -> Stat {
    Stat {
        mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
    }
}

/// What `--latency` measured: wall microseconds and device cycles.
#[derive(Debug, serde::Serialize)]
struct Latency {
    samples: u32,
    mmio_read_us: Stat,
    mmio_read_cycles: Stat,
    doorbell_to_cqe_us: Stat,
    doorbell_to_cqe_cycles: Stat,
    /// The same, the CQ armed and its interrupt waited for before the
    /// poll (absent when the device has no interrupts: `irq_error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    doorbell_to_cqe_irq_us: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    doorbell_to_cqe_irq_cycles: Option<Stat>,
    /// Interrupts taken by those samples.
    interrupts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    irq_error: Option<String>,
    clock_mhz: f64,
}

/// `n` BAR0 reads (the ID block's magic) and `n` local DMA copies of 64
/// bytes, one at a time: doorbell (a write) to CQE seen in host memory.
fn latency<D: Device>(nic: &rnic_driver::Nic<D>, n: u32) -> Result<Latency> {
    use std::time::Instant;
    let dev = nic.device();
    let n = n.max(1);
    let (mut rd_us, mut rd_cy) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (t, c) = (Instant::now(), dev.now());
        let v = dev.read32(0x0c)?;
        rd_cy.push(dev.now().saturating_sub(c) as f64);
        rd_us.push(t.elapsed().as_secs_f64() * 1e6);
        anyhow::ensure!(v == rnic_regs::MAGIC, "BAR0 magic read {v:#010x}");
    }
    let mut cq = nic.create_cq(16)?;
    let mut sq = nic.create_sq(16, &mut cq)?;
    let src = dev.alloc_dma(4096)?;
    let dst = dev.alloc_dma(4096)?;
    let (mut db_us, mut db_cy) = (Vec::new(), Vec::new());
    let mut cqes = Vec::new();
    // A budget far above any healthy copy (in cycles of Device::now).
    let budget = 20_000_000u64;
    for i in 0..n {
        let wr = rnic_driver::CopyWr {
            wr_id: u64::from(i),
            src: src.bus_addr(),
            dst: dst.bus_addr() + 64,
            length: 64,
        };
        nic.post_copy(&mut sq, &wr)?;
        let (t, c) = (Instant::now(), dev.now());
        nic.ring_sq(&sq)?;
        cqes.clear();
        while nic.poll_cq(&mut cq, 1, &mut cqes)? == 0 {
            anyhow::ensure!(
                dev.now().saturating_sub(c) < budget,
                "no CQE for local copy {i} within {budget} cycles"
            );
            dev.idle();
        }
        db_cy.push(dev.now().saturating_sub(c) as f64);
        db_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    // By interrupt: armed before the doorbell (the arm's register read is
    // not timed), the wake-up, then the poll, which must find the CQE (the
    // MSI is a posted write behind it).
    let (mut irq_us, mut irq_cy) = (Vec::new(), Vec::new());
    let mut irq_error = None;
    for i in 0..n {
        let wr = rnic_driver::CopyWr {
            wr_id: u64::from(n + i),
            src: src.bus_addr(),
            dst: dst.bus_addr() + 128,
            length: 64,
        };
        nic.post_copy(&mut sq, &wr)?;
        nic.arm_cq(&cq)?;
        let (t, c) = (Instant::now(), dev.now());
        nic.ring_sq(&sq)?;
        match nic.wait_cq_event(&cq, budget) {
            Ok(rnic_device::IrqWait::Fired) => {}
            Ok(rnic_device::IrqWait::TimedOut) => {
                anyhow::bail!(
                    "no interrupt for local copy {} within {budget} cycles",
                    n + i
                )
            }
            Err(e) => {
                // No interrupts here (sysfs): the copy is polled off.
                irq_error = Some(e.to_string());
                while nic.poll_cq(&mut cq, 1, &mut cqes)? == 0 {
                    anyhow::ensure!(
                        dev.now().saturating_sub(c) < budget,
                        "no CQE for local copy {} within {budget} cycles",
                        n + i
                    );
                    dev.idle();
                }
                break;
            }
        }
        cqes.clear();
        anyhow::ensure!(
            nic.poll_cq(&mut cq, 1, &mut cqes)? == 1,
            "the interrupt of local copy {} came before its CQE",
            n + i
        );
        irq_cy.push(dev.now().saturating_sub(c) as f64);
        irq_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    nic.destroy_sq(sq)?;
    nic.destroy_cq(cq)?;
    dev.free_dma(&src)?;
    dev.free_dma(&dst)?;
    Ok(Latency {
        samples: n,
        mmio_read_us: stat(&rd_us),
        mmio_read_cycles: stat(&rd_cy),
        doorbell_to_cqe_us: stat(&db_us),
        doorbell_to_cqe_cycles: stat(&db_cy),
        doorbell_to_cqe_irq_us: (!irq_us.is_empty()).then(|| stat(&irq_us)),
        doorbell_to_cqe_irq_cycles: (!irq_cy.is_empty()).then(|| stat(&irq_cy)),
        interrupts: irq_us.len() as u32,
        irq_error,
        clock_mhz: dev.clock_mhz(),
    })
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
        (5, "rdma_read"),
        (6, "atomic_cmp_swp_fetch_add"),
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
        (7, "read_responder"),
        (8, "read_requester"),
        (9, "atomic_responder"),
        (10, "doorbell_by_qpn"),
    ]
    .iter()
    .filter(|(b, _)| id.caps >> b & 1 == 1)
    .map(|(_, n)| *n)
    .collect();
    // a build the state manifest has no entry for (other pool knobs, say)
    // still shows the rest, and says how to add it
    let budget = crate::state_budget::budget(
        id.num_queues,
        id.mp_window,
        id.verbs & 0x18 != 0,
        id.caps & (1 << 6) != 0,
        id.caps & (1 << 9) != 0,
        Some(pools(&id)?),
    );
    let version = format!(
        "{}.{}.{}",
        id.build_version >> 24,
        (id.build_version >> 16) & 0xff,
        id.build_version & 0xffff
    );
    let lat = a.latency.map(|n| latency(&nic, n)).transpose()?;
    if a.json {
        let mut v = serde_json::json!({
            "device": nic.device().name(),
            "build_version": version,
            "git_hash": format!("{:08x}", id.git_hash),
            "board_id": id.board_id,
            "board": board_name(id.board_id),
            "data_w": id.data_w,
            "num_queues": id.num_queues,
            // null: a build older than the register (it held 64)
            "mrs": (id.mrs != 0).then_some(id.mrs),
            "verbs": verbs,
            "caps": caps,
            "mp_window": id.mp_window,
            // null: a build older than the register (it held 1)
            "mp_wimm": (id.mp_wimm != 0).then_some(id.mp_wimm),
            // null: a build without the record port
            "qp_record_bytes": (id.qp_rec_words != 0).then_some(id.qp_rec_words * 8),
            // 0: no QP directory (QP number n is slot n)
            "qpn_bits": id.qpn_bits,
            // 0: no context table
            "ctx_fills": id.ctx_fills,
            // null without a directory
            "qp_directory": directory_cost(id.qpn_bits, id.num_queues),
            // 0: no context cache (QPs beyond the slots need one)
            "max_cached_qps": rnic_driver::max_cached_qps(id.qpn_bits, id.ctx_fills, id.qp_rec_words),
            "state_budget": budget.as_ref().ok(),
            "blocks": blocks.iter().map(|b| serde_json::json!({
                "offset": b.offset, "type": format!("{:#010x}", b.block_type),
                "name": b.name, "version": format!("{}.{}", b.version_major(), b.version_minor()),
            })).collect::<Vec<_>>(),
        });
        if let Some(l) = &lat {
            v["latency"] = serde_json::to_value(l)?;
        }
        if let Err(e) = &budget {
            v["state_budget_error"] = e.as_str().into();
        }
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
        if id.mrs != 0 {
            println!("MR table      {} memory regions", id.mrs);
        } else {
            println!("MR table      not reported (a build older than id.mrs: 64 memory regions)");
        }
        println!("verbs         {}", verbs.join(", "));
        println!("capabilities  {}", caps.join(", "));
        if id.caps & (1 << 5) != 0 {
            let wimm = match id.mp_wimm {
                0 => "1 (a build older than id.mp_wimm)".to_string(),
                n => n.to_string(),
            };
            println!(
                "mp            window {} PSNs; deferred WRITE_WITH_IMM completions {} per QP, {} shared",
                id.mp_window, wimm, id.mp_pend
            );
        }
        match &budget {
            Ok(b) => crate::state_budget::print(b),
            Err(e) => println!("per-QP state  not known: {e}"),
        }
        match id.qp_rec_words {
            0 => println!("QP record     no record port in this build"),
            n => println!(
                "QP record     {n} words, {} bytes per QP in host memory (every per-QP record, the context table's layout; rnic regs --qp-record N, rnic bench ctx-table); {} context-table moves at once",
                n * 8,
                id.ctx_fills
            ),
        }
        match directory_cost(id.qpn_bits, id.num_queues) {
            None => println!("QP numbers    as slots (no directory)"),
            Some(d) => println!(
                "QP numbers    {} (directory over {} slots): on chip {:.1} KiB of number table \
                 (block RAM, a hint per number, held three times for its three read ports) and \
                 {} bits per slot of slot table",
                thousands(1u64 << id.qpn_bits.min(24)),
                id.num_queues,
                d.number_table_bytes as f64 / 1024.0,
                d.slot_bits
            ),
        }
        match rnic_driver::max_cached_qps(id.qpn_bits, id.ctx_fills, id.qp_rec_words) {
            0 => println!("QP cache      none: as many QPs as slots"),
            n => println!(
                "QP cache      up to {} QPs in a host context table ({} bytes each), cached in the slots above the host's own (Context::enable_qp_cache, rnic bench qp-scale --qp-cache): the per-QP state above is what a cached QP holds on chip",
                thousands(u64::from(n)),
                id.qp_rec_words * 8
            ),
        }
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
        if let Some(l) = &lat {
            println!(
                "latency over {} samples (mean, min; cycles of a {} MHz clock):",
                l.samples, l.clock_mhz
            );
            println!(
                "  BAR0 read          {:>10.1} us {:>10.1} us {:>12.0} cycles {:>12.0} cycles",
                l.mmio_read_us.mean,
                l.mmio_read_us.min,
                l.mmio_read_cycles.mean,
                l.mmio_read_cycles.min
            );
            println!(
                "  doorbell to CQE    {:>10.1} us {:>10.1} us {:>12.0} cycles {:>12.0} cycles",
                l.doorbell_to_cqe_us.mean,
                l.doorbell_to_cqe_us.min,
                l.doorbell_to_cqe_cycles.mean,
                l.doorbell_to_cqe_cycles.min
            );
            match (&l.doorbell_to_cqe_irq_us, &l.doorbell_to_cqe_irq_cycles) {
                (Some(us), Some(cy)) => println!(
                    "  ... by interrupt   {:>10.1} us {:>10.1} us {:>12.0} cycles {:>12.0} cycles ({} interrupts)",
                    us.mean, us.min, cy.mean, cy.min, l.interrupts
                ),
                _ => println!(
                    "  ... by interrupt   not measured: {}",
                    l.irq_error.as_deref().unwrap_or("no samples")
                ),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct RegsArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    /// Print the whole record of the QP in slot N instead (its send
    /// queue's number, not its QP number in a build with a QP directory;
    /// every per-QP record of the core,
    /// 64-bit words through the record window; a build with
    /// id.qp_rec_words > 0). The words are read one at a time: a busy QP's
    /// record may mix two versions.
    #[arg(long, value_name = "N")]
    pub qp_record: Option<u16>,
    /// Save the QP in slot N to a context table in host memory by DMA and
    /// load it back (`qp_block.qp_ctx_*`, the path the context cache will
    /// move QPs through), and check the round trip: the table's record
    /// must equal the record window's words and the slot must be
    /// unchanged. Only for a QP with nothing in flight. Exit 1 when it
    /// differs.
    #[arg(long, value_name = "N", conflicts_with = "qp_record")]
    pub qp_ctx_check: Option<u16>,
}

/// `rnic regs --qp-ctx-check N`: slot `q` saved to a one-record context
/// table and loaded back, checked against the record window.
fn qp_ctx_check<D: Device>(nic: &rnic_driver::Nic<D>, q: u16) -> Result<ExitCode> {
    let before = nic
        .read_qp_record(q)
        .map_err(|e| anyhow::anyhow!("QP {q}'s record: {e}"))?;
    nic.qp_ctx_table_open(1)
        .map_err(|e| anyhow::anyhow!("opening a context table: {e}"))?;
    let t0 = nic.device().now();
    let saved = nic.qp_ctx_save(q, 0);
    let cycles = nic.device().now().saturating_sub(t0);
    let table = nic.qp_ctx_record(0);
    let counters = nic.qp_ctx_counters();
    // the table goes back whatever happened (refused only while a command runs)
    let closed = nic.qp_ctx_table_close();
    saved.map_err(|e| anyhow::anyhow!("saving QP {q} to the context table: {e}"))?;
    closed.map_err(|e| anyhow::anyhow!("closing the context table: {e}"))?;
    let (table, counters) = (table?, counters?);
    let after = nic.read_qp_record(q)?;
    let differ =
        |x: &[u64]| -> Vec<usize> { (0..before.len()).filter(|&i| x[i] != before[i]).collect() };
    let (in_table, in_slot) = (differ(&table), differ(&after));
    println!(
        "QP {q}: saved to the context table and loaded back by DMA in {cycles} cycles ({:.0} MHz clock); {} of {} words non-zero; engine counters: {} fills, {} write-backs, {} failed",
        nic.device().clock_mhz(),
        before.iter().filter(|&&w| w != 0).count(),
        before.len(),
        counters.fills,
        counters.writebacks,
        counters.fails
    );
    if in_table.is_empty() && in_slot.is_empty() {
        println!(
            "round trip: ok (the table's record is the window's words, the slot is unchanged)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !in_table.is_empty() {
        println!("round trip: the table's record differs from the window's in words {in_table:?}");
    }
    if !in_slot.is_empty() {
        println!("round trip: the slot changed in words {in_slot:?} (was the QP busy?)");
    }
    Ok(ExitCode::from(1))
}

/// `n` with a comma between groups of three digits.
fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
    if let Some(q) = a.qp_ctx_check {
        return qp_ctx_check(&nic, q);
    }
    if let Some(q) = a.qp_record {
        let rec = nic
            .read_qp_record(q)
            .map_err(|e| anyhow::anyhow!("QP {q}'s record: {e}"))?;
        println!("QP {q}: {} words of 64 bits (word: value)", rec.len());
        for (i, w) in rec.iter().enumerate() {
            println!("  {i:2}: {w:#018x}");
        }
        return Ok(ExitCode::SUCCESS);
    }
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

/// The on-chip cost of a build's QP directory (hw/rtl/qp_dir.v), from
/// the ID block: the number table holds a slot number (the core's QN_W
/// bits) per QP number, the slot table a number and a bound bit per slot.
/// Counted apart from the per-QP state budget, which the state manifest
/// elaborates for builds without a directory (the FPGA builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DirectoryCost {
    pub number_table_bytes: u64,
    pub slot_bits: u32,
}

pub fn directory_cost(qpn_bits: u32, num_queues: u32) -> Option<DirectoryCost> {
    if qpn_bits == 0 {
        return None;
    }
    // rnic_core's QN_W: $clog2(NUM_Q), at least 1
    let qn_w = u64::from(num_queues.max(2).next_power_of_two().trailing_zeros());
    Some(DirectoryCost {
        number_table_bytes: ((1u64 << qpn_bits.min(24)) * qn_w).div_ceil(8),
        slot_bits: qpn_bits + 1,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_board_id_is_named_from_the_board_table() {
        assert_eq!(super::board_name(0), "sim");
        assert_eq!(super::board_name(4), "xc7a200t-core");
        assert_eq!(super::board_name(0xdead), "unknown (0xdead)");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(65_536), "65,536");
        assert_eq!(super::thousands(16_777_216), "16,777,216");
    }

    #[test]
    fn the_directory_costs_what_qp_dir_holds() {
        use super::{directory_cost, DirectoryCost};
        assert_eq!(directory_cost(0, 64), None);
        // the simulated build: 65,536 numbers of a 6-bit slot, 17 bits a slot
        assert_eq!(
            directory_cost(16, 64),
            Some(DirectoryCost {
                number_table_bytes: 49_152,
                slot_bits: 17
            })
        );
        // QN_W is $clog2(NUM_Q): 20 slots take 5 bits, one slot 1 bit
        assert_eq!(directory_cost(10, 20).unwrap().number_table_bytes, 640);
        assert_eq!(directory_cost(10, 1).unwrap().number_table_bytes, 128);
    }
}
