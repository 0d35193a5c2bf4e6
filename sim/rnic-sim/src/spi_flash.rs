//! A SPI NOR flash on the NIC's configuration-flash pins, and the board's
//! configuration logic around it (which slot boots, reconfiguration).
//!
//! The chip model decodes the pins cycle by cycle (SPI mode 0: it samples
//! on SCK rising edges and changes its outputs after falling edges) and
//! implements the commands the tools use: JEDEC ID (0x9F), read status
//! (0x05), write enable / disable (0x06 / 0x04), enter / exit 4-byte
//! address mode (0xB7 / 0xE9), read (0x03 / 0x13), fast read (0x0B / 0x0C),
//! quad output fast read (0x6B / 0x6C), page program (0x02 / 0x12), quad
//! input page program (0x32 / 0x34), 4 KiB sector erase (0x20 / 0x21) and
//! 64 KiB block erase (0xD8 / 0xDC); the second opcode of each pair always
//! takes a 4-byte address, the first takes 3 bytes unless 4-byte mode is
//! on. Program and erase need WEL, run for a set number of cycles with WIP
//! set (only status reads are answered meanwhile), then clear WEL; a page
//! program wraps within its 256-byte page and can only clear bits.
//! Like NOR parts without a quad-enable bit, quad commands always work.
//!
//! Checks a real chip would not make are recorded as errors: bus contention
//! (NIC and flash driving an IO line at once), a command while busy, a
//! program or erase without WEL, a program ended in the middle of a byte.
//!
//! A power cut at a chosen cycle freezes the chip: an erase or program in
//! progress leaves a seeded random part of its bytes done; afterwards the
//! chip ignores its pins (IO lines float high). The contents can live in a
//! file, loaded when the flash is attached and written by
//! [`SpiFlash::save`] and at a power cut, so separate processes see one
//! flash.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_firmware::{Layout, SlotId};

use crate::ports::{PortsIn, PortsOut};
use crate::root_complex::PortHook;
use crate::SimError;

/// Busy times in clock cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashTiming {
    pub page_program: u64,
    pub sector_erase: u64,
    pub block_erase: u64,
}

impl FlashTiming {
    /// Short times that keep simulations quick: 8 us page program, 40 us
    /// sector and 200 us block erase at 250 MHz (real parts are 20 to
    /// 1000 times slower).
    pub fn fast() -> Self {
        Self {
            page_program: 2_000,
            sector_erase: 10_000,
            block_erase: 50_000,
        }
    }

    /// Times of the order of a typical 256 Mbit quad-SPI NOR part's typical
    /// figures (0.25 ms page program, 50 ms 4 KiB erase, 150 ms 64 KiB
    /// erase) at `clock_mhz`.
    pub fn datasheet(clock_mhz: f64) -> Self {
        let c = |us: f64| (us * clock_mhz) as u64;
        Self {
            page_program: c(250.0),
            sector_erase: c(50_000.0),
            block_erase: c(150_000.0),
        }
    }
}

/// How the simulated flash is built.
#[derive(Debug, Clone, PartialEq)]
pub struct SpiFlashConfig {
    pub jedec_id: [u8; 3],
    /// Bytes (a power of two, at least 64 KiB).
    pub size: usize,
    pub timing: FlashTiming,
    /// Load the contents from here if the file exists (else start erased);
    /// [`SpiFlash::save`] and a power cut write them back.
    pub file: Option<PathBuf>,
    /// Cut the power at this cycle.
    pub power_cut_at: Option<u64>,
    /// Seed of the power cut's partial erase / program.
    pub seed: u64,
    /// The layout the configuration logic boots from.
    pub layout: Layout,
    /// A worn cell: the byte at this address never programs (it keeps
    /// its value), so read-back verification has something to catch.
    pub stuck_byte: Option<u64>,
}

impl SpiFlashConfig {
    /// The flash of board `name` from the board table.
    pub fn for_board(name: &str) -> Result<Self, SimError> {
        let b = rnic_firmware::board(name)
            .map_err(|e| SimError::Config(e.to_string()))?
            .image_target()
            .map_err(|e| SimError::Config(e.to_string()))?;
        Ok(Self {
            jedec_id: b.flash.jedec_id,
            size: b.flash.size as usize,
            timing: FlashTiming::fast(),
            file: None,
            power_cut_at: None,
            seed: 1,
            layout: b.layout,
            stuck_byte: None,
        })
    }
}

/// A program or erase, as the chip saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    /// Cycle it started (CS rose).
    pub cycle: u64,
    pub kind: FlashOpKind,
    pub addr: u64,
    pub len: u64,
    /// Finished (false: cut by a power cut).
    pub completed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashOpKind {
    Program,
    Erase,
}

/// Counters of the chip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlashStats {
    pub commands: u64,
    pub programs: u64,
    pub erases: u64,
    pub bytes_read: u64,
    pub bytes_programmed: u64,
    pub busy_cycles: u64,
    pub status_reads: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Data {
    None,
    /// Bytes out: memory from the address (wrapping at the end).
    Read {
        quad: bool,
    },
    Status,
    Id,
    /// Bytes in, into the page buffer.
    Program {
        quad: bool,
    },
}

#[derive(Debug, Clone, Copy)]
struct Cmd {
    opcode: u8,
    addr_bytes: u32,
    dummy: u32,
    data: Data,
}

struct Busy {
    until: u64,
    op: FlashOpKind,
    addr: u64,
    /// Program: the page image (0xFF where not written).
    page: Vec<u8>,
    len: u64,
}

/// The chip plus the board's configuration logic (a [`PortHook`]).
pub struct SpiFlash {
    cfg: SpiFlashConfig,
    mem: Vec<u8>,
    rng: ChaCha8Rng,
    // pins as last seen
    sck: bool,
    cs: bool,
    // transaction
    edges: u32,
    opcode: u8,
    cmd: Option<Cmd>,
    addr: u64,
    in_bits: u32,
    in_byte: u8,
    prog_page: Vec<u8>,
    prog_count: u64,
    out_nibbles: u8,
    drive: u8,
    /// IO3..IO0 as the NIC sees them next cycle.
    pads: u8,
    // state
    wel: bool,
    addr4: bool,
    busy: Option<Busy>,
    dead: Option<u64>,
    ops: Vec<FlashOp>,
    errors: Vec<(u64, String)>,
    stats: FlashStats,
    // configuration logic
    boot: (SlotId, bool),
    reconfig: bool,
}

impl SpiFlash {
    /// Build the chip; contents from `cfg.file` if it exists.
    pub fn new(cfg: SpiFlashConfig) -> Result<Self, SimError> {
        if !cfg.size.is_power_of_two() || cfg.size < 1 << 16 {
            return Err(SimError::Config(format!(
                "flash size {} (a power of two, at least 64 KiB)",
                cfg.size
            )));
        }
        let mem = match &cfg.file {
            Some(p) if p.exists() => {
                let m = std::fs::read(p).map_err(|e| {
                    SimError::Config(format!("cannot read flash file {}: {e}", p.display()))
                })?;
                if m.len() != cfg.size {
                    return Err(SimError::Config(format!(
                        "flash file {} holds {} bytes, the simulated flash is {} bytes",
                        p.display(),
                        m.len(),
                        cfg.size
                    )));
                }
                m
            }
            _ => vec![0xFF; cfg.size],
        };
        let mut f = Self {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xF1A5),
            mem,
            sck: false,
            cs: false,
            edges: 0,
            opcode: 0,
            cmd: None,
            addr: 0,
            in_bits: 0,
            in_byte: 0,
            prog_page: vec![0xFF; 256],
            prog_count: 0,
            out_nibbles: 0,
            drive: 0,
            pads: 0xF,
            wel: false,
            addr4: false,
            busy: None,
            dead: None,
            ops: Vec::new(),
            errors: Vec::new(),
            stats: FlashStats::default(),
            boot: (SlotId::Golden, false),
            reconfig: false,
            cfg,
        };
        f.select_boot();
        Ok(f)
    }

    pub fn config(&self) -> &SpiFlashConfig {
        &self.cfg
    }

    /// The contents.
    pub fn contents(&self) -> &[u8] {
        &self.mem
    }

    /// Change the contents behind the chip's back (tests).
    pub fn contents_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }

    pub fn ops(&self) -> &[FlashOp] {
        &self.ops
    }

    pub fn errors(&self) -> &[(u64, String)] {
        &self.errors
    }

    pub fn stats(&self) -> FlashStats {
        self.stats
    }

    /// The cycle of the power cut, once it happened.
    pub fn power_cut(&self) -> Option<u64> {
        self.dead
    }

    /// Cut the power at `cycle` (None: never).
    pub fn set_power_cut(&mut self, cycle: Option<u64>) {
        self.cfg.power_cut_at = cycle;
    }

    /// What the configuration logic booted: (slot, fell back to golden).
    pub fn booted(&self) -> (SlotId, bool) {
        self.boot
    }

    /// Write the contents to the configured file (nothing without one).
    pub fn save(&self) -> Result<(), SimError> {
        match &self.cfg.file {
            Some(p) => save_file(p, &self.mem),
            None => Ok(()),
        }
    }

    /// The configuration logic's choice, from the flash contents.
    pub(crate) fn select_boot(&mut self) {
        let mem = &self.mem;
        let mut read = |a: u64, n: usize| -> Vec<u8> {
            let a = a as usize;
            if a >= mem.len() {
                return vec![0xFF; n];
            }
            mem[a..(a + n).min(mem.len())].to_vec()
        };
        self.boot = rnic_firmware::layout::select_boot_slot(&self.cfg.layout, &mut read);
    }

    /// A reconfiguration request was seen (cleared by taking it).
    pub(crate) fn take_reconfig(&mut self) -> bool {
        std::mem::take(&mut self.reconfig)
    }

    fn err(&mut self, cycle: u64, msg: String) {
        if self.errors.len() < 1000 {
            self.errors.push((cycle, msg));
        }
    }

    fn cut_power(&mut self, cycle: u64) {
        if let Some(b) = self.busy.take() {
            // An interrupted erase or program leaves some of its bytes done.
            let (a, n) = (b.addr as usize, b.len as usize);
            for i in 0..n {
                if self.rng.gen_bool(0.5) {
                    let m = &mut self.mem[(a + i) % self.cfg.size];
                    *m = match b.op {
                        FlashOpKind::Erase => 0xFF,
                        FlashOpKind::Program => *m & b.page[i],
                    };
                }
            }
            if let Some(o) = self.ops.last_mut() {
                o.completed = false;
            }
        }
        self.dead = Some(cycle);
        self.cs = false;
        self.drive = 0;
        if let Err(e) = self.save() {
            self.err(cycle, format!("saving at the power cut: {e}"));
        }
    }

    fn finish_busy(&mut self) {
        let b = self.busy.take().expect("busy");
        match b.op {
            FlashOpKind::Erase => {
                let a = b.addr as usize;
                self.mem[a..a + b.len as usize].fill(0xFF);
            }
            FlashOpKind::Program => {
                let base = (b.addr & !0xFF) as usize;
                for (i, &v) in b.page.iter().enumerate() {
                    if self.cfg.stuck_byte != Some((base + i) as u64) {
                        self.mem[base + i] &= v;
                    }
                }
            }
        }
        if let Some(o) = self.ops.iter_mut().rev().find(|o| !o.completed) {
            o.completed = true;
        }
        self.wel = false;
    }

    fn status(&self) -> u8 {
        u8::from(self.busy.is_some()) | (u8::from(self.wel) << 1)
    }

    fn decode(&mut self, cycle: u64, op: u8) -> Option<Cmd> {
        let a = |four: bool| if four || self.addr4 { 4 } else { 3 };
        let c = |addr_bytes, dummy, data| {
            Some(Cmd {
                opcode: op,
                addr_bytes,
                dummy,
                data,
            })
        };
        if self.busy.is_some() && op != 0x05 {
            self.err(cycle, format!("command {op:#04x} while busy (ignored)"));
            return None;
        }
        match op {
            0x9F => c(0, 0, Data::Id),
            0x05 => c(0, 0, Data::Status),
            0x06 | 0x04 | 0xB7 | 0xE9 => c(0, 0, Data::None),
            0x03 => c(a(false), 0, Data::Read { quad: false }),
            0x13 => c(4, 0, Data::Read { quad: false }),
            0x0B => c(a(false), 8, Data::Read { quad: false }),
            0x0C => c(4, 8, Data::Read { quad: false }),
            0x6B => c(a(false), 8, Data::Read { quad: true }),
            0x6C => c(4, 8, Data::Read { quad: true }),
            0x02 => c(a(false), 0, Data::Program { quad: false }),
            0x12 => c(4, 0, Data::Program { quad: false }),
            0x32 => c(a(false), 0, Data::Program { quad: true }),
            0x34 => c(4, 0, Data::Program { quad: true }),
            0x20 | 0xD8 => c(a(false), 0, Data::None),
            0x21 | 0xDC => c(4, 0, Data::None),
            _ => {
                self.err(cycle, format!("unknown opcode {op:#04x} (ignored)"));
                None
            }
        }
    }

    /// Rising SCK edge: sample the NIC's outputs.
    fn rise(&mut self, cycle: u64, io: u8, oe: u8) {
        self.edges += 1;
        let e = self.edges;
        if e <= 8 {
            if oe & 1 == 0 {
                self.err(cycle, "IO0 not driven during the opcode".into());
            }
            self.opcode = (self.opcode << 1) | (io & 1);
            if e == 8 {
                self.stats.commands += 1;
                self.cmd = self.decode(cycle, self.opcode);
                self.addr = 0;
                self.in_bits = 0;
                self.prog_count = 0;
                if matches!(
                    self.cmd,
                    Some(Cmd {
                        data: Data::Program { .. },
                        ..
                    })
                ) {
                    self.prog_page.fill(0xFF);
                }
            }
            return;
        }
        let Some(cmd) = self.cmd else { return };
        let ab = cmd.addr_bytes * 8;
        if e <= 8 + ab {
            self.addr = (self.addr << 1) | u64::from(io & 1);
            return;
        }
        if e <= 8 + ab + cmd.dummy {
            return;
        }
        if let Data::Program { quad } = cmd.data {
            let (bits, v, need) = if quad {
                (4, io & 0xF, 0xF)
            } else {
                (1, io & 1, 1)
            };
            if oe & need != need {
                self.err(cycle, "program data lines not driven".into());
            }
            self.in_byte = (self.in_byte << bits) | v;
            self.in_bits += bits;
            if self.in_bits == 8 {
                self.in_bits = 0;
                let i = ((self.addr + self.prog_count) & 0xFF) as usize;
                self.prog_page[i] = self.in_byte;
                self.prog_count += 1;
            }
        }
    }

    /// Falling SCK edge: present the next output bit or nibble.
    fn fall(&mut self) {
        let Some(cmd) = self.cmd else { return };
        let start = 8 + cmd.addr_bytes * 8 + cmd.dummy;
        if self.edges < start {
            return;
        }
        let u = u64::from(self.edges - start);
        let quad = matches!(cmd.data, Data::Read { quad: true });
        let (byte_i, shift) = if quad {
            (u / 2, if u % 2 == 0 { 4 } else { 0 })
        } else {
            (u / 8, 7 - (u % 8) as u32)
        };
        let byte = match cmd.data {
            Data::Read { .. } => {
                if (quad && u % 2 == 0) || (!quad && u % 8 == 0) {
                    self.stats.bytes_read += 1;
                }
                let size = self.cfg.size as u64;
                self.mem[((self.addr + byte_i) % size) as usize]
            }
            Data::Status => {
                if u % 8 == 0 {
                    self.stats.status_reads += 1;
                }
                self.status()
            }
            Data::Id => *self.cfg.jedec_id.get(byte_i as usize).unwrap_or(&0),
            _ => return,
        };
        if quad {
            self.drive = 0xF;
            self.out_nibbles = (byte >> shift) & 0xF;
        } else {
            self.drive = 0b0010;
            self.out_nibbles = ((byte >> shift) & 1) << 1;
        }
    }

    /// CS rose: finish the transaction.
    fn end(&mut self, cycle: u64) {
        self.drive = 0;
        let Some(cmd) = self.cmd.take() else {
            self.edges = 0;
            return;
        };
        let e = self.edges;
        self.edges = 0;
        let ab = cmd.addr_bytes * 8;
        let exact = e == 8 + ab;
        let size = self.cfg.size as u64;
        match cmd.opcode {
            0x06 if e == 8 => self.wel = true,
            0x04 if e == 8 => self.wel = false,
            0xB7 if e == 8 => self.addr4 = true,
            0xE9 if e == 8 => self.addr4 = false,
            0x20 | 0x21 | 0xD8 | 0xDC if exact => {
                if !self.wel {
                    self.err(
                        cycle,
                        format!("erase {:#x} without WEL (ignored)", self.addr),
                    );
                    return;
                }
                let len: u64 = if matches!(cmd.opcode, 0x20 | 0x21) {
                    4096
                } else {
                    65536
                };
                let addr = (self.addr % size) & !(len - 1);
                let t = if len == 4096 {
                    self.cfg.timing.sector_erase
                } else {
                    self.cfg.timing.block_erase
                };
                self.stats.erases += 1;
                self.start_busy(cycle, FlashOpKind::Erase, addr, len, t);
            }
            0x02 | 0x12 | 0x32 | 0x34 => {
                if self.in_bits != 0 {
                    self.err(cycle, "page program ended inside a byte (ignored)".into());
                    return;
                }
                if !self.wel {
                    self.err(
                        cycle,
                        format!("program {:#x} without WEL (ignored)", self.addr),
                    );
                    return;
                }
                if self.prog_count == 0 {
                    return;
                }
                let addr = self.addr % size;
                let n = self.prog_count.min(256);
                self.stats.programs += 1;
                self.stats.bytes_programmed += n;
                let t = self.cfg.timing.page_program;
                self.start_busy(cycle, FlashOpKind::Program, addr, n, t);
            }
            _ => {}
        }
    }

    fn start_busy(&mut self, cycle: u64, op: FlashOpKind, addr: u64, len: u64, t: u64) {
        let (baddr, page, blen) = match op {
            FlashOpKind::Erase => (addr, Vec::new(), len),
            FlashOpKind::Program => (addr & !0xFF, self.prog_page.clone(), 256),
        };
        self.busy = Some(Busy {
            until: cycle + t.max(1),
            op,
            addr: baddr,
            page,
            len: blen,
        });
        self.stats.busy_cycles += t.max(1);
        self.ops.push(FlashOp {
            cycle,
            kind: op,
            addr,
            len,
            completed: false,
        });
    }
}

impl PortHook for SpiFlash {
    #[inline]
    fn drive(&mut self, cycle: u64, _in_reset: bool, inp: &mut PortsIn) {
        inp.boot_slot = self.boot.0.code();
        inp.boot_fallback = u8::from(self.boot.1);
        inp.flash_io_i = self.pads;
        if let Some(b) = &self.busy {
            if cycle >= b.until {
                self.finish_busy();
            }
        }
        if self.dead.is_none() && self.cfg.power_cut_at.is_some_and(|c| cycle >= c) {
            self.cut_power(cycle);
        }
    }

    #[inline]
    fn sample(&mut self, cycle: u64, _inp: &PortsIn, out: &PortsOut) {
        if out.reconfig_req != 0 {
            self.reconfig = true;
        }
        let cs = out.flash_cs_n == 0;
        let sck = out.flash_sck != 0;
        let (io, oe) = (out.flash_io_o & 0xF, out.flash_io_oe & 0xF);
        if self.dead.is_none() {
            if cs && !self.cs {
                self.edges = 0;
                self.cmd = None;
                self.drive = 0;
            }
            if cs && sck && !self.sck {
                self.rise(cycle, io, oe);
            } else if cs && !sck && self.sck {
                self.fall();
            }
            if !cs && self.cs {
                self.end(cycle);
            }
            if self.drive & oe != 0 {
                self.err(
                    cycle,
                    format!(
                        "bus contention: NIC drives IO {oe:04b}, flash drives {:04b}",
                        self.drive
                    ),
                );
            }
            self.cs = cs;
        }
        self.sck = sck;
        // What the NIC sees next cycle: its own driven lines, the flash's,
        // pull-ups elsewhere.
        let flash = self.out_nibbles & self.drive;
        self.pads = (io & oe) | (flash & !oe) | (!(oe | self.drive) & 0xF);
    }
}

fn save_file(p: &Path, mem: &[u8]) -> Result<(), SimError> {
    // Write beside and rename, so a crash never leaves half a file.
    let tmp = p.with_extension("tmp");
    std::fs::write(&tmp, mem)
        .and_then(|_| std::fs::rename(&tmp, p))
        .map_err(|e| SimError::Config(format!("cannot write flash file {}: {e}", p.display())))
}
