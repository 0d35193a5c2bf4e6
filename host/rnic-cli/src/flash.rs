//! `rnic flash`: the configuration flash over the NIC's registers (write,
//! read, verify, info, boot) and over JTAG with openFPGALoader.
//!
//! Exit status: 0 done, 1 the flash operation failed (read-back mismatch,
//! flash not answering, the board fell back to golden), 2 refused before
//! touching the flash (bad image, wrong board, golden slot without
//! `--allow-golden`, not confirmed, bad usage).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rnic_device::Device;
use rnic_firmware::{board_by_id, Board, ImageTarget, SlotId, HEADER_LEN};
use rnic_flash::{FlashError, Phase, Progress, SpiNor};
#[cfg(feature = "sim")]
use rnic_sim::{FlashTiming, SimConfig, SimDevice, SpiFlashConfig};

use crate::devices::{self, DeviceArgs, Target};
use crate::image::{describe, load};

#[derive(Args)]
pub struct FlashArgs {
    #[command(flatten)]
    pub dev: DeviceArgs,
    #[command(flatten)]
    pub sim: SimFlashArgs,
    #[command(subcommand)]
    pub cmd: FlashCmd,
}

#[derive(Args, Clone)]
pub struct SimFlashArgs {
    /// Simulator: keep the flash contents in this file (created erased if
    /// missing), so commands run one after another see one flash.
    #[arg(long, global = true)]
    pub sim_flash: Option<PathBuf>,
    /// Simulator: erase and program times.
    #[arg(long, global = true, value_enum, default_value_t = Timing::Fast)]
    pub sim_flash_timing: Timing,
    /// Simulator: cut the flash's power at this cycle.
    #[arg(long, global = true)]
    pub sim_power_cut: Option<u64>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Timing {
    /// 8 us page program, 40 us sector, 200 us block erase (at 250 MHz).
    Fast,
    /// 0.25 ms page program, 50 ms sector, 150 ms block erase.
    Datasheet,
}

#[derive(Subcommand)]
pub enum FlashCmd {
    /// Erase, program and read back an image into a slot.
    Write(WriteArgs),
    /// Read a slot's image (or raw bytes) to a file.
    Read(ReadArgs),
    /// Compare a slot with an image.
    Verify(VerifyArgs),
    /// The flash chip, the boot record, what booted, and what each slot holds.
    Info(InfoArgs),
    /// Select the slot to boot and reconfigure the FPGA.
    Boot(BootArgs),
    /// Write an image over JTAG with openFPGALoader (no NIC needed).
    Jtag(JtagArgs),
}

#[derive(Args)]
pub struct WriteArgs {
    pub image: PathBuf,
    #[arg(long, default_value = "update")]
    pub slot: SlotId,
    /// Required to write the golden slot.
    #[arg(long)]
    pub allow_golden: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Afterwards select the slot and reconfigure.
    #[arg(long)]
    pub boot: bool,
    /// Single-lane data phases instead of quad.
    #[arg(long)]
    pub single: bool,
    /// Print a JSON report (phases with their start cycles).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ReadArgs {
    /// Slot whose image to read (header + bitstream).
    #[arg(long, conflicts_with_all = ["addr", "len"])]
    pub slot: Option<SlotId>,
    /// Raw read: start address.
    #[arg(long, value_parser = parse_num, requires = "len")]
    pub addr: Option<u64>,
    /// Raw read: bytes.
    #[arg(long, value_parser = parse_num, requires = "addr")]
    pub len: Option<u64>,
    #[arg(short = 'o', long)]
    pub output: PathBuf,
}

#[derive(Args)]
pub struct VerifyArgs {
    pub image: PathBuf,
    #[arg(long, default_value = "update")]
    pub slot: SlotId,
}

#[derive(Args)]
pub struct InfoArgs {
    /// Also read each valid slot's bitstream and check its CRC-32 and SHA-256.
    #[arg(long)]
    pub check: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct BootArgs {
    pub slot: SlotId,
    /// Select the slot even if it holds no valid image (the board falls back).
    #[arg(long)]
    pub force: bool,
    #[arg(short = 'y', long)]
    pub yes: bool,
}

#[derive(Args)]
pub struct JtagArgs {
    pub image: PathBuf,
    #[arg(long, default_value = "update")]
    pub slot: SlotId,
    /// Required to write the golden slot.
    #[arg(long)]
    pub allow_golden: bool,
    /// openFPGALoader cable (`-c`), e.g. ft2232, digilent_hs2.
    #[arg(long)]
    pub cable: Option<String>,
    /// Print the openFPGALoader commands without running them.
    #[arg(long)]
    pub dry_run: bool,
    #[arg(short = 'y', long)]
    pub yes: bool,
}

fn parse_num(s: &str) -> std::result::Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{s:?} is not a number (decimal or 0x hex)"))
}

/// An operation on the flash failed (exit status 1), as opposed to a
/// refusal before it started (2).
#[derive(Debug)]
struct Failed(anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failed {}

fn failed(e: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Failed(e.into()))
}

/// Whether `e` is an operation failure (exit status 1).
pub fn is_failure(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Failed>())
}

struct Ctx {
    dev: Box<dyn Device>,
    /// The simulated NIC behind `dev` (`--device sim`), for what only the
    /// flash model has: its timing, a power cut, its backing file.
    #[cfg(feature = "sim")]
    sim: Option<SimDevice>,
    board: &'static Board,
    /// The board's flash and slots.
    target: &'static ImageTarget,
}

impl Ctx {
    fn open(a: &FlashArgs) -> Result<Self> {
        let target = devices::parse_target(&a.dev.device)?;
        #[cfg(feature = "sim")]
        if target == Target::Sim {
            return Self::open_sim(a);
        }
        if target == Target::Sim || a.sim.sim_flash.is_some() || a.sim.sim_power_cut.is_some() {
            devices::require_sim(&a.dev)?;
            bail!("--sim-flash and --sim-power-cut need --device sim");
        }
        let dev = devices::open_device(&a.dev)?;
        let (board, target) = board_of(dev.as_ref())?;
        Ok(Self {
            dev,
            #[cfg(feature = "sim")]
            sim: None,
            board,
            target,
        })
    }

    /// The simulated NIC with the SPI NOR model of its board on its flash
    /// pins.
    #[cfg(feature = "sim")]
    fn open_sim(a: &FlashArgs) -> Result<Self> {
        let dev = SimDevice::new(SimConfig {
            data_w: a.dev.data_w,
            seed: a.dev.seed,
            ..SimConfig::default()
        })
        .context("starting the simulator")?;
        let (board, target) = board_of(&dev)?;
        let mut cfg = SpiFlashConfig::for_board(&board.name)?;
        cfg.timing = match a.sim.sim_flash_timing {
            Timing::Fast => FlashTiming::fast(),
            Timing::Datasheet => FlashTiming::datasheet(dev.clock_mhz()),
        };
        cfg.file = a.sim.sim_flash.clone();
        cfg.power_cut_at = a.sim.sim_power_cut;
        cfg.seed = a.dev.seed;
        dev.attach_flash(cfg)
            .context("attaching the simulated flash")?;
        Ok(Self {
            dev: Box::new(dev.clone()),
            sim: Some(dev),
            board,
            target,
        })
    }

    /// The flash with the golden slot protected (unless `allow_golden`).
    fn nor(&self, allow_golden: bool) -> Result<SpiNor<'_, Box<dyn Device>>> {
        let g = self.target.layout.golden;
        let mut nor = SpiNor::open(&self.dev, self.target.flash, Some(g.base..g.end()))
            .context("opening the configuration flash")?;
        if allow_golden {
            nor.unprotect();
        }
        // Several times the longest busy time, so a dead flash is noticed soon.
        #[cfg(feature = "sim")]
        if let Some(t) = self
            .sim
            .as_ref()
            .and_then(|d| d.with_flash(|f| f.config().timing.block_erase))
        {
            nor.timeout_cycles = (4 * t).max(1_000_000);
        }
        Ok(nor)
    }

    /// Explain a failure the simulator caused on purpose.
    fn power_note(&self) -> Option<String> {
        #[cfg(feature = "sim")]
        if let Some(c) = self.sim.as_ref()?.with_flash(|f| f.power_cut()).flatten() {
            return Some(format!("simulated power cut at cycle {c}"));
        }
        None
    }

    /// Keep the simulated flash's contents (`--sim-flash`).
    fn save(&self) -> Result<()> {
        #[cfg(feature = "sim")]
        if let Some(d) = &self.sim {
            d.save_flash().context("saving the simulated flash")?;
        }
        Ok(())
    }
}

/// The board table's entry for the board `dev` says it is.
fn board_of(dev: &dyn Device) -> Result<(&'static Board, &'static ImageTarget)> {
    let board_id = dev.read32(0x18).context("reading the ID block")?;
    let board = board_by_id(board_id).ok_or_else(|| {
        anyhow!("this NIC reports board id {board_id}, which the board table does not know")
    })?;
    let target = board
        .image_target()
        .with_context(|| format!("this NIC reports board id {board_id} ({})", board.name))?;
    Ok((board, target))
}

pub fn run(a: &FlashArgs) -> Result<ExitCode> {
    if let FlashCmd::Jtag(j) = &a.cmd {
        return jtag(j);
    }
    let ctx = Ctx::open(a)?;
    let r = match &a.cmd {
        FlashCmd::Write(w) => write(&ctx, w),
        FlashCmd::Read(r) => read(&ctx, r),
        FlashCmd::Verify(v) => verify(&ctx, v),
        FlashCmd::Info(i) => info(&ctx, i),
        FlashCmd::Boot(b) => boot(&ctx, b),
        FlashCmd::Jtag(_) => unreachable!(),
    };
    let saved = ctx.save();
    let r = match (r, ctx.power_note()) {
        (Err(e), Some(n)) => Err(failed(e.context(n))),
        (r, _) => r,
    };
    if let (Ok(_), Some(f)) = (&r, &a.sim.sim_flash) {
        tracing::info!(file = %f.display(), "flash contents saved");
    }
    saved?;
    r
}

fn confirm(yes: bool, what: &str) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!("not confirmed: {what}; stdin is not a terminal, pass -y to go ahead");
    }
    eprint!("{what}. Continue? [y/N] ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if matches!(line.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        bail!("not confirmed: nothing written")
    }
}

/// A bar per phase on stderr (hidden when stderr is not a terminal).
struct Bars {
    bar: Option<(Phase, ProgressBar)>,
}

impl Bars {
    fn new() -> Self {
        Self { bar: None }
    }

    fn update(&mut self, p: Progress) {
        if self.bar.as_ref().map(|b| b.0) != Some(p.phase) {
            if let Some((_, b)) = self.bar.take() {
                b.finish();
            }
            let b = ProgressBar::new(p.total);
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>8} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} (wall)",
                )
                .expect("template")
                .progress_chars("=> "),
            );
            b.set_prefix(p.phase.name());
            self.bar = Some((p.phase, b));
        }
        if let Some((_, b)) = &self.bar {
            b.set_position(p.done);
        }
    }

    fn finish(&mut self) {
        if let Some((_, b)) = self.bar.take() {
            b.finish();
        }
    }
}

fn check_slot_allowed(slot: SlotId, allow_golden: bool) -> Result<()> {
    if slot == SlotId::Golden && !allow_golden {
        bail!("the golden slot is protected: writing it needs --allow-golden (it is the image the board falls back to)");
    }
    Ok(())
}

fn write(ctx: &Ctx, w: &WriteArgs) -> Result<ExitCode> {
    check_slot_allowed(w.slot, w.allow_golden)?;
    let img = load(&w.image)?;
    let b = ctx.board;
    let s = ctx.target.layout.slot(w.slot);
    img.header
        .check_for(b, w.slot.name(), s.max_bitstream(), &img.bitstream)
        .with_context(|| format!("refusing to write {}", w.image.display()))?;
    confirm(
        w.yes,
        &format!(
            "About to erase and write the {} slot ({:#x}..{:#x}) with {} ({})",
            w.slot,
            s.base,
            s.end(),
            w.image.display(),
            describe(&img.header)
        ),
    )?;
    let mut nor = ctx.nor(w.allow_golden)?;
    nor.set_quad(!w.single);
    let mut bars = Bars::new();
    let rep = rnic_flash::write_slot(&nor, b, w.slot, &img, &mut |p| bars.update(p));
    bars.finish();
    let rep = rep
        .map_err(failed)
        .with_context(|| format!("writing the {} slot", w.slot))?;
    let cycles = rep.end_cycle - rep.start_cycle;
    let mhz = ctx.dev.clock_mhz();
    let mbs = rep.bytes as f64 * mhz / cycles as f64;
    if w.json {
        println!(
            "{}",
            serde_json::json!({
                "slot": w.slot, "bytes": rep.bytes, "start_cycle": rep.start_cycle,
                "end_cycle": rep.end_cycle, "cycles": cycles, "clock_mhz": mhz,
                "mb_per_s": mbs,
                "phases": rep.phases.iter().map(|(p, c)| serde_json::json!({"phase": p, "cycle": c})).collect::<Vec<_>>(),
            })
        );
    } else {
        println!(
            "wrote and verified {} bytes into the {} slot in {} cycles ({:.3} ms at {} MHz, {:.2} MB/s write+verify)",
            rep.bytes,
            w.slot,
            cycles,
            cycles as f64 / mhz / 1000.0,
            mhz,
            mbs
        );
    }
    if w.boot {
        return do_boot(ctx, &nor, w.slot);
    }
    Ok(ExitCode::SUCCESS)
}

fn read(ctx: &Ctx, r: &ReadArgs) -> Result<ExitCode> {
    let nor = ctx.nor(false)?;
    let bytes = match (r.slot, r.addr, r.len) {
        (Some(s), _, _) => rnic_flash::read_slot_image(&nor, ctx.board, s)
            .map_err(failed)
            .with_context(|| format!("reading the {s} slot"))?
            .to_bytes()?,
        (None, Some(a), Some(n)) => {
            let mut v = vec![0u8; n as usize];
            nor.read(a, &mut v).context("reading the flash")?;
            v
        }
        _ => bail!("give --slot, or --addr and --len"),
    };
    std::fs::write(&r.output, &bytes)
        .with_context(|| format!("cannot write {}", r.output.display()))?;
    println!("{}: {} bytes", r.output.display(), bytes.len());
    Ok(ExitCode::SUCCESS)
}

fn verify(ctx: &Ctx, v: &VerifyArgs) -> Result<ExitCode> {
    let img = load(&v.image)?;
    let nor = ctx.nor(false)?;
    let mut bars = Bars::new();
    let r = rnic_flash::verify_slot(&nor, ctx.board, v.slot, &img, &mut |p| bars.update(p));
    bars.finish();
    match r {
        Ok(()) => {
            println!("the {} slot holds {}", v.slot, v.image.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ FlashError::Verify { .. }) => Err(failed(e).context(format!(
            "the {} slot differs from {}",
            v.slot,
            v.image.display()
        ))),
        Err(e) => Err(failed(e)),
    }
}

fn info(ctx: &Ctx, i: &InfoArgs) -> Result<ExitCode> {
    let nor = ctx.nor(false)?;
    let b = ctx.board;
    let id = nor.jedec_id()?;
    let rec = rnic_flash::read_boot_record(&nor, b)?;
    let (booted, fell_back) = nor.boot_status()?;
    let booted = SlotId::from_code(booted).map_or("?", |s| s.name());
    let slots = [SlotId::Golden, SlotId::Update]
        .map(|s| rnic_flash::slot_state(&nor, b, s, i.check))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    if i.json {
        println!(
            "{}",
            serde_json::json!({
                "board": b.name, "part": b.part, "jedec_id": id, "flash_bytes": ctx.target.flash.size,
                "boot_record": match &rec { Ok(r) => serde_json::json!(r), Err(e) => serde_json::json!({"invalid": e}) },
                "booted": booted, "fell_back": fell_back,
                "slots": slots.iter().map(|s| serde_json::json!({
                    "slot": s.slot, "base": s.base, "size": s.size, "valid": s.valid(),
                    "header": s.header.as_ref().ok(), "error": s.header.as_ref().err(),
                    "content": s.content.as_ref().map(|c| c.as_ref().err().cloned().unwrap_or_else(|| "ok".into())),
                })).collect::<Vec<_>>(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "flash: JEDEC {:02x} {:02x} {:02x}, {} MiB, board {} ({})",
        id[0],
        id[1],
        id[2],
        ctx.target.flash.size >> 20,
        b.name,
        b.part
    );
    match &rec {
        Ok(r) => println!("boot record: {} (write #{})", r.slot, r.seq),
        Err(e) => println!("boot record: none ({e}): golden boots"),
    }
    println!(
        "booted: {booted}{}",
        if fell_back {
            " (FELL BACK: the selected slot holds no valid image)"
        } else {
            ""
        }
    );
    for s in &slots {
        let head = format!(
            "{:<6} {:#09x} {:>2} MiB:",
            s.slot.name(),
            s.base,
            s.size >> 20
        );
        match (&s.header, &s.content) {
            (Ok(h), Some(Err(e))) => println!("{head} INVALID: {e} ({})", describe(h)),
            (Ok(h), c) => println!(
                "{head} valid{} {}",
                if c.is_some() { ", content checked" } else { "" },
                describe(h)
            ),
            (Err(e), _) => println!("{head} INVALID: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn do_boot(ctx: &Ctx, nor: &SpiNor<'_, Box<dyn Device>>, slot: SlotId) -> Result<ExitCode> {
    let rec = rnic_flash::set_boot(nor, ctx.board, slot).map_err(failed)?;
    nor.reconfigure()?;
    // The board holds the NIC in reset while it reconfigures.
    let t0 = ctx.dev.now();
    while ctx.dev.now() < t0 + 1000 {
        ctx.dev.idle();
    }
    let (code, fell_back) = nor.boot_status().map_err(failed)?;
    let booted = SlotId::from_code(code);
    if fell_back || booted != Some(slot) {
        return Err(failed(anyhow!(
            "boot record set to {slot} (write #{}), but the board booted {} (fell back: the slot failed its check)",
            rec.seq,
            booted.map_or("?", |s| s.name())
        )));
    }
    println!(
        "boot record set to {slot} (write #{}); reconfigured; booted {slot}",
        rec.seq
    );
    Ok(ExitCode::SUCCESS)
}

fn boot(ctx: &Ctx, a: &BootArgs) -> Result<ExitCode> {
    let nor = ctx.nor(false)?;
    let st = rnic_flash::slot_state(&nor, ctx.board, a.slot, true).map_err(failed)?;
    if !st.valid() && !a.force {
        let why = match (&st.header, &st.content) {
            (Err(e), _) => e.clone(),
            (_, Some(Err(e))) => e.clone(),
            _ => String::new(),
        };
        bail!("refusing to boot the {} slot: {why} (--force selects it anyway; the board then falls back to golden)", a.slot);
    }
    confirm(
        a.yes,
        &format!(
            "About to select the {} slot and reconfigure the FPGA",
            a.slot
        ),
    )?;
    do_boot(ctx, &nor, a.slot)
}

/// The openFPGALoader command lines that write an image to `slot`, in the
/// order of an in-system write: an erased trailer (the slot reads invalid),
/// the bitstream at the slot start, then (only if that worked) the trailer.
fn jtag_commands(
    target: &ImageTarget,
    slot: SlotId,
    cable: Option<&str>,
    blank: &Path,
    bits: &Path,
    trailer: &Path,
) -> Vec<Vec<String>> {
    let s = target.layout.slot(slot);
    let base = |off: u64, file: &Path| {
        let mut v = vec!["openFPGALoader".to_string()];
        if let Some(c) = cable {
            v.extend(["-c".into(), c.into()]);
        }
        if let Some(p) = &target.openfpgaloader_part {
            v.extend(["--fpga-part".into(), p.into()]);
        }
        v.extend([
            "--write-flash".into(),
            "--offset".into(),
            format!("{off:#x}"),
            "--file-type".into(),
            "bin".into(),
            file.display().to_string(),
        ]);
        v
    };
    vec![
        base(s.trailer(), blank),
        base(s.base, bits),
        base(s.trailer(), trailer),
    ]
}

fn jtag(a: &JtagArgs) -> Result<ExitCode> {
    check_slot_allowed(a.slot, a.allow_golden)?;
    let img = load(&a.image)?;
    let board = rnic_firmware::board(&img.header.board)?;
    if board.kind == rnic_firmware::Kind::Sim {
        bail!("{} is for the simulated board: use `rnic flash --sim-flash FILE write`, there is no JTAG", a.image.display());
    }
    let target = board.image_target()?;
    let s = target.layout.slot(a.slot);
    img.header
        .check_for(board, a.slot.name(), s.max_bitstream(), &img.bitstream)?;
    let dir = std::env::temp_dir().join(format!("rnic-jtag-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let bits = dir.join("bitstream.bin");
    let trailer = dir.join("trailer.bin");
    let blank = dir.join("blank.bin");
    std::fs::write(&blank, vec![0xFFu8; 4096])?;
    std::fs::write(&bits, &img.bitstream)?;
    let mut t = img.header.to_bytes()?.to_vec();
    debug_assert_eq!(t.len(), HEADER_LEN);
    t.resize(4096, 0xFF);
    std::fs::write(&trailer, &t)?;
    let cmds = jtag_commands(target, a.slot, a.cable.as_deref(), &blank, &bits, &trailer);
    if a.dry_run {
        for c in &cmds {
            println!("{}", c.join(" "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let which = std::process::Command::new("openFPGALoader")
        .arg("--help")
        .output();
    if which.is_err() {
        bail!("openFPGALoader not found in PATH (Debian: apt install openfpgaloader); --dry-run prints the commands");
    }
    confirm(
        a.yes,
        &format!(
            "About to write the {} slot of the board on the JTAG cable over JTAG",
            a.slot
        ),
    )?;
    for c in &cmds {
        eprintln!("running: {}", c.join(" "));
        let st = std::process::Command::new(&c[0]).args(&c[1..]).status()?;
        if !st.success() {
            return Err(failed(anyhow!("openFPGALoader failed ({st}); the slot is left invalid (its trailer is written last)")));
        }
    }
    println!(
        "wrote {} to the {} slot over JTAG",
        a.image.display(),
        a.slot
    );
    Ok(ExitCode::SUCCESS)
}
