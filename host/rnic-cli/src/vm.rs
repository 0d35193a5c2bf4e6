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
//! A run boots a guest and server and shuts them down afterwards, unless
//! one is kept: `--keep` leaves them running in a background process (the
//! *holder*, `rnic vm --serve`, listening on a unix socket in
//! `$TMPDIR/rnic-vm-kept`), and every later `rnic vm` with the same
//! settings reuses it (a fresh copy of the hardware-only `rnic` and the
//! `--file`s are put in its share each time). `rnic vm --stop` ends it; so
//! does an hour without a command. A holder whose guest lost its device or
//! died exits, so the next run starts clean.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

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
    /// Keep the guest and server running after this command, for the
    /// next `rnic vm` with the same settings (which reuses a kept guest
    /// with or without --keep).
    #[arg(long)]
    pub keep: bool,
    /// Stop the kept guest and server, and run nothing.
    #[arg(long, conflicts_with = "keep")]
    pub stop: bool,
    /// A kept guest stops after this many seconds without a command.
    #[arg(long, default_value_t = 3600)]
    pub keep_idle: u64,
    /// Internal: be the process that keeps the guest (see --keep).
    #[arg(long, hide = true)]
    pub serve: bool,
    /// The `rnic` command line to run in the guest (after `--`).
    #[arg(last = true, value_name = "RNIC ARGS")]
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

/// The folder of the kept guest (`--keep`): its control socket, settings,
/// share, console and QEMU log, the holder's log.
fn kept_dir() -> PathBuf {
    std::env::temp_dir().join("rnic-vm-kept")
}

/// The settings that make a guest what it is; a kept guest is reused only
/// for the same ones.
fn settings(a: &VmArgs) -> String {
    serde_json::json!({
        "nics": a.nics, "fabric": a.fabric, "iommu": !a.no_iommu, "bind": !a.no_bind,
        "image": a.image, "seed": a.sim_seed, "data_w": a.sim_data_w,
        "clock_mhz": a.clock_mhz, "flash_dir": a.flash_dir, "bar0_size": a.bar0_size,
    })
    .to_string()
}

/// The guest's configuration from the command line, in `run_dir`.
fn vm_config(a: &VmArgs, run_dir: &Path) -> VmConfig {
    VmConfig {
        nics: a.nics as usize,
        fabric: a.fabric.clone(),
        iommu: !a.no_iommu,
        bind: !a.no_bind,
        image: a.image.clone(),
        run_dir: run_dir.to_path_buf(),
        seed: a.sim_seed,
        data_w: a.sim_data_w,
        clock_mhz: a.clock_mhz,
        flash_dir: a.flash_dir.clone(),
        bar0_sizes: vec![a.bar0_size; a.nics as usize],
        shared_group: None,
        boot_timeout: Duration::from_secs(a.boot_timeout),
    }
}

pub fn run(a: &VmArgs) -> Result<ExitCode> {
    rnic_sim::FabricConfig::profile(&a.fabric).map_err(|e| anyhow!("--fabric: {e}"))?;
    if a.sim_data_w != 64 && a.sim_data_w != 256 {
        bail!("--sim-data-w must be 64 or 256");
    }
    if !(a.clock_mhz.is_finite() && a.clock_mhz > 0.0) {
        bail!("--clock-mhz must be above 0");
    }
    if a.serve {
        return serve(a);
    }
    if a.stop {
        return stop_kept();
    }
    if a.args.is_empty() {
        bail!("give the rnic command to run in the guest after `--`, e.g. rnic vm -- list");
    }
    let rnic = hardware_rnic(a.rnic.as_deref())?;
    if let Some(conn) = connect_kept(&settings(a))? {
        return run_kept(a, conn, &rnic);
    }
    if a.keep {
        start_holder(a)?;
        let conn = connect_kept(&settings(a))?.ok_or_else(|| {
            anyhow!(
                "the kept guest did not come up (see {})",
                kept_dir().join("holder.log").display()
            )
        })?;
        return run_kept(a, conn, &rnic);
    }
    let (run_dir, temporary) = match &a.run_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rnic-vm-{}", std::process::id())),
            true,
        ),
    };
    let share = run_dir.join("share");
    make_share(&share, &rnic, &a.files)?;
    let cfg = vm_config(a, &run_dir);
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

/// A request to the holder, one JSON line.
#[derive(serde::Serialize, serde::Deserialize)]
struct Request {
    args: Vec<String>,
    user: Option<String>,
    timeout: u64,
    stop: bool,
}

/// One line of the holder's answer.
#[derive(serde::Serialize, serde::Deserialize)]
enum Reply {
    /// What `rnic vm` itself says (devices supplied).
    Note(String),
    Stderr(String),
    /// The command ended: its exit status and standard output.
    Done {
        rc: i32,
        stdout: Vec<u8>,
    },
    Error(String),
}

fn send(w: &mut impl Write, r: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
    line.push('\n');
    w.write_all(line.as_bytes())
}

/// A connection to the kept guest if there is one with these settings.
fn connect_kept(settings: &str) -> Result<Option<UnixStream>> {
    let dir = kept_dir();
    let Ok(s) = UnixStream::connect(dir.join("control.sock")) else {
        return Ok(None);
    };
    let kept = std::fs::read_to_string(dir.join("settings.json")).unwrap_or_default();
    if kept.trim() != settings {
        say(format!(
            "a kept guest with other settings is running ({}); this run boots its own (rnic vm --stop ends the kept one)",
            kept.trim()
        ));
        return Ok(None);
    }
    Ok(Some(s))
}

/// Runs the command in the kept guest.
fn run_kept(a: &VmArgs, mut conn: UnixStream, rnic: &Path) -> Result<ExitCode> {
    make_share(&kept_dir().join("share"), rnic, &a.files)?;
    let req = Request {
        args: a.args.clone(),
        user: a.user.clone(),
        timeout: a.timeout,
        stop: false,
    };
    conn.write_all(format!("{}\n", serde_json::to_string(&req)?).as_bytes())?;
    for line in BufReader::new(conn).lines() {
        match serde_json::from_str::<Reply>(&line?)? {
            Reply::Note(m) => say(m),
            Reply::Stderr(t) => eprint!("{t}"),
            Reply::Done { rc, stdout } => {
                std::io::stdout().write_all(&stdout)?;
                std::io::stdout().flush()?;
                return Ok(ExitCode::from(rc.clamp(0, 255) as u8));
            }
            Reply::Error(e) => bail!("{e}"),
        }
    }
    bail!(
        "the kept guest's holder went away (see {})",
        kept_dir().join("holder.log").display()
    )
}

/// `rnic vm --stop`.
fn stop_kept() -> Result<ExitCode> {
    let dir = kept_dir();
    let Ok(mut s) = UnixStream::connect(dir.join("control.sock")) else {
        say("no kept guest");
        return Ok(ExitCode::SUCCESS);
    };
    let req = Request {
        args: Vec::new(),
        user: None,
        timeout: 0,
        stop: true,
    };
    s.write_all(format!("{}\n", serde_json::to_string(&req)?).as_bytes())?;
    let mut ack = String::new();
    let _ = BufReader::new(s).read_line(&mut ack);
    say("kept guest stopped");
    Ok(ExitCode::SUCCESS)
}

/// Starts the holder in the background with this command's settings and
/// waits until its guest is up.
fn start_holder(a: &VmArgs) -> Result<()> {
    let dir = kept_dir();
    std::fs::create_dir_all(&dir)?;
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args([
        "vm",
        "--serve",
        "--nics",
        &a.nics.to_string(),
        "--fabric",
        &a.fabric,
    ]);
    cmd.args(["--sim-seed", &a.sim_seed.to_string()]);
    cmd.args(["--sim-data-w", &a.sim_data_w.to_string()]);
    cmd.args(["--clock-mhz", &a.clock_mhz.to_string()]);
    cmd.args(["--boot-timeout", &a.boot_timeout.to_string()]);
    cmd.args(["--keep-idle", &a.keep_idle.to_string()]);
    cmd.arg("--image").arg(&a.image);
    if a.no_iommu {
        cmd.arg("--no-iommu");
    }
    if a.no_bind {
        cmd.arg("--no-bind");
    }
    if let Some(d) = &a.flash_dir {
        cmd.arg("--flash-dir").arg(d);
    }
    if let Some(b) = a.bar0_size {
        cmd.args(["--bar0-size", &b.to_string()]);
    }
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("holder.log"))?)
        .process_group(0)
        .spawn()?;
    say(format!("booting a guest to keep (log {})", dir.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line)?;
    if line.trim() != "ready" {
        let _ = child.wait();
        let log = std::fs::read_to_string(dir.join("holder.log")).unwrap_or_default();
        bail!(
            "the guest to keep did not come up: {}",
            log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        );
    }
    Ok(())
}

/// `rnic vm --serve`: the holder. Boots the guest, then runs the commands
/// of `rnic vm` clients one at a time until told to stop, idle for
/// `--keep-idle` seconds, or its guest is no longer usable.
fn serve(a: &VmArgs) -> Result<ExitCode> {
    let dir = kept_dir();
    std::fs::create_dir_all(&dir)?;
    let sock = dir.join("control.sock");
    if UnixStream::connect(&sock).is_ok() {
        bail!("a kept guest is already running ({})", sock.display());
    }
    let _ = std::fs::remove_file(&sock);
    let share = dir.join("share");
    std::fs::create_dir_all(share.join("files"))?;
    let mut vm = Vm::start(&vm_config(a, &dir), &share)?;
    std::fs::write(dir.join("settings.json"), settings(a))?;
    let listener = UnixListener::bind(&sock)?;
    listener.set_nonblocking(true)?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut idle_since = Instant::now();
    let why = loop {
        let mut conn = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if idle_since.elapsed() > Duration::from_secs(a.keep_idle) {
                    break "idle".to_string();
                }
                if let Err(e) = vm.guest.check_alive("while kept") {
                    break e.to_string();
                }
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            Err(e) => break e.to_string(),
        };
        conn.set_nonblocking(false)?;
        let mut line = String::new();
        BufReader::new(conn.try_clone()?).read_line(&mut line)?;
        let Ok(req) = serde_json::from_str::<Request>(&line) else {
            continue;
        };
        if req.stop {
            let _ = send(&mut conn, &Reply::Note("stopping".into()));
            break "stopped".into();
        }
        let args = supply_devices(&req.args, &vm.bdfs);
        if args != req.args {
            let _ = send(
                &mut conn,
                &Reply::Note(format!("kept guest: rnic {}", args.join(" "))),
            );
        }
        let mut w = conn.try_clone()?;
        let res = vm.rnic(
            &args,
            req.user.as_deref(),
            Duration::from_secs(req.timeout),
            &mut |t| {
                let _ = send(&mut w, &Reply::Stderr(t.to_string()));
            },
        );
        idle_since = Instant::now();
        match res {
            Ok(o) => {
                let _ = send(
                    &mut conn,
                    &Reply::Done {
                        rc: o.rc,
                        stdout: o.stdout,
                    },
                );
            }
            Err(e) => {
                // A guest that lost its device or ran into trouble is not
                // kept: the next run starts clean.
                let _ = send(&mut conn, &Reply::Error(format!("{e:#}")));
                break format!("{e:#}");
            }
        }
    };
    eprintln!("rnic vm --serve: ending ({why})");
    let _ = std::fs::remove_file(&sock);
    let _ = std::fs::remove_file(dir.join("settings.json"));
    if let Some(st) = vm.stop() {
        eprintln!("rnic vm --serve: server: {st}");
    }
    Ok(ExitCode::SUCCESS)
}
