//! `rnic-vfio-user`: serve simulated rnic NICs over vfio-user sockets.
//!
//!     rnic-vfio-user --dir /tmp/vfu --nics 2 --fabric hostile
//!
//! prints `listening <socket>...` once every socket accepts connections,
//! then runs until killed (or, with `--exit-on-disconnect`, until every
//! client that connected has gone), printing counters every
//! `--stats-every` seconds and at the end.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rnic_sim::{FabricConfig, RootComplexConfig, WorldConfig};
use rnic_vfio_user::{start, ServerConfig};

#[derive(Parser, Debug)]
#[command(
    name = "rnic-vfio-user",
    version,
    about = "Simulated rnic NICs as vfio-user PCIe functions (QEMU -device vfio-user-pci)"
)]
struct Args {
    /// Directory for the sockets `nic0.sock`, `nic1.sock`, ... (created).
    #[arg(long, conflicts_with = "socket")]
    dir: Option<PathBuf>,
    /// One socket per NIC, in NIC order (instead of --dir).
    #[arg(long)]
    socket: Vec<PathBuf>,
    /// Number of NICs (with --dir).
    #[arg(long, default_value_t = 1)]
    nics: usize,
    /// Fabric profile joining the NICs (ideal, lossy, reorder, hostile,
    /// spray-K, spray-K-hostile, ...).
    #[arg(long, default_value = "ideal")]
    fabric: String,
    /// With one NIC: its frames come back to it.
    #[arg(long)]
    loopback: bool,
    /// A fabric port for a QEMU `-netdev stream` peer: the server listens
    /// on this socket (repeatable; e.g. the rxe guest's RoCE port).
    #[arg(long)]
    external: Vec<PathBuf>,
    /// Host model of every NIC: default, bench (no stalls, writes visible
    /// at once, ordering rules kept) or stress.
    #[arg(long, default_value = "default")]
    host: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// DATA_W of the model (64 or 256).
    #[arg(long, default_value_t = 64)]
    data_w: u32,
    /// Cycles between two looks at the request queue.
    #[arg(long, default_value_t = 4)]
    poll_cycles: u64,
    /// Stop when every client that connected has disconnected.
    #[arg(long)]
    exit_on_disconnect: bool,
    /// Print the counters every this many seconds (0: only at the end).
    #[arg(long, default_value_t = 0)]
    stats_every: u64,
    /// No SPI NOR flash on the NICs (by default each has the `sim` board's).
    #[arg(long)]
    no_flash: bool,
    /// Keep NIC i's flash in DIR/nicI.flash (loaded if present, written
    /// when the server stops).
    #[arg(long, conflicts_with = "no_flash")]
    flash_dir: Option<PathBuf>,
    /// Advertise a BAR0 of this many bytes (a power of two, e.g. 0x400)
    /// for every NIC: a function smaller than the register map, which
    /// rnic must refuse.
    #[arg(long, value_parser = parse_size)]
    bar0_size: Option<u64>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("{s}: {e}"))
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,vfio_user=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let a = Args::parse();
    match run(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-vfio-user: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(a: Args) -> anyhow::Result<()> {
    let fabric = FabricConfig::profile(&a.fabric)?;
    let root_complex = match a.host.as_str() {
        "default" => RootComplexConfig::default(),
        "bench" => RootComplexConfig::bench(),
        "stress" => RootComplexConfig::stress(),
        h => anyhow::bail!("--host {h}: one of default, bench, stress"),
    };
    let nics = if a.socket.is_empty() {
        a.nics
    } else {
        a.socket.len()
    };
    let world = WorldConfig {
        nics,
        data_w: a.data_w,
        seed: a.seed,
        root_complex,
        fabric,
        loopback: a.loopback,
        ..WorldConfig::default()
    };
    let mut cfg = match (&a.dir, a.socket.is_empty()) {
        (Some(dir), true) => {
            std::fs::create_dir_all(dir)?;
            ServerConfig::new(world, dir)
        }
        (None, false) => {
            let mut c = ServerConfig::new(world, std::path::Path::new("."));
            c.sockets = a.socket.clone();
            c
        }
        _ => anyhow::bail!("give --dir DIR or --socket PATH (one per NIC)"),
    };
    cfg.externals = a.external.clone();
    cfg.poll_cycles = a.poll_cycles;
    cfg.exit_on_disconnect = a.exit_on_disconnect;
    cfg.flash = !a.no_flash;
    cfg.flash_dir = a.flash_dir.clone();
    cfg.bar0_sizes = vec![a.bar0_size; nics];
    let h = start(cfg)?;
    for s in h.sockets() {
        println!("listening {}", s.display());
    }
    use std::io::Write;
    std::io::stdout().flush()?;
    let mut since = std::time::Instant::now();
    while !h.finished() {
        std::thread::sleep(Duration::from_millis(100));
        if a.stats_every > 0 && since.elapsed() >= Duration::from_secs(a.stats_every) {
            eprintln!("rnic-vfio-user: {}", h.stats());
            since = std::time::Instant::now();
        }
    }
    let st = h.wait();
    eprintln!("rnic-vfio-user: {st}");
    match st.stopped.as_deref() {
        Some("every client disconnected") | Some("stopped by its owner") | None => Ok(()),
        Some(why) => anyhow::bail!("{why}"),
    }
}
