//! The soft-RoCE peer: a QEMU guest (Debian 12, `rdma_rxe`, rdma-core,
//! perftest) built by `sim/rxe-guest/build-image.sh`, booted with its RoCE
//! port (eth0) on a unix socket in QEMU's stream framing, which the caller
//! attaches to the simulator's fabric ([`rnic_sim::SimWorld::connect_external`]).
//!
//! The guest's init script brings `rxe0` up and then serves an agent on a
//! virtio-serial port: one shell command per line, its output, then
//! `@@rnic-exit <rc>`. A second NIC (eth1, QEMU user networking) carries the
//! out-of-band TCP exchanges: the host reaches the guest's port 18515 at
//! `127.0.0.1:control_port`, the guest reaches the host as 10.0.2.2.
//!
//! The same image and agent also serve a second role, [`GuestRole::Vfio`]:
//! no network, the simulated NICs attached as PCI functions over vfio-user
//! (QEMU's `vfio-user-pci`, from the QEMU that `sim/vm/install-qemu.sh`
//! installs, see [`sid_qemu`]), guest RAM in a shared memfd so the server
//! can DMA into it, optionally a virtual IOMMU (`intel-iommu`, so the guest
//! kernel's VFIO gives `/dev/vfio/N`), and a host folder shared read-only
//! at `/mnt/host` (9p) to run a freshly built `rnic` in the guest.
//!
//! Everything is bounded: a missing QEMU or image, a guest that does not
//! boot, a command that does not end and a guest that dies all end in a
//! [`GuestError`] naming the cause (with the tail of the guest's console and
//! of QEMU's own messages).

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rnic_sim::StreamPort;

/// What can go wrong with the guest.
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    #[error(
        "{0} not found on PATH: install QEMU 10 (sim/rxe-guest/install-tools.sh, or .ci/setup)"
    )]
    QemuMissing(String),
    #[error("no guest image in {dir}: missing {file} (build it: sim/rxe-guest/build-image.sh {dir}, as root, or `rnic interop --build-image`)")]
    ImageMissing { dir: PathBuf, file: &'static str },
    #[error("could not start {what}: {err}")]
    Spawn { what: String, err: io::Error },
    #[error("the guest did not report ready within {secs} s; console tail:\n{console}")]
    BootTimeout { secs: u64, console: String },
    #[error("QEMU exited ({status}) {when}; console tail:\n{console}")]
    QemuExited {
        status: String,
        when: &'static str,
        console: String,
    },
    #[error("soft-RoCE did not come up in the guest: {0}")]
    RxeFailed(String),
    #[error("guest agent: {0}")]
    Agent(String),
    #[error("guest command `{cmd}` did not end within {secs} s; output so far:\n{output}")]
    CommandTimeout {
        cmd: String,
        secs: u64,
        output: String,
    },
    #[error(
        "the vfio-user server of {device} went away (QEMU lost the socket); the guest's \
         accesses to it now fail. QEMU's messages:\n{log}"
    )]
    DeviceLost { device: String, log: String },
    #[error(transparent)]
    Sim(#[from] rnic_sim::SimError),
    #[error("{0}")]
    Io(#[from] io::Error),
}

pub type Result<T, E = GuestError> = std::result::Result<T, E>;

/// How the guest is booted.
#[derive(Debug, Clone)]
pub struct GuestConfig {
    /// Output of `build-image.sh`: vmlinuz, initrd.img, rootfs.ext4.
    pub image: PathBuf,
    /// Sockets and the console log go here.
    pub run_dir: PathBuf,
    pub qemu: String,
    pub memory_mib: u32,
    /// The guest's RoCE address (eth0, /24) and MAC.
    pub ip: Ipv4Addr,
    pub mac: [u8; 6],
    /// The simulated NIC's address: a static neighbour entry in the guest
    /// (the NIC does not answer ARP).
    pub peer_ip: Ipv4Addr,
    pub peer_mac: [u8; 6],
    /// eth0's MTU (4200: rxe's active MTU is then 4096).
    pub mtu: u32,
    pub boot_timeout: Duration,
    /// What the guest is for.
    pub role: GuestRole,
    /// A host folder shared read-only at `/mnt/host` in the guest (9p).
    pub share: Option<PathBuf>,
    /// Vfio role: put the function of this socket (by index) behind a
    /// PCIe-to-PCI bridge together with a virtio-rng device, so that its
    /// IOMMU group is shared with a function VFIO does not own (for testing
    /// the refusal of such a group).
    pub shared_group: Option<usize>,
}

/// The guest's role: the soft-RoCE peer, or a host of vfio-user functions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GuestRole {
    /// `rdma_rxe` on eth0, which is a stream socket into the simulator's
    /// fabric; eth1 is the control port (QEMU user networking).
    #[default]
    Rxe,
    /// No network. One `vfio-user-pci` function per socket (in order, so
    /// the guest sees them at 00:02.0, 00:03.0, ...; after the IOMMU and
    /// the serial port: see the console), guest RAM in a shared memfd, the
    /// VFIO modules loaded. `iommu`: an `intel-iommu` (caching mode) and
    /// `intel_iommu=on`, so binding a function to `vfio-pci` gives
    /// `/dev/vfio/N` and every guest DMA mapping reaches the server; without
    /// it QEMU maps all guest RAM at its physical address and the guest's
    /// VFIO has no IOMMU group to offer (only sysfs access works).
    Vfio { sockets: Vec<PathBuf>, iommu: bool },
}

/// The QEMU with `vfio-user-pci`: `$RNIC_QEMU_VFIO_USER`, else the wrapper
/// `sim/vm/qemu.sh` of this source tree (which runs the QEMU that
/// `sim/vm/install-qemu.sh` installed).
pub fn sid_qemu() -> PathBuf {
    match std::env::var_os("RNIC_QEMU_VFIO_USER") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sim/vm/qemu.sh"),
    }
}

impl GuestConfig {
    pub fn new(image: impl Into<PathBuf>, run_dir: impl Into<PathBuf>) -> Self {
        Self {
            image: image.into(),
            run_dir: run_dir.into(),
            qemu: "qemu-system-x86_64".into(),
            memory_mib: 1024,
            ip: Ipv4Addr::new(192, 168, 77, 2),
            mac: [0x52, 0x54, 0x00, 0x12, 0x34, 0x02],
            peer_ip: Ipv4Addr::new(192, 168, 77, 1),
            peer_mac: [0x02, 0x00, 0x00, 0x00, 0x00, 0x01],
            mtu: 4200,
            boot_timeout: Duration::from_secs(240),
            role: GuestRole::Rxe,
            share: None,
            shared_group: None,
        }
    }

    /// A guest hosting the vfio-user functions behind `sockets` (the
    /// server must listen on them before [`Guest::boot`]), booted by
    /// [`sid_qemu`].
    pub fn vfio(
        image: impl Into<PathBuf>,
        run_dir: impl Into<PathBuf>,
        sockets: Vec<PathBuf>,
        iommu: bool,
    ) -> Self {
        Self {
            qemu: sid_qemu().display().to_string(),
            role: GuestRole::Vfio { sockets, iommu },
            ..Self::new(image, run_dir)
        }
    }
}

/// The finished command's exit code and output.
#[derive(Debug, Clone)]
pub struct CmdResult {
    pub rc: i32,
    pub output: String,
}

/// A booted guest with `rxe0` active.
pub struct Guest {
    child: Child,
    agent: UnixStream,
    agent_buf: Vec<u8>,
    output: String,
    running: Option<(String, Instant)>,
    roce: Option<StreamPort>,
    /// Host TCP port forwarded to the guest's port 18515.
    pub control_port: u16,
    /// rxe0's GID at index 1 (the IPv4-mapped one).
    pub gid: [u8; 16],
    /// rxe0's active MTU in bytes.
    pub active_mtu: u32,
    pub boot_time: Duration,
    console: PathBuf,
    qemu_log: PathBuf,
    /// Bytes of `qemu_log` looked at for a lost vfio-user server, and when
    /// one was first seen (the message naming the device may follow).
    qemu_log_seen: u64,
    lost_since: Option<Instant>,
    cfg: GuestConfig,
}

pub fn mac_str(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Parse a GID as `ibv_devinfo` / sysfs print it (`0000:0000:0000:0000:0000:ffff:c0a8:4d02`)
/// or as 32 hex digits.
pub fn parse_gid(s: &str) -> Option<[u8; 16]> {
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut g = [0u8; 16];
    for (i, b) in g.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(g)
}

/// The IPv4-mapped GID of `ip` (what RoCEv2 uses for IPv4 addresses).
pub fn ipv4_gid(ip: Ipv4Addr) -> [u8; 16] {
    ip.to_ipv6_mapped().octets()
}

/// The IPv4 address inside an IPv4-mapped GID.
pub fn gid_ipv4(g: &[u8; 16]) -> Option<Ipv4Addr> {
    std::net::Ipv6Addr::from(*g).to_ipv4_mapped()
}

fn which(cmd: &str) -> bool {
    if cmd.contains('/') {
        return Path::new(cmd).exists();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
        .unwrap_or(false)
}

fn free_tcp_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn tail(path: &Path, lines: usize) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

impl Guest {
    /// Boot the guest and wait until its agent reports `rxe0` active.
    pub fn boot(cfg: &GuestConfig) -> Result<Self> {
        if !which(&cfg.qemu) {
            return Err(GuestError::QemuMissing(cfg.qemu.clone()));
        }
        for file in ["vmlinuz", "initrd.img", "rootfs.ext4"] {
            if !cfg.image.join(file).is_file() {
                return Err(GuestError::ImageMissing {
                    dir: cfg.image.clone(),
                    file,
                });
            }
        }
        std::fs::create_dir_all(&cfg.run_dir)?;
        let roce_path = cfg.run_dir.join("roce.sock");
        let agent_path = cfg.run_dir.join("agent.sock");
        let console = cfg.run_dir.join("console.log");
        let qemu_log = cfg.run_dir.join("qemu.log");
        let _ = std::fs::remove_file(&console);
        let rxe = cfg.role == GuestRole::Rxe;
        let roce_l = if rxe {
            Some(StreamPort::listen(&roce_path)?)
        } else {
            None
        };
        let _ = std::fs::remove_file(&agent_path);
        let agent_l = UnixListener::bind(&agent_path)?;
        let control_port = if rxe { free_tcp_port()? } else { 0 };
        let img = |f: &str| cfg.image.join(f).display().to_string();
        // no_timer_check: under TCG on a loaded host the kernel's early
        // check of the timer interrupt can fail, and with interrupt
        // remapping (the vIOMMU) it then panics ("timer doesn't work
        // through Interrupt-remapped IO-APIC") instead of falling back.
        let mut append =
            "root=/dev/vda rw console=ttyS0 net.ifnames=0 init=/sbin/rnic-init panic=-1 \
                          no_timer_check"
                .to_string();
        let mut machine = "q35".to_string();
        let mut role_args: Vec<String> = Vec::new();
        match &cfg.role {
            GuestRole::Rxe => {
                append += &format!(
                    " rnic.ip={}/24 rnic.mtu={} rnic.neigh={},{}",
                    cfg.ip,
                    cfg.mtu,
                    cfg.peer_ip,
                    mac_str(&cfg.peer_mac)
                );
                role_args.extend([
                    "-netdev".into(),
                    format!(
                        "stream,id=roce,server=off,addr.type=unix,addr.path={}",
                        roce_path.display()
                    ),
                    "-device".into(),
                    format!("virtio-net-pci,netdev=roce,mac={}", mac_str(&cfg.mac)),
                    "-netdev".into(),
                    format!("user,id=ctl,hostfwd=tcp:127.0.0.1:{control_port}-:18515"),
                    "-device".into(),
                    "virtio-net-pci,netdev=ctl,mac=52:54:00:12:34:03".into(),
                ]);
            }
            GuestRole::Vfio { sockets, iommu } => {
                append += " rnic.role=vfio";
                // The server maps guest RAM from the descriptor QEMU passes
                // with each DMA region: RAM must be a shared memfd.
                machine += ",memory-backend=mem";
                role_args.extend([
                    "-object".into(),
                    format!(
                        "memory-backend-memfd,id=mem,size={}M,share=on",
                        cfg.memory_mib
                    ),
                ]);
                if *iommu {
                    append += " intel_iommu=on";
                    role_args.extend(["-device".into(), "intel-iommu,caching-mode=on".into()]);
                }
                if cfg.shared_group.is_some() {
                    // A PCIe-to-PCI bridge: the IOMMU sees every function
                    // behind it as the bridge, so they share one group.
                    role_args.extend([
                        "-device".into(),
                        "pcie-pci-bridge,id=rnicbr,bus=pcie.0".into(),
                        "-device".into(),
                        "virtio-rng-pci,bus=rnicbr,addr=2".into(),
                    ]);
                }
                for (i, sock) in sockets.iter().enumerate() {
                    let mut dev = serde_json::json!({
                        "driver": "vfio-user-pci",
                        "socket": { "path": sock.display().to_string(), "type": "unix" },
                        "rombar": 0,
                    });
                    if cfg.shared_group == Some(i) {
                        dev["bus"] = "rnicbr".into();
                        dev["addr"] = "1".into();
                    }
                    role_args.extend(["-device".into(), dev.to_string()]);
                }
            }
        }
        if let Some(dir) = &cfg.share {
            append += " rnic.share=rnic";
            role_args.extend([
                "-virtfs".into(),
                format!(
                    "local,path={},mount_tag=rnic,security_model=none,readonly=on",
                    dir.display()
                ),
            ]);
        }
        let mut args: Vec<String> = vec![
            "-accel".into(),
            "tcg".into(),
            "-machine".into(),
            machine,
            "-cpu".into(),
            "max".into(),
            "-m".into(),
            cfg.memory_mib.to_string(),
            "-smp".into(),
            "1".into(),
            "-nodefaults".into(),
            "-display".into(),
            "none".into(),
            "-no-reboot".into(),
            "-kernel".into(),
            img("vmlinuz"),
            "-initrd".into(),
            img("initrd.img"),
            "-append".into(),
            append,
            "-drive".into(),
            format!(
                "file={},if=virtio,format=raw,snapshot=on",
                img("rootfs.ext4")
            ),
        ];
        args.extend(role_args);
        args.extend([
            "-device".into(),
            "virtio-serial-pci".into(),
            "-chardev".into(),
            format!("socket,id=agent,path={}", agent_path.display()),
            "-device".into(),
            "virtserialport,chardev=agent,name=rnic.agent".into(),
            "-serial".into(),
            format!("file:{}", console.display()),
        ]);
        tracing::info!(qemu = %cfg.qemu, args = %args.join(" "), "booting the guest");
        let t0 = Instant::now();
        let mut child = Command::new(&cfg.qemu)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&qemu_log)?)
            .spawn()
            .map_err(|err| GuestError::Spawn {
                what: cfg.qemu.clone(),
                err,
            })?;
        let exited = |child: &mut Child| -> Option<String> {
            match child.try_wait() {
                Ok(Some(st)) => Some(format!("{st}: {}", tail(&qemu_log, 20).trim())),
                _ => None,
            }
        };
        // QEMU connects its sockets while it starts.
        let roce = match roce_l {
            None => None,
            Some(roce_l) => {
                let mut gone = None;
                let roce = StreamPort::accept(&roce_l, Duration::from_secs(30), || {
                    match exited(&mut child) {
                        Some(s) => {
                            gone = Some(s.clone());
                            Err(format!("QEMU exited ({s})"))
                        }
                        None => Ok(()),
                    }
                });
                match roce {
                    Ok(p) => Some(p),
                    Err(e) => {
                        if let Some(st) = gone {
                            return Err(GuestError::QemuExited {
                                status: st,
                                when: "while starting",
                                console: tail(&console, 30),
                            });
                        }
                        let _ = child.kill();
                        return Err(GuestError::Agent(format!(
                            "QEMU did not connect its RoCE port: {e}"
                        )));
                    }
                }
            }
        };
        agent_l.set_nonblocking(true)?;
        let agent = loop {
            match agent_l.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
            if let Some(s) = exited(&mut child) {
                return Err(GuestError::QemuExited {
                    status: s,
                    when: "while starting",
                    console: tail(&console, 30),
                });
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                return Err(GuestError::Agent(
                    "QEMU did not connect the agent socket within 30 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        agent.set_nonblocking(true)?;
        let mut g = Self {
            child,
            agent,
            agent_buf: Vec::new(),
            output: String::new(),
            running: None,
            roce,
            control_port,
            gid: [0; 16],
            active_mtu: 0,
            boot_time: Duration::ZERO,
            console,
            qemu_log,
            qemu_log_seen: 0,
            lost_since: None,
            cfg: cfg.clone(),
        };
        let deadline = t0 + cfg.boot_timeout;
        loop {
            if let Some(line) = g.read_line()? {
                if let Some(rest) = line.strip_prefix("@@rnic-ready") {
                    if !rxe {
                        break;
                    }
                    let mut it = rest.split_whitespace();
                    let gid = it.next().and_then(parse_gid);
                    let mtu = it.next().and_then(|m| m.parse::<u32>().ok());
                    match (gid, mtu) {
                        (Some(gid), Some(mtu)) => {
                            g.gid = gid;
                            g.active_mtu = mtu;
                        }
                        _ => return Err(GuestError::Agent(format!("bad ready line {line:?}"))),
                    }
                    break;
                }
                if let Some(rest) = line.strip_prefix("@@rnic-failed") {
                    return Err(GuestError::RxeFailed(format!(
                        "{}; console tail:\n{}",
                        rest.trim(),
                        g.console_tail(30)
                    )));
                }
                tracing::debug!(guest = %line);
                continue;
            }
            g.check_alive("while booting")?;
            if Instant::now() > deadline {
                return Err(GuestError::BootTimeout {
                    secs: cfg.boot_timeout.as_secs(),
                    console: g.console_tail(30),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        g.boot_time = t0.elapsed();
        tracing::info!(
            secs = g.boot_time.as_secs_f64(),
            gid = %std::net::Ipv6Addr::from(g.gid),
            mtu = g.active_mtu,
            "rxe guest ready"
        );
        Ok(g)
    }

    /// The guest's end of the RoCE link, to attach to the fabric (once).
    pub fn take_roce_port(&mut self) -> Option<StreamPort> {
        self.roce.take()
    }

    /// Give the link back (after a run's world is done with it).
    pub fn put_roce_port(&mut self, p: StreamPort) {
        self.roce = Some(p);
    }

    pub fn config(&self) -> &GuestConfig {
        &self.cfg
    }

    pub fn console_path(&self) -> &Path {
        &self.console
    }

    pub fn console_tail(&self, lines: usize) -> String {
        tail(&self.console, lines)
    }

    /// QEMU's own messages (its standard error), e.g. a vfio-user device
    /// that lost its server.
    pub fn qemu_log_path(&self) -> &Path {
        &self.qemu_log
    }

    pub fn qemu_log_tail(&self, lines: usize) -> String {
        tail(&self.qemu_log, lines)
    }

    /// Err if QEMU is gone. QEMU 11 sometimes aborts (an assertion in
    /// its error path) instead of carrying on when a vfio-user server dies
    /// under it; that is reported as the device lost, naming the sockets
    /// that no longer listen.
    pub fn check_alive(&mut self, when: &'static str) -> Result<()> {
        if let Ok(Some(st)) = self.child.try_wait() {
            let dead = self.dead_sockets();
            if !dead.is_empty() {
                return Err(GuestError::DeviceLost {
                    device: dead.join(", "),
                    log: format!(
                        "QEMU exited ({st}) {when}: {}",
                        self.qemu_log_tail(10).trim()
                    ),
                });
            }
            return Err(GuestError::QemuExited {
                status: format!("{st}: {}", self.qemu_log_tail(20).trim()),
                when,
                console: self.console_tail(30),
            });
        }
        Ok(())
    }

    /// Err if a vfio-user function lost its server. QEMU keeps running when
    /// a server's socket closes: it prints `failed to read header: EOF` or
    /// `Unable to write to socket: Broken pipe`, then every access to the function fails (reads return all ones)
    /// with a message naming it (`vfio-user:SOCKET`). A guest program that
    /// waits on memory the device should write would wait for ever, so the
    /// runner watches QEMU's messages and ends the command with the device
    /// named: the sockets that no longer take a connection, else those
    /// QEMU's messages name.
    pub fn check_devices(&mut self) -> Result<()> {
        let GuestRole::Vfio { sockets, .. } = &self.cfg.role else {
            return Ok(());
        };
        if self.lost_since.is_none() {
            let Ok(mut f) = std::fs::File::open(&self.qemu_log) else {
                return Ok(());
            };
            let mut new = String::new();
            use std::io::Seek;
            if f.seek(io::SeekFrom::Start(self.qemu_log_seen)).is_err()
                || f.read_to_string(&mut new).is_err()
            {
                return Ok(());
            }
            // The first sign may be the reader's EOF or a writer's EPIPE.
            let lost = ["failed to read header", "Unable to write to socket"]
                .iter()
                .filter_map(|m| new.find(m))
                .min();
            match lost {
                Some(i) => {
                    self.qemu_log_seen += i as u64;
                    self.lost_since = Some(Instant::now());
                }
                None => {
                    // Keep a partial last line for the next look.
                    let done = new.rfind('\n').map_or(0, |i| i + 1);
                    self.qemu_log_seen += done as u64;
                    return Ok(());
                }
            }
        }
        let text = std::fs::read_to_string(&self.qemu_log).unwrap_or_default();
        let after = text.get(self.qemu_log_seen as usize..).unwrap_or("");
        let named: Vec<String> = sockets
            .iter()
            .map(|s| format!("vfio-user:{}", s.display()))
            .filter(|d| after.contains(d.as_str()))
            .collect();
        let waited = self
            .lost_since
            .is_some_and(|t| t.elapsed() > Duration::from_secs(1));
        // A server that died no longer listens: its sockets refuse a
        // connection (a live one queues it), which names the lost devices
        // even when the guest command only polls memory and QEMU says
        // nothing more.
        let dead = self.dead_sockets();
        let device = if !dead.is_empty() {
            dead.join(", ")
        } else if sockets.len() == 1 {
            format!("vfio-user:{}", sockets[0].display())
        } else if !named.is_empty() {
            named.join(", ")
        } else if waited {
            format!(
                "one of {}",
                sockets
                    .iter()
                    .map(|s| format!("vfio-user:{}", s.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            return Ok(());
        };
        Err(GuestError::DeviceLost {
            device,
            log: after.lines().take(10).collect::<Vec<_>>().join("\n"),
        })
    }

    /// The vfio-user sockets whose server no longer listens (it refuses a
    /// connection; a live one queues it), as QEMU names them.
    fn dead_sockets(&self) -> Vec<String> {
        let GuestRole::Vfio { sockets, .. } = &self.cfg.role else {
            return Vec::new();
        };
        sockets
            .iter()
            .filter(|s| UnixStream::connect(s).is_err())
            .map(|s| format!("vfio-user:{}", s.display()))
            .collect()
    }

    /// One complete line from the agent, if there is one now.
    fn read_line(&mut self) -> Result<Option<String>> {
        loop {
            if let Some(i) = self.agent_buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.agent_buf.drain(..=i).collect();
                let s = String::from_utf8_lossy(&line[..line.len() - 1]);
                return Ok(Some(s.trim_end_matches('\r').to_string()));
            }
            let mut buf = [0u8; 4096];
            match self.agent.read(&mut buf) {
                Ok(0) => {
                    // The agent's end closes as QEMU goes (a guest that
                    // panicked, a QEMU that aborted): give it a moment, so
                    // the error says why, with the console.
                    let t0 = Instant::now();
                    while t0.elapsed() < Duration::from_secs(3) {
                        self.check_alive("(agent closed)")?;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    return Err(GuestError::Agent(format!(
                        "the agent channel closed; console tail:\n{}",
                        self.console_tail(20)
                    )));
                }
                Ok(n) => self.agent_buf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Start `cmd` (one line of shell) in the guest; one command at a time.
    pub fn start(&mut self, cmd: &str) -> Result<()> {
        if cmd.contains('\n') {
            return Err(GuestError::Agent("a command is one line".into()));
        }
        if let Some((c, _)) = &self.running {
            return Err(GuestError::Agent(format!("`{c}` is still running")));
        }
        tracing::info!(cmd, "guest command");
        self.agent.set_nonblocking(false)?;
        let r = self.agent.write_all(format!("{cmd}\n").as_bytes());
        self.agent.set_nonblocking(true)?;
        r?;
        self.output.clear();
        self.running = Some((cmd.to_string(), Instant::now()));
        Ok(())
    }

    /// The running command's result, if it has ended (never blocks).
    pub fn poll(&mut self) -> Result<Option<CmdResult>> {
        if self.running.is_none() {
            return Err(GuestError::Agent("no command is running".into()));
        }
        while let Some(line) = self.read_line()? {
            if let Some(rc) = line.strip_prefix("@@rnic-exit ") {
                let rc = rc.trim().parse().unwrap_or(-1);
                self.running = None;
                return Ok(Some(CmdResult {
                    rc,
                    output: std::mem::take(&mut self.output),
                }));
            }
            tracing::debug!(guest = %line);
            self.output.push_str(&line);
            self.output.push('\n');
        }
        self.check_alive("while a command ran")?;
        self.check_devices()?;
        Ok(None)
    }

    /// Output of the running command so far.
    pub fn output_so_far(&self) -> &str {
        &self.output
    }

    /// Error out if the running command has run longer than `limit`.
    pub fn check_deadline(&self, limit: Duration) -> Result<()> {
        if let Some((cmd, t0)) = &self.running {
            if t0.elapsed() > limit {
                return Err(GuestError::CommandTimeout {
                    cmd: cmd.clone(),
                    secs: limit.as_secs(),
                    output: self.output.clone(),
                });
            }
        }
        Ok(())
    }

    /// Run `cmd` and wait for it (for commands that need nothing from the
    /// simulation).
    pub fn run(&mut self, cmd: &str, limit: Duration) -> Result<CmdResult> {
        self.start(cmd)?;
        loop {
            if let Some(r) = self.poll()? {
                return Ok(r);
            }
            self.check_deadline(limit)?;
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A command is running (e.g. a run failed while the guest's program
    /// was still waiting): the agent takes no other until it ends.
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// Kill this guest and boot a fresh one with the same configuration.
    pub fn reboot(self) -> Result<Self> {
        let cfg = self.cfg.clone();
        drop(self);
        Self::boot(&cfg)
    }

    /// QEMU's process id (to make the guest vanish in tests).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// rxe0's port counters (`hw_counters` in sysfs: packets, sequence
    /// errors, duplicates, RNR, retries ...).
    pub fn rxe_counters(&mut self) -> Result<std::collections::BTreeMap<String, u64>> {
        let r = self.run(
            "cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep -H . *",
            Duration::from_secs(30),
        )?;
        if r.rc != 0 {
            return Err(GuestError::Agent(format!(
                "reading rxe0's counters: {}",
                r.output
            )));
        }
        Ok(r.output
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().parse().ok()?))
            })
            .collect())
    }

    /// Ask the guest to power off; kill QEMU if it has not within 10 s.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.agent.set_nonblocking(false);
            let _ = self.agent.write_all(b"poweroff\n");
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gids() {
        let g = parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:4d02").unwrap();
        assert_eq!(gid_ipv4(&g), Some(Ipv4Addr::new(192, 168, 77, 2)));
        assert_eq!(ipv4_gid(Ipv4Addr::new(192, 168, 77, 2)), g);
        assert!(parse_gid("fe80::1").is_none());
        assert!(parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:4dzz").is_none());
    }

    #[test]
    fn a_missing_qemu_or_image_is_a_clear_error() {
        let mut c = GuestConfig::new("/nonexistent/image", std::env::temp_dir());
        c.qemu = "/nonexistent/qemu-system-x86_64".into();
        let e = Guest::boot(&c).err().unwrap();
        assert!(matches!(e, GuestError::QemuMissing(_)), "{e}");
        c.qemu = "sh".into();
        let e = Guest::boot(&c).err().unwrap();
        assert!(matches!(e, GuestError::ImageMissing { .. }), "{e}");
        assert!(e.to_string().contains("build-image.sh"));
    }
}
