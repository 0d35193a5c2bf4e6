//! The server: a [`SimWorld`] of N simulated NICs, each presented as a PCIe
//! function on a vfio-user socket of its own.
//!
//! Threads. The world is single-threaded (`SimWorld` is an `Rc`), so it
//! lives on one thread, the *simulation thread*, which steps the clock
//! without pause once a client has touched BAR0 and services requests every
//! [`ServerConfig::poll_cycles`] cycles. A NIC's own clock is stopped
//! (`World::park`, its port down) until its client first reads or writes
//! its BAR0, but while a reset of it runs (a driver's bind resets a
//! function): a function no client uses costs no simulation (in `tests/rnic_vm.rs`, two of the four NICs), where an
//! idle one costs as much as a busy one. Each socket has a *protocol thread*
//! running `vfio_user::Server` (message parsing, replies, file descriptors);
//! its backend turns every request into a message for the simulation thread
//! and, where the protocol needs an answer (BAR0 reads, DMA map and unmap,
//! reset), waits for it. Configuration space is answered by the protocol
//! thread itself. Nothing the simulation thread does blocks on a socket.
//!
//! What each request does to the model:
//! - BAR0 read: one MemRd per dword touched (`mmio_read_start`), the clock
//!   runs until the completions are handed out (a completion never passes
//!   the NIC's earlier posted writes); an error completion or a timeout reads
//!   as all ones, as on a real host.
//! - BAR0 write: a posted MemWr per dword touched, with byte enables.
//! - DMA map: the region's file (guest RAM) is mapped once, and the region
//!   enters the root complex's IOMMU at exactly its IOVA with its read and
//!   write permission, so NIC DMA goes straight into guest memory through
//!   the same ordering model as the in-process simulator (posted writes
//!   visible late, RO may pass, reads push writes). DMA outside every
//!   region, or against its permission, or with bus mastering off, is
//!   refused and recorded (and logged).
//! - DMA unmap: posted writes already accepted are made visible, then the
//!   range leaves the table, before the reply.
//! - Reset (`VFIO_DEVICE_RESET`, an FLR): the NIC is reset (see
//!   `World::reset_nic`) while the fabric and the other NICs run on; the
//!   IOMMU table is the client's and stays; the reply goes once `rst` has
//!   been released.
//! - MSI: the client hands eventfds over with `SET_IRQS` (QEMU emulates the
//!   MSI capability and routes them into the guest); an MSI the model makes
//!   visible writes the eventfd of its vector (vector modulo the number of
//!   eventfds, as a function limited by Multiple Message Enable would).
//! - Command register: bus mastering follows bit 2; the root complex refuses
//!   DMA and MSI while it is off.
//! - Function-level reset through the PCI Express capability (what a guest
//!   kernel uses for its own `VFIO_DEVICE_RESET`): the same reset as above,
//!   configuration space back to its power-on values.
//! - Disconnect: the NIC is reset, its IOMMU table cleared and its eventfds
//!   closed; another client may connect to the same socket.
//! - Flash: every NIC has the SPI NOR model of the `sim` board on its flash
//!   pins ([`ServerConfig::flash`]), so `rnic flash` works through BAR0 as
//!   on a card, golden slot protected; with [`ServerConfig::flash_dir`] its
//!   contents persist in `nicN.flash` (saved when the server stops).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rnic_sim::{Access, DmaMemory, SimWorld, StreamPort, WorldConfig};
use vfio_bindings::bindings::vfio::{
    vfio_region_info, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_SET_ACTION_TRIGGER,
    VFIO_IRQ_SET_DATA_EVENTFD, VFIO_IRQ_SET_DATA_NONE, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_ERR_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX,
    VFIO_PCI_NUM_IRQS, VFIO_PCI_NUM_REGIONS, VFIO_PCI_REQ_IRQ_INDEX, VFIO_REGION_INFO_FLAG_READ,
    VFIO_REGION_INFO_FLAG_WRITE,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, ServerBackend, ServerRegion};

use crate::config_space::{self, ConfigSpace};
use crate::guest_memory::FileMappings;

/// MSI vectors the function offers (the core's 5-bit vector).
pub const MSI_VECTORS: usize = 32;

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The simulated NICs (their number, fabric, seeds, host model).
    /// `external_ports` is set from [`ServerConfig::externals`].
    pub world: WorldConfig,
    /// One vfio-user socket per NIC (a stale socket file is replaced).
    pub sockets: Vec<PathBuf>,
    /// Fabric ports that lead out of the simulation: the server listens on
    /// each for a QEMU `-netdev stream` peer (e.g. the rxe guest's NIC).
    pub externals: Vec<PathBuf>,
    /// Cycles between two looks at the request queue while the clock runs.
    pub poll_cycles: u64,
    /// Stop once every NIC that had a client has lost it.
    pub exit_on_disconnect: bool,
    /// Attach the `sim` board's SPI NOR flash model to every NIC.
    pub flash: bool,
    /// Keep each NIC's flash in `DIR/nicN.flash` (loaded if it exists,
    /// written when the server stops); None: in memory only.
    pub flash_dir: Option<PathBuf>,
    /// Per NIC (by index; missing or None: the model's BAR0): advertise a
    /// BAR0 of this many bytes (a power of two, at least 16), e.g. a
    /// function whose BAR0 is smaller than the register map, for testing
    /// the host's refusal. Accesses past it are refused as past any BAR.
    pub bar0_sizes: Vec<Option<u64>>,
}

impl ServerConfig {
    /// The NICs of `world` on sockets `dir/nic0.sock`, `dir/nic1.sock`, ...
    pub fn new(world: WorldConfig, dir: &Path) -> Self {
        let sockets = (0..world.nics)
            .map(|i| dir.join(format!("nic{i}.sock")))
            .collect();
        Self {
            world,
            sockets,
            externals: Vec::new(),
            poll_cycles: 4,
            exit_on_disconnect: false,
            flash: true,
            flash_dir: None,
            bar0_sizes: Vec::new(),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{0}")]
    Config(String),
    #[error("socket {path}: {err}")]
    Socket { path: PathBuf, err: io::Error },
    #[error("simulation: {0}")]
    Sim(String),
}

/// Counters of a run (see [`ServerHandle::stats`]).
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    /// World cycles run.
    pub cycles: u64,
    /// Wall time the clock has been running.
    pub running: Duration,
    /// BAR0 reads and writes from clients (each may be several dwords).
    pub mmio_reads: u64,
    pub mmio_writes: u64,
    /// Sum over BAR0 reads of the simulated cycles and of the server's wall
    /// time from the request reaching the simulation thread to its answer.
    pub mmio_read_cycles: u64,
    pub mmio_read_wall: Duration,
    /// BAR0 reads that completed with an error or timed out (read as ones).
    pub mmio_read_errors: u64,
    pub dma_maps: u64,
    /// DMA regions offered without a file descriptor (left unmapped).
    pub dma_maps_without_fd: u64,
    pub dma_unmaps: u64,
    /// DMA regions and bytes mapped now, all NICs.
    pub mapped_regions: u64,
    pub mapped_bytes: u64,
    /// Files (guest RAM) mapped into the server.
    pub mapped_files: u64,
    /// Per NIC: the IOMMU table now, (bus address, length) in address order.
    pub mappings: Vec<Vec<(u64, u64)>>,
    pub msi_delivered: u64,
    /// MSIs with no eventfd to go to (MSI disabled by the client).
    pub msi_dropped: u64,
    /// MSIs lost on purpose ([`ServerHandle::lose_msis`]).
    pub msi_lost: u64,
    pub resets: u64,
    /// Per NIC: a client is connected now.
    pub connected: Vec<bool>,
    /// Per NIC: refused DMA (IOMMU faults) and model errors so far.
    pub iommu_faults: Vec<u64>,
    pub model_errors: Vec<u64>,
    /// Per NIC: DMA TLPs (write requests, read requests) so far.
    pub dma_writes: Vec<u64>,
    pub dma_reads: Vec<u64>,
    /// Per NIC: its clock runs now. It is parked until its first BAR0
    /// access, but for the resets of a function no one has touched (see
    /// the module's notes).
    pub clocked: Vec<bool>,
    /// Per NIC: frames dropped at its port while it was parked.
    pub parked_drops: Vec<u64>,
    /// Why the simulation thread stopped (None while it runs).
    pub stopped: Option<String>,
}

impl ServerStats {
    fn new(nics: usize) -> Self {
        Self {
            connected: vec![false; nics],
            iommu_faults: vec![0; nics],
            model_errors: vec![0; nics],
            dma_writes: vec![0; nics],
            dma_reads: vec![0; nics],
            mappings: vec![Vec::new(); nics],
            clocked: vec![false; nics],
            parked_drops: vec![0; nics],
            ..Self::default()
        }
    }

    /// Mean simulated cycles and server wall time per BAR0 read.
    pub fn mmio_read_mean(&self) -> Option<(f64, Duration)> {
        (self.mmio_reads > 0).then(|| {
            (
                self.mmio_read_cycles as f64 / self.mmio_reads as f64,
                self.mmio_read_wall / self.mmio_reads as u32,
            )
        })
    }
}

impl std::fmt::Display for ServerStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.running.as_secs_f64();
        write!(
            f,
            "{} cycles in {:.1} s ({:.2} M cycles/s); BAR0 reads {} (errors {}), writes {}",
            self.cycles,
            secs,
            if secs > 0.0 {
                self.cycles as f64 / secs / 1e6
            } else {
                0.0
            },
            self.mmio_reads,
            self.mmio_read_errors,
            self.mmio_writes
        )?;
        if let Some((c, w)) = self.mmio_read_mean() {
            write!(
                f,
                " ({c:.0} cycles, {:.1} us each in the server)",
                w.as_secs_f64() * 1e6
            )?;
        }
        write!(
            f,
            "; DMA maps {} unmaps {} (now {} regions, {} KiB, {} files); DMA TLPs w {:?} r {:?}; \
             MSI {} (dropped {}, lost on purpose {}); resets {}; IOMMU faults {:?}; model errors {:?}; \
             clocked {:?} (frames dropped while parked {:?})",
            self.dma_maps,
            self.dma_unmaps,
            self.mapped_regions,
            self.mapped_bytes / 1024,
            self.mapped_files,
            self.dma_writes,
            self.dma_reads,
            self.msi_delivered,
            self.msi_dropped,
            self.msi_lost,
            self.resets,
            self.iommu_faults,
            self.model_errors,
            self.clocked,
            self.parked_drops
        )
    }
}

/// A running server. Dropping it stops the simulation (see
/// [`ServerHandle::stop`]).
pub struct ServerHandle {
    stop: Arc<AtomicBool>,
    lose_msis: Arc<AtomicU64>,
    sim: Option<JoinHandle<()>>,
    stats: Arc<Mutex<ServerStats>>,
    sockets: Vec<PathBuf>,
    externals: Vec<PathBuf>,
    listeners: Vec<RawFd>,
}

impl ServerHandle {
    /// The vfio-user socket of NIC `i`.
    pub fn socket(&self, i: usize) -> &Path {
        &self.sockets[i]
    }

    pub fn sockets(&self) -> &[PathBuf] {
        &self.sockets
    }

    pub fn stats(&self) -> ServerStats {
        self.stats.lock().unwrap().clone()
    }

    /// Loses the next `n` MSIs of any NIC (each counted in
    /// [`ServerStats::msi_lost`], none reaching its eventfd): a broken
    /// interrupt path, for proving that a client catches it.
    pub fn lose_msis(&self, n: u64) {
        self.lose_msis.store(n, Ordering::SeqCst);
    }

    /// The simulation thread has stopped (exit on disconnect, or a failure:
    /// [`ServerStats::stopped`] says why).
    pub fn finished(&self) -> bool {
        self.sim.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Wait until the simulation thread stops by itself.
    pub fn wait(mut self) -> ServerStats {
        if let Some(h) = self.sim.take() {
            let _ = h.join();
        }
        self.stats()
    }

    /// Stop the simulation, stop accepting clients, remove the socket files.
    pub fn stop(mut self) -> ServerStats {
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for &fd in &self.listeners {
            // SAFETY: wakes a protocol thread blocked in accept() on a
            // listener it owns; the descriptor stays open until that thread
            // drops it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        if let Some(h) = self.sim.take() {
            let _ = h.join();
        }
        for p in self.sockets.iter().chain(&self.externals) {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Requests from the protocol threads to the simulation thread.
enum Msg {
    Read {
        nic: usize,
        offset: u64,
        len: usize,
        reply: SyncSender<Vec<u8>>,
    },
    Write {
        nic: usize,
        offset: u64,
        data: Vec<u8>,
    },
    Map {
        nic: usize,
        iova: u64,
        len: u64,
        mem: Arc<dyn DmaMemory>,
        offset: usize,
        access: Access,
        files: usize,
        reply: SyncSender<Result<(), String>>,
    },
    Unmap {
        nic: usize,
        iova: u64,
        len: u64,
        reply: SyncSender<u64>,
    },
    Reset {
        nic: usize,
        reply: SyncSender<()>,
    },
    /// Eventfds for MSI vectors `start..` (None: that vector has none).
    Irqs {
        nic: usize,
        start: usize,
        fds: Vec<Option<File>>,
    },
    BusMaster {
        nic: usize,
        on: bool,
    },
    /// A DMA region the client offered without a file descriptor.
    Unmappable,
    Connected {
        nic: usize,
    },
    Disconnected {
        nic: usize,
        why: String,
    },
}

/// Start the server: bind every socket (they listen when this returns, as
/// QEMU needs), build the world on the simulation thread, start a protocol
/// thread per socket.
pub fn start(mut cfg: ServerConfig) -> Result<ServerHandle, ServerError> {
    if cfg.sockets.len() != cfg.world.nics {
        return Err(ServerError::Config(format!(
            "{} sockets for {} NICs",
            cfg.sockets.len(),
            cfg.world.nics
        )));
    }
    cfg.world.external_ports = cfg.externals.len();
    cfg.poll_cycles = cfg.poll_cycles.max(1);
    let bind = |p: &PathBuf| -> Result<UnixListener, ServerError> {
        let err = |err| ServerError::Socket {
            path: p.clone(),
            err,
        };
        if p.exists() {
            std::fs::remove_file(p).map_err(err)?;
        }
        UnixListener::bind(p).map_err(err)
    };
    let listeners: Vec<UnixListener> = cfg.sockets.iter().map(bind).collect::<Result<_, _>>()?;
    let ext_listeners: Vec<UnixListener> =
        cfg.externals.iter().map(bind).collect::<Result<_, _>>()?;
    for l in &ext_listeners {
        l.set_nonblocking(true)
            .map_err(|e| ServerError::Config(e.to_string()))?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let lose_msis = Arc::new(AtomicU64::new(0));
    let stats = Arc::new(Mutex::new(ServerStats::new(cfg.world.nics)));
    let (tx, rx) = mpsc::channel::<Msg>();
    let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<u64, String>>(1);
    let sim = {
        let (stop, stats, cfg) = (stop.clone(), stats.clone(), cfg.clone());
        let lose = lose_msis.clone();
        std::thread::Builder::new()
            .name("rnic-vfio-user-sim".into())
            .spawn(move || sim_thread(cfg, rx, ext_listeners, stop, lose, stats, ready_tx))
            .map_err(|e| ServerError::Sim(e.to_string()))?
    };
    for b in cfg.bar0_sizes.iter().flatten().copied() {
        if b < 16 || !b.is_power_of_two() || b > cfg.world.bar_len {
            return Err(ServerError::Config(format!(
                "BAR0 size {b:#x}: a power of two from 16 to {:#x}",
                cfg.world.bar_len
            )));
        }
    }
    let bar_len = match ready_rx.recv() {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(ServerError::Sim(e)),
        Err(_) => return Err(ServerError::Sim("the simulation thread died".into())),
    };
    let mut fds = Vec::new();
    for (nic, l) in listeners.into_iter().enumerate() {
        fds.push(l.as_raw_fd());
        let bar_len = cfg
            .bar0_sizes
            .get(nic)
            .copied()
            .flatten()
            .unwrap_or(bar_len);
        let (tx, stop) = (tx.clone(), stop.clone());
        std::thread::Builder::new()
            .name(format!("rnic-vfio-user-{nic}"))
            .spawn(move || protocol_thread(nic, l, bar_len, tx, stop))
            .map_err(|e| ServerError::Sim(e.to_string()))?;
    }
    Ok(ServerHandle {
        stop,
        lose_msis,
        sim: Some(sim),
        stats,
        sockets: cfg.sockets,
        externals: cfg.externals,
        listeners: fds,
    })
}

fn regions(bar_len: u64) -> Vec<ServerRegion> {
    (0..VFIO_PCI_NUM_REGIONS)
        .map(|index| {
            let size = match index {
                VFIO_PCI_BAR0_REGION_INDEX => bar_len,
                VFIO_PCI_CONFIG_REGION_INDEX => config_space::SIZE as u64,
                _ => 0,
            };
            ServerRegion {
                region_info: vfio_region_info {
                    argsz: std::mem::size_of::<vfio_region_info>() as u32,
                    flags: if size > 0 {
                        VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE
                    } else {
                        0
                    },
                    index,
                    size,
                    ..Default::default()
                },
                sparse_areas: Vec::new(),
                mmap_fd: None,
            }
        })
        .collect()
}

fn irqs() -> Vec<IrqInfo> {
    (0..VFIO_PCI_NUM_IRQS)
        .map(|index| IrqInfo {
            index,
            flags: VFIO_IRQ_INFO_EVENTFD,
            count: match index {
                VFIO_PCI_MSI_IRQ_INDEX => MSI_VECTORS as u32,
                // Error and request notification: accepted, never raised.
                VFIO_PCI_ERR_IRQ_INDEX | VFIO_PCI_REQ_IRQ_INDEX => 1,
                _ => 0,
            },
        })
        .collect()
}

fn protocol_thread(
    nic: usize,
    listener: UnixListener,
    bar_len: u64,
    tx: Sender<Msg>,
    stop: Arc<AtomicBool>,
) {
    let server =
        vfio_user::Server::from_owned_fd(OwnedFd::from(listener), true, irqs(), regions(bar_len));
    while !stop.load(Ordering::SeqCst) {
        let mut backend = Backend {
            nic,
            bar_len,
            tx: tx.clone(),
            config: ConfigSpace::rnic(),
            files: FileMappings::default(),
            connected: false,
        };
        let why = match server.run(&mut backend) {
            Ok(()) => "the client closed the connection".to_string(),
            Err(e) => e.to_string(),
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        tracing::info!(nic, %why, "vfio-user client gone");
        if backend.connected && tx.send(Msg::Disconnected { nic, why }).is_err() {
            break;
        }
    }
}

/// The protocol thread's side of one connection.
struct Backend {
    nic: usize,
    bar_len: u64,
    tx: Sender<Msg>,
    config: ConfigSpace,
    files: FileMappings,
    connected: bool,
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the simulation has stopped")
}

impl Backend {
    fn send(&mut self, m: Msg) -> io::Result<()> {
        if !self.connected {
            self.connected = true;
            self.tx
                .send(Msg::Connected { nic: self.nic })
                .map_err(|_| gone())?;
        }
        self.tx.send(m).map_err(|_| gone())
    }

    fn ask<T>(&mut self, make: impl FnOnce(SyncSender<T>) -> Msg) -> io::Result<T> {
        let (rtx, rrx) = mpsc::sync_channel(1);
        self.send(make(rtx))?;
        rrx.recv().map_err(|_| gone())
    }

    fn check_bar(&self, offset: u64, len: usize) -> io::Result<()> {
        if len == 0
            || len > 8
            || offset
                .checked_add(len as u64)
                .is_none_or(|e| e > self.bar_len)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "BAR0 access {offset:#x}+{len} (BAR0 is {:#x} bytes)",
                    self.bar_len
                ),
            ));
        }
        Ok(())
    }
}

impl ServerBackend for Backend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => {
                self.config.read(offset, data);
                Ok(())
            }
            VFIO_PCI_BAR0_REGION_INDEX => {
                self.check_bar(offset, data.len())?;
                let nic = self.nic;
                let len = data.len();
                let v = self.ask(|reply| Msg::Read {
                    nic,
                    offset,
                    len,
                    reply,
                })?;
                data.copy_from_slice(&v);
                Ok(())
            }
            _ => {
                data.fill(0xff);
                Ok(())
            }
        }
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => {
                let before = self.config.bus_master();
                if self.config.write(offset, data) {
                    // A function-level reset from the guest's kernel (its
                    // reset method for VFIO_DEVICE_RESET): done before the
                    // write completes.
                    tracing::info!(nic = self.nic, "function-level reset from the client");
                    return self.reset();
                }
                let on = self.config.bus_master();
                if on != before {
                    self.send(Msg::BusMaster { nic: self.nic, on })?;
                }
                Ok(())
            }
            VFIO_PCI_BAR0_REGION_INDEX => {
                self.check_bar(offset, data.len())?;
                self.send(Msg::Write {
                    nic: self.nic,
                    offset,
                    data: data.to_vec(),
                })
            }
            _ => Ok(()),
        }
    }

    fn dma_map(
        &mut self,
        flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> io::Result<()> {
        let Some(fd) = fd else {
            // QEMU offers its ROM and BIOS areas this way (not file backed);
            // guest RAM without a descriptor means RAM is not a shared memfd.
            // Such a region stays out of the IOMMU: DMA there is refused.
            // ROM and BIOS areas are small; a large one is guest RAM that
            // QEMU could not share, which the user must hear about.
            if size > 1 << 20 {
                tracing::warn!(
                    nic = self.nic,
                    iova = format_args!("{address:#x}"),
                    size,
                    "DMA region without a file descriptor: not mapped, DMA there will be refused \
                     (guest RAM must be -object memory-backend-memfd,share=on)"
                );
            } else {
                tracing::debug!(
                    nic = self.nic,
                    iova = format_args!("{address:#x}"),
                    size,
                    "DMA region without a file descriptor (ROM or BIOS): not mapped"
                );
            }
            self.send(Msg::Unmappable)?;
            return Ok(());
        };
        let file = self.files.get(&fd)?;
        let access = Access {
            read: flags.contains(DmaMapFlags::READ),
            write: flags.contains(DmaMapFlags::WRITE) && file.writable(),
        };
        let offset = usize::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset"))?;
        let (nic, files) = (self.nic, self.files.len());
        let r = self.ask(|reply| Msg::Map {
            nic,
            iova: address,
            len: size,
            mem: file,
            offset,
            access,
            files,
            reply,
        })?;
        r.map_err(|e| io::Error::new(io::ErrorKind::AlreadyExists, e))
    }

    fn dma_unmap(&mut self, flags: DmaUnmapFlags, address: u64, size: u64) -> io::Result<()> {
        let (iova, len) = if flags.contains(DmaUnmapFlags::UNMAP_ALL) {
            (0, u64::MAX)
        } else {
            (address, size)
        };
        let nic = self.nic;
        let removed = self.ask(|reply| Msg::Unmap {
            nic,
            iova,
            len,
            reply,
        })?;
        if removed == 0 {
            tracing::debug!(
                nic,
                iova = format_args!("{address:#x}"),
                size,
                "DMA unmap of nothing"
            );
        }
        Ok(())
    }

    fn reset(&mut self) -> io::Result<()> {
        self.config.reset();
        let nic = self.nic;
        self.send(Msg::BusMaster { nic, on: false })?;
        self.ask(|reply| Msg::Reset { nic, reply })
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> io::Result<()> {
        let nic = self.nic;
        let bad = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if index == VFIO_PCI_ERR_IRQ_INDEX || index == VFIO_PCI_REQ_IRQ_INDEX {
            return Ok(()); // the function never raises these
        }
        if index != VFIO_PCI_MSI_IRQ_INDEX {
            // INTx and MSI-X: none offered.
            if count == 0 || flags & VFIO_IRQ_SET_DATA_EVENTFD == 0 || fds.is_empty() {
                return Ok(());
            }
            return bad(format!("interrupt index {index} has no vectors"));
        }
        if flags & VFIO_IRQ_SET_ACTION_TRIGGER == 0 {
            return Ok(()); // mask/unmask: MSI without per-vector masking
        }
        let (start, count) = (start as usize, count as usize);
        if flags & VFIO_IRQ_SET_DATA_NONE != 0 && count == 0 {
            return self.send(Msg::Irqs {
                nic,
                start: 0,
                fds: (0..MSI_VECTORS).map(|_| None).collect(),
            });
        }
        if start + count > MSI_VECTORS {
            return bad(format!(
                "MSI vectors {start}..{} of {MSI_VECTORS}",
                start + count
            ));
        }
        let fds: Vec<Option<File>> = if flags & VFIO_IRQ_SET_DATA_EVENTFD != 0 && fds.len() == count
        {
            fds.into_iter().map(Some).collect()
        } else if fds.is_empty() {
            (0..count).map(|_| None).collect()
        } else {
            return bad(format!("{} eventfds for {count} MSI vectors", fds.len()));
        };
        self.send(Msg::Irqs { nic, start, fds })
    }
}

// ---------------------------------------------------------------------------
// The simulation thread

struct PendingRead {
    /// MemRd tags, one per dword, in address order.
    tags: Vec<u8>,
    vals: Vec<Option<u32>>,
    /// First dword's BAR offset, and the access's offset and length in
    /// the dwords read.
    base: u64,
    skip: usize,
    len: usize,
    reply: SyncSender<Vec<u8>>,
    cycle: u64,
    t0: Instant,
    failed: bool,
}

#[derive(Default)]
struct NicState {
    irq: Vec<Option<File>>,
    reads: VecDeque<PendingRead>,
    resets: Vec<SyncSender<()>>,
    /// Its BAR0 was read or written: its clock runs for good.
    touched: bool,
    /// Parked again once the reset under way is over (it was parked and
    /// untouched when the reset came: binding a driver resets a function).
    park_after_reset: bool,
    connected: bool,
    had_client: bool,
    faults_logged: usize,
    errors_logged: usize,
}

/// How many refused DMA accesses / model errors are logged one by one.
const LOG_LIMIT: usize = 20;

fn sim_thread(
    cfg: ServerConfig,
    rx: Receiver<Msg>,
    ext_listeners: Vec<UnixListener>,
    stop: Arc<AtomicBool>,
    lose_msis: Arc<AtomicU64>,
    stats: Arc<Mutex<ServerStats>>,
    ready: SyncSender<Result<u64, String>>,
) {
    let world = match SimWorld::new(cfg.world.clone()).and_then(|w| {
        attach_flash(&w, &cfg)?;
        Ok(w)
    }) {
        Ok(w) => w,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let _ = ready.send(Ok(cfg.world.bar_len));
    // Every NIC parked until its client needs its clock (`start_clock`).
    world.with_world(|w| (0..w.nics()).for_each(|i| w.park(i, true)));
    let mut sim = Sim {
        nics: (0..cfg.world.nics)
            .map(|_| NicState {
                irq: (0..MSI_VECTORS).map(|_| None).collect(),
                ..NicState::default()
            })
            .collect(),
        world,
        stats: ServerStats::new(cfg.world.nics),
        shared: stats,
        lose_msis,
        mmio_timeout: cfg.world.root_complex.mmio_timeout,
        running: false,
        run_start: None,
        ext: ext_listeners.into_iter().map(Some).collect(),
    };
    let why = sim.run(&cfg, &rx, &stop);
    sim.check_reports();
    save_flash(&sim.world);
    sim.stats.stopped = Some(why.clone());
    sim.publish();
    tracing::info!(%why, "simulation stopped");
}

/// The `sim` board's SPI NOR on every NIC ([`ServerConfig::flash`]).
fn attach_flash(w: &SimWorld, cfg: &ServerConfig) -> Result<(), rnic_sim::SimError> {
    if !cfg.flash {
        return Ok(());
    }
    for i in 0..w.nics() {
        let mut f = rnic_sim::SpiFlashConfig::for_board("sim")?;
        f.seed = cfg.world.seed + i as u64;
        if let Some(d) = &cfg.flash_dir {
            std::fs::create_dir_all(d).map_err(|e| {
                rnic_sim::SimError::Config(format!("flash directory {}: {e}", d.display()))
            })?;
            f.file = Some(d.join(format!("nic{i}.flash")));
        }
        w.device(i).attach_flash(f)?;
    }
    Ok(())
}

/// Write every file-backed flash back (see [`ServerConfig::flash_dir`]).
fn save_flash(w: &SimWorld) {
    for i in 0..w.nics() {
        if let Some(Err(e)) = w.device(i).with_flash(|f| f.save()) {
            tracing::warn!(nic = i, "saving the flash: {e}");
        }
    }
}

struct Sim {
    world: SimWorld,
    nics: Vec<NicState>,
    stats: ServerStats,
    shared: Arc<Mutex<ServerStats>>,
    /// MSIs still to lose ([`ServerHandle::lose_msis`]).
    lose_msis: Arc<AtomicU64>,
    mmio_timeout: u64,
    /// The clock runs (a client has touched BAR0).
    running: bool,
    run_start: Option<Instant>,
    /// External port listeners not yet connected.
    ext: Vec<Option<UnixListener>>,
}

impl Sim {
    fn run(&mut self, cfg: &ServerConfig, rx: &Receiver<Msg>, stop: &AtomicBool) -> String {
        let mut last_publish = Instant::now();
        let mut handled = false;
        loop {
            if stop.load(Ordering::Relaxed) {
                return "stopped by its owner".into();
            }
            // Requests.
            loop {
                let m = if self.running || self.busy() {
                    match rx.try_recv() {
                        Ok(m) => m,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            return "every protocol thread ended".into()
                        }
                    }
                } else {
                    match rx.recv_timeout(Duration::from_millis(50)) {
                        Ok(m) => m,
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => {
                            return "every protocol thread ended".into()
                        }
                    }
                };
                self.handle(m);
                handled = true;
            }
            if handled {
                self.publish();
                handled = false;
            }
            if cfg.exit_on_disconnect
                && self.nics.iter().any(|n| n.had_client)
                && self.nics.iter().all(|n| !n.connected)
            {
                return "every client disconnected".into();
            }
            if self.running || self.busy() {
                self.step(cfg.poll_cycles);
            }
            if last_publish.elapsed() > Duration::from_millis(100) {
                self.accept_externals();
                self.check_reports();
                self.publish();
                last_publish = Instant::now();
            }
        }
    }

    /// Something needs the clock even before a client touched BAR0.
    fn busy(&self) -> bool {
        self.nics
            .iter()
            .any(|n| !n.reads.is_empty() || !n.resets.is_empty())
    }

    /// NIC `nic` needs the clock: the world's runs from now on, and so
    /// does NIC `nic`'s own.
    fn start_clock(&mut self, nic: usize) {
        self.nics[nic].touched = true;
        self.world.with_world(|w| w.park(nic, false));
        if !self.running {
            self.running = true;
            self.run_start = Some(Instant::now());
            tracing::info!("a client touched BAR0: the simulated clock runs from now on");
        }
    }

    fn handle(&mut self, m: Msg) {
        match m {
            Msg::Read {
                nic,
                offset,
                len,
                reply,
            } => {
                self.start_clock(nic);
                self.stats.mmio_reads += 1;
                let base = offset & !3;
                let end = (offset + len as u64).next_multiple_of(4);
                let n = ((end - base) / 4) as usize;
                let tags = self.world.with_world(|w| {
                    let rc = w.root_complex_mut(nic);
                    (0..n)
                        .map(|k| rc.mmio_read_start(base + 4 * k as u64))
                        .collect()
                });
                self.nics[nic].reads.push_back(PendingRead {
                    tags,
                    vals: vec![None; n],
                    base,
                    skip: (offset - base) as usize,
                    len,
                    reply,
                    cycle: self.world.now(),
                    t0: Instant::now(),
                    failed: false,
                });
            }
            Msg::Write { nic, offset, data } => {
                self.start_clock(nic);
                self.stats.mmio_writes += 1;
                self.world.with_world(|w| {
                    let rc = w.root_complex_mut(nic);
                    let mut pos = 0;
                    while pos < data.len() {
                        let at = offset + pos as u64;
                        let dw = at & !3;
                        let first = (at - dw) as usize;
                        let n = (4 - first).min(data.len() - pos);
                        let mut bytes = [0u8; 4];
                        bytes[first..first + n].copy_from_slice(&data[pos..pos + n]);
                        let be = (((1u16 << n) - 1) << first) as u8;
                        rc.mmio_write_be(dw, u32::from_le_bytes(bytes), be);
                        pos += n;
                    }
                });
            }
            Msg::Map {
                nic,
                iova,
                len,
                mem,
                offset,
                access,
                files,
                reply,
            } => {
                self.stats.mapped_files = self.stats.mapped_files.max(files as u64);
                let r = self.world.with_world(|w| {
                    w.root_complex_mut(nic)
                        .map_at(iova, len, mem, offset, access)
                        .map_err(|e| e.to_string())
                });
                match &r {
                    Ok(()) => {
                        self.stats.dma_maps += 1;
                        tracing::debug!(
                            nic,
                            iova = format_args!("{iova:#x}"),
                            len,
                            ?access,
                            "DMA map"
                        );
                    }
                    Err(e) => tracing::warn!(nic, "DMA map refused: {e}"),
                }
                self.count_mappings();
                let _ = reply.send(r);
            }
            Msg::Unmap {
                nic,
                iova,
                len,
                reply,
            } => {
                self.stats.dma_unmaps += 1;
                let n = self
                    .world
                    .with_world(|w| w.root_complex_mut(nic).unmap_range(iova, len));
                self.count_mappings();
                let _ = reply.send(n);
            }
            Msg::Reset { nic, reply } => {
                self.stats.resets += 1;
                let n = &mut self.nics[nic];
                self.world.with_world(|w| {
                    n.park_after_reset |= w.parked(nic) && !n.touched;
                    w.park(nic, false);
                    w.reset_nic(nic)
                });
                self.fail_reads(nic);
                self.nics[nic].resets.push(reply);
            }
            Msg::Irqs { nic, start, fds } => {
                for (k, f) in fds.into_iter().enumerate() {
                    self.nics[nic].irq[start + k] = f;
                }
            }
            Msg::Unmappable => self.stats.dma_maps_without_fd += 1,
            Msg::BusMaster { nic, on } => {
                self.world
                    .with_world(|w| w.root_complex_mut(nic).set_bus_master(on));
            }
            Msg::Connected { nic } => {
                tracing::info!(nic, "vfio-user client connected");
                let n = &mut self.nics[nic];
                n.connected = true;
                n.had_client = true;
                self.stats.connected[nic] = true;
                // Bus mastering is off until the client's driver enables it.
                self.world
                    .with_world(|w| w.root_complex_mut(nic).set_bus_master(false));
            }
            Msg::Disconnected { nic, why } => {
                tracing::info!(nic, %why, "vfio-user client disconnected: resetting the NIC");
                self.world.with_world(|w| {
                    w.reset_nic(nic);
                    let rc = w.root_complex_mut(nic);
                    rc.unmap_range(0, u64::MAX);
                    rc.set_bus_master(false);
                });
                self.fail_reads(nic);
                let n = &mut self.nics[nic];
                n.connected = false;
                n.irq.iter_mut().for_each(|f| *f = None);
                self.stats.connected[nic] = false;
                self.count_mappings();
            }
        }
    }

    /// Answer every outstanding read of `nic` with ones (reset, disconnect).
    fn fail_reads(&mut self, nic: usize) {
        for r in self.nics[nic].reads.drain(..) {
            self.stats.mmio_read_errors += 1;
            let _ = r.reply.send(vec![0xff; r.len]);
        }
    }

    fn count_mappings(&mut self) {
        let maps: Vec<Vec<(u64, u64)>> = self.world.with_world(|w| {
            (0..w.nics())
                .map(|i| {
                    let m = w.root_complex(i).iommu().mappings();
                    m.iter().map(|m| (m.bus, m.len)).collect()
                })
                .collect()
        });
        self.stats.mapped_regions = maps.iter().map(|m| m.len() as u64).sum();
        self.stats.mapped_bytes = maps.iter().flatten().map(|m| m.1).sum();
        self.stats.mappings = maps;
    }

    /// Run `cycles` cycles, finishing reads and delivering MSIs as they
    /// happen.
    fn step(&mut self, cycles: u64) {
        let nics = &mut self.nics;
        let stats = &mut self.stats;
        let lose = &*self.lose_msis;
        let timeout = self.mmio_timeout;
        self.world.with_world(|w| {
            for _ in 0..cycles {
                w.step();
                let now = w.now();
                for (i, n) in nics.iter_mut().enumerate() {
                    let rc = w.root_complex_mut(i);
                    if !n.reads.is_empty() {
                        Self::poll_reads(n, rc, now, timeout, stats);
                    }
                    let pending = rc.msi_pending();
                    if pending != 0 {
                        for v in 0..MSI_VECTORS as u32 {
                            if pending & (1 << v) != 0 && rc.take_msi(v) {
                                if lose
                                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |k| {
                                        k.checked_sub(1)
                                    })
                                    .is_ok()
                                {
                                    stats.msi_lost += 1;
                                } else {
                                    Self::deliver_msi(n, v as usize, stats);
                                }
                            }
                        }
                    }
                    if !n.resets.is_empty() && !w.in_reset(i) {
                        for r in n.resets.drain(..) {
                            let _ = r.send(());
                        }
                        if std::mem::take(&mut n.park_after_reset) && !n.touched {
                            w.park(i, true);
                        }
                    }
                }
            }
        });
        self.stats.cycles = self.world.now();
    }

    fn poll_reads(
        n: &mut NicState,
        rc: &mut rnic_sim::RootComplex,
        now: u64,
        timeout: u64,
        stats: &mut ServerStats,
    ) {
        while let Some(r) = n.reads.front_mut() {
            for (k, tag) in r.tags.iter().enumerate() {
                if r.vals[k].is_none() {
                    if let Some(res) = rc.mmio_read_poll(*tag) {
                        r.vals[k] = Some(res.unwrap_or_else(|e| {
                            tracing::warn!(
                                offset = format_args!("{:#x}", r.base + 4 * k as u64),
                                "BAR0 read: {e}"
                            );
                            r.failed = true;
                            u32::MAX
                        }));
                    }
                }
            }
            let timed_out = now - r.cycle > timeout;
            if !timed_out && r.vals.iter().any(Option::is_none) {
                return;
            }
            let r = n.reads.pop_front().unwrap();
            let mut bytes = Vec::with_capacity(r.vals.len() * 4);
            for (k, v) in r.vals.iter().enumerate() {
                if v.is_none() {
                    rc.mmio_read_abandon(r.tags[k]);
                }
                bytes.extend_from_slice(&v.unwrap_or(u32::MAX).to_le_bytes());
            }
            if timed_out {
                tracing::warn!(
                    offset = format_args!("{:#x}", r.base),
                    "BAR0 read not answered within {timeout} cycles: reads as ones"
                );
            }
            if timed_out || r.failed {
                stats.mmio_read_errors += 1;
            }
            stats.mmio_read_cycles += now - r.cycle;
            stats.mmio_read_wall += r.t0.elapsed();
            let _ = r.reply.send(bytes[r.skip..r.skip + r.len].to_vec());
        }
    }

    fn deliver_msi(n: &mut NicState, v: usize, stats: &mut ServerStats) {
        let live = n.irq.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        if live == 0 {
            stats.msi_dropped += 1;
            return;
        }
        match &n.irq[v % live] {
            Some(f) => {
                let mut f: &File = f;
                if let Err(e) = f.write_all(&1u64.to_ne_bytes()) {
                    tracing::warn!("MSI {v}: eventfd write: {e}");
                    stats.msi_dropped += 1;
                } else {
                    stats.msi_delivered += 1;
                }
            }
            None => stats.msi_dropped += 1,
        }
    }

    fn accept_externals(&mut self) {
        for k in 0..self.ext.len() {
            let Some(l) = &self.ext[k] else { continue };
            match l.accept() {
                Ok((s, _)) => match StreamPort::from_stream(s) {
                    Ok(p) => {
                        tracing::info!(port = k, "external fabric port connected");
                        if let Err(e) = self.world.connect_external(k, p) {
                            tracing::warn!("external port {k}: {e}");
                        }
                        self.ext[k] = None;
                    }
                    Err(e) => tracing::warn!("external port {k}: {e}"),
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    tracing::warn!("external port {k}: accept: {e}");
                    self.ext[k] = None;
                }
            }
        }
    }

    /// Log new refused DMA and model errors; count them.
    fn check_reports(&mut self) {
        let nics = self.nics.len();
        let mut faults = vec![0; nics];
        let mut errors = vec![0; nics];
        let mut wr = vec![0; nics];
        let mut rd = vec![0; nics];
        for (i, n) in self.nics.iter_mut().enumerate() {
            let dev = self.world.device(i);
            dev.with_root_complex(|rc| {
                let f = rc.iommu_faults();
                for x in f
                    .iter()
                    .skip(n.faults_logged)
                    .take(LOG_LIMIT.saturating_sub(n.faults_logged))
                {
                    tracing::warn!(
                        nic = i,
                        "DMA refused: {} {:#x}+{} ({:?}) at cycle {}",
                        if x.write { "write" } else { "read" },
                        x.addr,
                        x.len,
                        x.reason,
                        x.cycle
                    );
                }
                n.faults_logged = n.faults_logged.max(f.len().min(LOG_LIMIT));
                let e = rc.model_errors();
                for x in e
                    .iter()
                    .skip(n.errors_logged)
                    .take(LOG_LIMIT.saturating_sub(n.errors_logged))
                {
                    tracing::warn!(nic = i, "model error: {x}");
                }
                n.errors_logged = n.errors_logged.max(e.len().min(LOG_LIMIT));
                let s = rc.stats();
                faults[i] = s.iommu_faults;
                errors[i] = s.model_errors;
                wr[i] = s.tx_wr_req.tlps;
                rd[i] = s.tx_rd_req.tlps;
            });
        }
        self.stats.iommu_faults = faults;
        self.stats.model_errors = errors;
        self.stats.dma_writes = wr;
        self.stats.dma_reads = rd;
    }

    /// Make the counters visible to [`ServerHandle::stats`].
    fn publish(&mut self) {
        if let Some(t) = self.run_start {
            self.stats.running = t.elapsed();
        }
        self.stats.cycles = self.world.now();
        (self.stats.clocked, self.stats.parked_drops) = self.world.with_world(|w| {
            (0..w.nics())
                .map(|i| (!w.parked(i), w.parked_drops(i)))
                .unzip()
        });
        *self.shared.lock().unwrap() = self.stats.clone();
    }
}
