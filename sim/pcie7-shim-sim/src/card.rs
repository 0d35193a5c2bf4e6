//! The card's datapath without the hard block: the module the Artix-7 card
//! top instantiates, boards/artix7-pcie/rnic_artix7_datapath.v, verilated
//! on its own. It wires `rnic_pcie7_shim` (64-bit TRN, `pcie_clk`) ->
//! `pcie_clock_crossing` (PCIE_W 64, CORE_W 128) -> `rnic_core` (DATA_W
//! 128, NUM_Q [`CARD_NUM_Q`], CLK_MHZ 62, `core_clk`), with the MAC
//! loopback register stage; the model holds the flash pins idle and boot
//! slot 0. Its driven ports are the PCIE_2_1 block's side of the shim. A second
//! build of it, [`Variant::Direct`], is the top's CLK_MHZ 125 mode: no
//! crossing, `rnic_core` at DATA_W 64 on `pcie_clk`.
//!
//! [`Card`] plays the block and the host: it steps the model at every
//! rising edge of two clocks, `pcie_clk` 125 MHz (8 ns) and `core_clk`
//! 62.5 MHz (16 ns, first edge at [`CardConfig::core_phase_ps`]; both at
//! once when edges coincide: the edge mask of [`CardIn::edges`]). On
//! `pcie_clk` edges it sends queued TLPs with the bench's receive beat
//! builder ([`crate::bench`], with idle gaps), takes the shim's transmit
//! beats with TRNTDSTRDY stalls and a transmit-buffer count, reassembles
//! them into [`Tlp`]s and checks the transmit rules (source ready held,
//! beats unchanged while held, SOF/EOF framing, length against the header),
//! and answers MSIs. Host-side helpers build BAR0 MMIO requests and check
//! completion headers field by field ([`check_cpl`]).

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::bench::{slot_word, BlockRx, Config, Fail, RxExpect, RxItem, Tlp};
pub use crate::card_params::CARD_NUM_Q;

/// True when build.rs verilated and linked the card datapath model.
pub const CARD_MODEL_AVAILABLE: bool = cfg!(pcie7_card_model);

/// `pcie_clk` period (USERCLK2, 125 MHz), picoseconds.
pub const PCIE_PS: u64 = 8_000;
/// `core_clk` period (62.5 MHz), picoseconds.
pub const CORE_PS: u64 = 16_000;
/// rnic_core's data width in the card (twice the TRN width).
pub const CORE_W: u32 = 128;

/// Which build of rnic_artix7_datapath (the card top's two modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// CLK_MHZ 62, the card's default: the crossing, rnic_core at 128 bits
    /// on `core_clk` (62.5 MHz).
    Cross,
    /// CLK_MHZ 125: no crossing, rnic_core at 64 bits on `pcie_clk`; the
    /// model's `core_clk` input is unused and never toggled.
    Direct,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Cross, Variant::Direct];

    /// rnic_core's DATA_W.
    pub fn core_w(self) -> u32 {
        match self {
            Variant::Cross => CORE_W,
            Variant::Direct => 64,
        }
    }

    /// The core's clock period, picoseconds.
    pub fn core_ps(self) -> u64 {
        match self {
            Variant::Cross => CORE_PS,
            Variant::Direct => PCIE_PS,
        }
    }

    /// The card top's CLK_MHZ for this mode.
    pub fn clk_mhz(self) -> u32 {
        match self {
            Variant::Cross => 62,
            Variant::Direct => 125,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Variant::Cross => "crossing (CLK_MHZ 62, core 128b @ 62.5 MHz)",
            Variant::Direct => "direct (CLK_MHZ 125, core 64b @ 125 MHz)",
        }
    }
}

/// Inputs of the card model for one step. Mirrors `CardIn` in
/// csrc/card.cpp. `trn_rd`: word i = bits [32i+31:32i].
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct CardIn {
    pub trn_rd: [u32; 2],
    pub cfg_msg_data: u16,
    /// Rising edges of this step: bit 0 `pcie_clk`, bit 1 `core_clk`.
    pub edges: u8,
    pub rst: u8,
    pub trn_rrem: u8,
    pub trn_rsof: u8,
    pub trn_reof: u8,
    pub trn_rsrc_rdy: u8,
    pub trn_rbar_hit: u8,
    pub trn_rerrfwd: u8,
    pub trn_rsrc_dsc: u8,
    pub trn_tdst_rdy: u8,
    pub trn_tbuf_av: u8,
    pub trn_tcfg_req: u8,
    pub trn_lnk_up: u8,
    pub cfg_interrupt_rdy: u8,
    pub cfg_interrupt_msienable: u8,
    pub cfg_interrupt_mmenable: u8,
    pub cfg_dev_control_max_payload: u8,
    pub cfg_dev_control_max_read_req: u8,
    pub cfg_msg_received: u8,
}

/// Outputs of the card model, sampled before the step's edges. Mirrors
/// `CardOut` in csrc/card.cpp.
#[repr(C)]
#[derive(Debug, Default, Clone)]
pub struct CardOut {
    pub trn_td: [u32; 2],
    pub trn_rdst_rdy: u8,
    pub trn_trem: u8,
    pub trn_tsof: u8,
    pub trn_teof: u8,
    pub trn_tsrc_rdy: u8,
    pub trn_tsrc_dsc: u8,
    pub trn_tstr: u8,
    pub trn_terrfwd: u8,
    pub trn_tecrc_gen: u8,
    pub trn_tcfg_gnt: u8,
    pub cfg_interrupt: u8,
    pub cfg_interrupt_di: u8,
    pub sim_flags: u8,
}

type Fns = crate::ffi_model::Fns<CardIn, CardOut>;

#[cfg(pcie7_card_model)]
mod ffi {
    use super::*;
    pub(super) fn fns(v: Variant) -> Option<Fns> {
        Some(match v {
            Variant::Cross => crate::model_fns!("card_x_", CardIn, CardOut),
            Variant::Direct => crate::model_fns!("card_d_", CardIn, CardOut),
        })
    }
}

#[cfg(not(pcie7_card_model))]
mod ffi {
    use super::*;
    pub(super) fn fns(_: Variant) -> Option<Fns> {
        None
    }
}

/// One Verilated card datapath.
pub struct CardModel {
    m: crate::ffi_model::FfiModel<CardIn, CardOut>,
}

impl CardModel {
    /// A model of variant `v` whose registers start from `seed`
    /// (`--x-initial unique`).
    pub fn new(v: Variant, seed: u32) -> Result<Self, String> {
        let fns = ffi::fns(v).ok_or_else(|| {
            "pcie7-shim-sim was built without the card datapath model".to_string()
        })?;
        let m = crate::ffi_model::FfiModel::new(fns, seed, "csrc/card.cpp")?;
        Ok(Self { m })
    }

    /// One step: apply `i` with both clocks low, return the outputs, then
    /// the rising edges of `i.edges`.
    pub fn step(&mut self, i: &CardIn) -> CardOut {
        self.m.step(i)
    }
}

/// Knobs of a card run.
#[derive(Clone, Debug)]
pub struct CardConfig {
    pub seed: u64,
    /// Which build of the datapath (the crossing unless set).
    pub variant: Variant,
    /// Time of `core_clk`'s first rising edge (0: every other `pcie_clk`
    /// edge coincides with one, as from the card's MMCM). Unused by
    /// [`Variant::Direct`].
    pub core_phase_ps: u64,
    /// Probability that the block inserts an idle cycle on receive.
    pub rx_gap: f64,
    /// Probability that the block holds TRNTDSTRDY low in a cycle.
    pub tx_stall: f64,
    /// Transmit buffers and the chance per cycle that one frees up.
    pub tbuf_max: u8,
    pub tbuf_drain: f64,
    /// Chance per cycle that the block reports a received message on
    /// CFGMSGDATA (the requester ID is not presented in that cycle).
    pub msg_rate: f64,
    /// What the configuration space says: bus/device/function (the
    /// completer ID), max payload and max read request codes.
    pub requester_id: u16,
    pub max_payload: u8,
    pub max_read_req: u8,
    pub msi_enable: bool,
    /// `pcie_clk` cycles the reset source is held from the start.
    pub reset_cycles: u64,
}

impl CardConfig {
    pub fn new(seed: u64) -> Self {
        CardConfig {
            seed,
            variant: Variant::Cross,
            core_phase_ps: 0,
            rx_gap: 0.2,
            tx_stall: 0.25,
            tbuf_max: 28,
            tbuf_drain: 0.5,
            msg_rate: 0.02,
            requester_id: 0x0300,
            max_payload: 1,
            max_read_req: 2,
            msi_enable: true,
            reset_cycles: 16,
        }
    }
}

/// The block's and the host's side of the card model.
pub struct Card {
    model: CardModel,
    pub cfg: CardConfig,
    rng: ChaCha8Rng,
    rx: BlockRx,
    rx_cfg: Config,
    inputs: CardIn,
    t_pcie: u64,
    t_core: u64,
    /// `pcie_clk` edges so far, and the core clock's (in
    /// [`Variant::Direct`], `pcie_clk`'s again).
    pub cycle: u64,
    pub core_cycles: u64,
    // block transmit side
    tx_held: Option<([u32; 2], u8, bool, bool)>,
    tx_in_tlp: bool,
    tx_words: Vec<u32>,
    tbuf: u8,
    /// TLPs the card sent on TRN, with the `pcie_clk` cycle of their EOF,
    /// not yet taken by the test.
    pub tx: VecDeque<(u64, Tlp)>,
    /// TLPs sent to the card so far.
    pub rx_sent: usize,
    // MSI handshake: (CFGINTERRUPTDI, first cycle, RDY delay)
    int_seen: Option<(u8, u64, u32)>,
    /// MSIs the block took (CFGINTERRUPTDI).
    pub msi: Vec<u8>,
    /// TRN beat counts since the start (`pcie_clk` cycles out of reset):
    /// receive beats the shim took, receive beats offered but refused
    /// (TRNRDSTRDY low), transmit beats the block took.
    pub rx_beats: u64,
    pub rx_refused: u64,
    pub tx_beats: u64,
}

/// 2-dword TRN.
const W: usize = 2;

impl Card {
    pub fn new(cfg: CardConfig) -> Result<Self, Fail> {
        let model = CardModel::new(cfg.variant, cfg.seed as u32 | 1).map_err(Fail)?;
        let rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed_ca4d);
        let rx_cfg = Config::new(64, cfg.seed);
        // direct: the model's core_clk is unused, never an edge of its own
        let t_core = match cfg.variant {
            Variant::Cross => cfg.core_phase_ps,
            Variant::Direct => u64::MAX,
        };
        let tbuf = cfg.tbuf_max;
        Ok(Card {
            model,
            cfg,
            rng,
            rx: BlockRx::new(W),
            rx_cfg,
            inputs: CardIn::default(),
            t_pcie: 0,
            t_core,
            cycle: 0,
            core_cycles: 0,
            tx_held: None,
            tx_in_tlp: false,
            tx_words: Vec::new(),
            tbuf,
            tx: VecDeque::new(),
            rx_sent: 0,
            int_seen: None,
            msi: Vec::new(),
            rx_beats: 0,
            rx_refused: 0,
            tx_beats: 0,
        })
    }

    /// Queue a request TLP (BAR0 hit) or completion for the card.
    pub fn send(&mut self, tlp: Tlp) {
        let expect = if tlp.hdr[0] >> 24 & 0x1f == crate::bench::TYPE_CPL {
            RxExpect::Cpl
        } else {
            RxExpect::Req
        };
        self.rx.push(RxItem::new(tlp, expect));
        self.rx_sent += 1;
    }

    /// Every TLP queued has been taken by the shim.
    pub fn rx_idle(&self) -> bool {
        self.rx.idle()
    }

    /// How many of the TLPs queued the shim has taken whole.
    pub fn rx_taken(&self) -> usize {
        self.rx.taken()
    }

    /// How many of the TLPs queued the shim has taken the first beat of.
    pub fn rx_started(&self) -> usize {
        self.rx.started()
    }

    fn in_reset(&self) -> bool {
        self.cycle < self.cfg.reset_cycles
    }

    /// The block's inputs for the coming `pcie_clk` edge.
    fn drive(&mut self) -> CardIn {
        let rst = self.in_reset();
        let cfg = &self.cfg;
        let mut i = CardIn {
            rst: u8::from(rst),
            trn_lnk_up: 1,
            cfg_interrupt_msienable: u8::from(cfg.msi_enable),
            cfg_interrupt_mmenable: 5,
            cfg_dev_control_max_payload: cfg.max_payload,
            cfg_dev_control_max_read_req: cfg.max_read_req,
            cfg_msg_data: cfg.requester_id,
            ..CardIn::default()
        };
        if self.rng.gen_bool(cfg.msg_rate) {
            i.cfg_msg_received = 1;
            i.cfg_msg_data = self.rng.gen();
        }
        if !rst {
            if self.rx.held.is_none() && !self.rng.gen_bool(self.cfg.rx_gap) {
                self.rx.held = self.rx.build(&mut self.rng, &self.rx_cfg);
            }
            if let Some(b) = &self.rx.held {
                i.trn_rd = [b.rd[0], b.rd[1]];
                i.trn_rrem = b.rem;
                i.trn_rsof = u8::from(b.sof);
                i.trn_reof = u8::from(b.eof);
                i.trn_rsrc_rdy = 1;
                i.trn_rbar_hit = b.bar;
                i.trn_rerrfwd = u8::from(b.errfwd);
                i.trn_rsrc_dsc = u8::from(b.dsc);
            } else {
                i.trn_rd = [self.rng.gen(), self.rng.gen()];
                i.trn_rsof = self.rng.gen_range(0..2);
                i.trn_reof = self.rng.gen_range(0..2);
            }
        }
        i.trn_tbuf_av = self.tbuf;
        i.trn_tdst_rdy = u8::from(self.tbuf > 0 && !self.rng.gen_bool(self.cfg.tx_stall));
        if let Some((_, t0, d)) = self.int_seen {
            if self.cycle >= t0 + u64::from(d) {
                i.cfg_interrupt_rdy = 1;
            }
        }
        i
    }

    /// The block's side of a `pcie_clk` edge: handshakes and checks.
    fn observe(&mut self, i: &CardIn, o: &CardOut) -> Result<(), Fail> {
        let cycle = self.cycle;
        if i.rst != 0 {
            return Ok(());
        }
        let err = |m: String| Err(Fail(format!("pcie cycle {cycle}: {m}")));
        if i.trn_rsrc_rdy != 0 && o.trn_rdst_rdy != 0 {
            self.rx.held = None;
            self.rx_beats += 1;
        } else if i.trn_rsrc_rdy != 0 {
            self.rx_refused += 1;
        }
        if o.trn_tsrc_dsc != 0 || o.trn_tstr != 0 || o.trn_terrfwd != 0 || o.trn_tecrc_gen != 0 {
            return err("TRNTSRCDSC/TSTR/TERRFWD/TECRCGEN must stay low".into());
        }
        if o.trn_tcfg_gnt != 0 {
            return err("TRNTCFGGNT without a request".into());
        }
        let beat = (o.trn_td, o.trn_trem, o.trn_tsof != 0, o.trn_teof != 0);
        if let Some(h) = self.tx_held.take() {
            if o.trn_tsrc_rdy == 0 {
                return err("TRNTSRCRDY dropped before TRNTDSTRDY".into());
            }
            if h.0 != beat.0 || h.2 != beat.2 || h.3 != beat.3 || (h.3 && h.1 != beat.1) {
                return err(format!(
                    "transmit beat changed while held: {h:08x?} -> {beat:08x?}"
                ));
            }
        }
        if o.trn_tsrc_rdy != 0 && beat.2 && !self.tx_in_tlp && i.trn_tbuf_av == 0 {
            return err("a TLP started with TRNTBUFAV 0".into());
        }
        if o.trn_tsrc_rdy != 0 && i.trn_tdst_rdy != 0 {
            self.tx_beats += 1;
            if beat.2 {
                if self.tx_in_tlp {
                    return err("SOF inside a TLP".into());
                }
                self.tx_in_tlp = true;
                self.tx_words.clear();
            } else if !self.tx_in_tlp {
                return err("transmit beat outside a TLP".into());
            }
            let n = if beat.3 && beat.1 & 1 == 0 { 1 } else { W };
            for s in 0..n {
                self.tx_words.push(beat.0[slot_word(W, s)]);
            }
            if beat.3 {
                self.tx_in_tlp = false;
                if self.tx_words.len() < 3 {
                    return err(format!("TLP shorter than a header: {:08x?}", self.tx_words));
                }
                let t = Tlp::from_wire(&self.tx_words);
                if t.data.len() / 4 != t.len_dw() {
                    return err(format!(
                        "TLP {:08x?} with {} payload dwords, header says {}",
                        t.hdr,
                        t.data.len() / 4,
                        t.len_dw()
                    ));
                }
                self.tx.push_back((cycle, t));
                self.tbuf = self.tbuf.saturating_sub(1);
            }
        } else if o.trn_tsrc_rdy != 0 {
            self.tx_held = Some(beat);
        }
        if self.tbuf < self.cfg.tbuf_max && self.rng.gen_bool(self.cfg.tbuf_drain) {
            self.tbuf += 1;
        }
        // MSI: CFGINTERRUPT held with its vector until RDY
        if o.cfg_interrupt != 0 {
            match self.int_seen {
                None => {
                    let d = self.rng.gen_range(0..6);
                    self.int_seen = Some((o.cfg_interrupt_di, cycle, d));
                }
                Some((di, _, _)) if di != o.cfg_interrupt_di => {
                    return err("CFGINTERRUPTDI changed before RDY".into());
                }
                _ => {}
            }
            if i.cfg_interrupt_rdy != 0 {
                let (di, _, _) = self.int_seen.take().unwrap();
                self.msi.push(di);
            }
        } else if self.int_seen.is_some() {
            return err("CFGINTERRUPT dropped before RDY".into());
        }
        Ok(())
    }

    /// Advance to the next rising edge (of either clock or both).
    pub fn step(&mut self) -> Result<(), Fail> {
        let now = self.t_pcie.min(self.t_core);
        let pe = self.t_pcie == now;
        let ce = self.t_core == now;
        if pe {
            self.inputs = self.drive();
        }
        self.inputs.edges = u8::from(pe) | (u8::from(ce) << 1);
        let i = self.inputs.clone();
        let o = self.model.step(&i);
        if o.sim_flags != 0 {
            return Err(Fail(format!(
                "pcie cycle {} (core cycle {}): the RTL stopped ($error/$finish, flags {})",
                self.cycle, self.core_cycles, o.sim_flags
            )));
        }
        if pe {
            self.observe(&i, &o)?;
            self.cycle += 1;
            self.t_pcie += PCIE_PS;
        }
        if ce {
            self.core_cycles += 1;
            self.t_core += CORE_PS;
        } else if pe && self.cfg.variant == Variant::Direct {
            // the core runs on pcie_clk
            self.core_cycles += 1;
        }
        Ok(())
    }

    /// Run `n` more `pcie_clk` cycles.
    pub fn cycles(&mut self, n: u64) -> Result<(), Fail> {
        let end = self.cycle + n;
        while self.cycle < end {
            self.step()?;
        }
        Ok(())
    }

    /// Run until `done` holds (checked after each `pcie_clk` edge), at most
    /// `max` `pcie_clk` cycles; `what` names the wait in the error.
    pub fn run_until(
        &mut self,
        max: u64,
        what: &str,
        mut done: impl FnMut(&Card) -> bool,
    ) -> Result<(), Fail> {
        let end = self.cycle + max;
        loop {
            if done(self) {
                return Ok(());
            }
            if self.cycle >= end {
                return Err(Fail(format!(
                    "pcie cycle {}: timed out after {max} cycles waiting for {what}",
                    self.cycle
                )));
            }
            let c = self.cycle;
            while self.cycle == c {
                self.step()?;
            }
        }
    }

    /// Reset (the source held for `reset_cycles`) and then long enough for
    /// the core to come out of it and the configuration values to cross.
    pub fn start(&mut self) -> Result<(), Fail> {
        let n = self.cfg.reset_cycles + 64;
        self.cycles(n)
    }

    /// Issue a 1-dword BAR0 read, wait for its completion, check its
    /// header and return the dword.
    pub fn read32(&mut self, off: u32) -> Result<u32, Fail> {
        let tag = self.rng.gen();
        let req_id = self.rng.gen();
        let t = mmio_read(off, req_id, tag, 0xf);
        self.send(t.clone());
        self.run_until(
            4000,
            &format!("the completion of a read of {off:#x}"),
            |c| !c.tx.is_empty(),
        )?;
        let (_, cpl) = self.tx.pop_front().unwrap();
        check_cpl(&t, &cpl, self.cfg.requester_id)
            .map_err(|Fail(m)| Fail(format!("read of {off:#x}: {m}")))
    }

    /// Issue a 1-dword BAR0 write (posted: nothing comes back).
    pub fn write32(&mut self, off: u32, val: u32) {
        let req_id = self.rng.gen();
        self.send(mmio_write(off, val, req_id, 0xf));
    }
}

/// Where the tests place BAR0 (32-bit, 64 KiB).
pub const BAR0: u32 = 0xf7c0_0000;

/// A 1-dword MemRd of BAR0 offset `off` with first byte enables `fbe`.
pub fn mmio_read(off: u32, req_id: u16, tag: u8, fbe: u8) -> Tlp {
    Tlp {
        hdr: [
            Tlp::dw0(0b000, crate::bench::TYPE_MEM, 1),
            (u32::from(req_id) << 16) | (u32::from(tag) << 8) | u32::from(fbe & 0xf),
            BAR0 + (off & 0xfffc),
            0,
        ],
        data: Vec::new(),
    }
}

/// A 1-dword MemWr of `val` to BAR0 offset `off`, first byte enables
/// `fbe`. The register sees the payload's wire byte 0 in bits 7:0.
pub fn mmio_write(off: u32, val: u32, req_id: u16, fbe: u8) -> Tlp {
    Tlp {
        hdr: [
            Tlp::dw0(0b010, crate::bench::TYPE_MEM, 1),
            (u32::from(req_id) << 16) | u32::from(fbe & 0xf),
            BAR0 + (off & 0xfffc),
            0,
        ],
        data: val.to_le_bytes().to_vec(),
    }
}

/// Byte count and lower address bits 1:0 of a 1-dword read's completion
/// from its first byte enables (PCIe base spec, the byte count and lower
/// address tables).
pub fn be_count_lo(fbe: u8) -> (u32, u32) {
    let fbe = fbe & 0xf;
    if fbe == 0 {
        return (1, 0);
    }
    let lo = fbe.trailing_zeros();
    let hi = 7 - fbe.leading_zeros();
    (hi - lo + 1, lo)
}

/// Check that `cpl` is the successful completion of the 1-dword MMIO read
/// `req` (format, type, length, completer ID, status, byte count, requester
/// ID, tag, lower address) and return its dword (register bits 7:0 = wire
/// byte 0).
pub fn check_cpl(req: &Tlp, cpl: &Tlp, completer: u16) -> Result<u32, Fail> {
    let fbe = (req.hdr[1] & 0xf) as u8;
    let (count, lo) = be_count_lo(fbe);
    let addr = req.hdr[2];
    let want = [
        Tlp::dw0(0b010, crate::bench::TYPE_CPL, 1),
        (u32::from(completer) << 16) | count,
        (req.hdr[1] & 0xffff_ff00) | (addr & 0x7c) | lo,
        0,
    ];
    if cpl.hdr != want || cpl.data.len() != 4 {
        return Err(Fail(format!(
            "completion {:08x?} with {} payload bytes, expected header {:08x?} and 4 bytes \
             (request {:08x?})",
            cpl.hdr,
            cpl.data.len(),
            want,
            req.hdr
        )));
    }
    Ok(u32::from_le_bytes([
        cpl.data[0],
        cpl.data[1],
        cpl.data[2],
        cpl.data[3],
    ]))
}

/// Host memory behind the card, and the root complex's side of the card's
/// DMA: MemWr TLPs are written into it, MemRd TLPs answered with
/// completions (split at read-completion boundaries), each request checked
/// against the rules the card must follow.
pub struct HostMem {
    bytes: std::collections::HashMap<u64, u8>,
    rng: ChaCha8Rng,
    /// Read completion boundary, bytes (64 or 128).
    pub rcb: u64,
    /// Completer ID of the root complex.
    pub completer_id: u16,
    /// Outstanding read tags: tag -> how many TLPs the card must have
    /// started taking for the last completion of its read to have begun
    /// (see `serve`).
    tags: std::collections::HashMap<u8, usize>,
    /// Requests served: (read, address, bytes).
    pub log: Vec<(bool, u64, usize)>,
    /// Read-completion boundaries per completion: `None` a random 1 to 4
    /// (the tests), `Some(k)` always `k` (the first one up to the k-th
    /// boundary; `Some(1)`: every completion ends at the next RCB, as many
    /// root complexes split).
    pub cpl_rcbs: Option<u64>,
    /// Completions sent and their payload bytes.
    pub cpls: u64,
    pub cpl_bytes: u64,
}

impl HostMem {
    pub fn new(seed: u64) -> Self {
        HostMem {
            bytes: std::collections::HashMap::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x4057),
            rcb: 64,
            completer_id: 0x0000,
            tags: std::collections::HashMap::new(),
            log: Vec::new(),
            cpl_rcbs: None,
            cpls: 0,
            cpl_bytes: 0,
        }
    }

    /// `n` bytes at `a` (never written: 0).
    pub fn read(&self, a: u64, n: usize) -> Vec<u8> {
        (0..n as u64)
            .map(|i| self.bytes.get(&(a + i)).copied().unwrap_or(0))
            .collect()
    }

    pub fn write(&mut self, a: u64, d: &[u8]) {
        for (i, b) in d.iter().enumerate() {
            self.bytes.insert(a + i as u64, *b);
        }
    }

    /// Serve one TLP the card sent: a MemWr or a MemRd (anything else is an
    /// error). Completions for a read are queued on `card`.
    pub fn serve(&mut self, card: &mut Card, t: &Tlp) -> Result<(), Fail> {
        let fail = |m: String| Err(Fail(format!("TLP {:08x?}: {m}", t.hdr)));
        let fmt = t.hdr[0] >> 29;
        let typ = t.hdr[0] >> 24 & 0x1f;
        if typ == crate::bench::TYPE_CPL {
            // completer side of the card: the completion of an MMIO read
            // nobody waits for here
            return fail("a completion while the host expected DMA only".into());
        }
        if typ != crate::bench::TYPE_MEM || fmt > 0b011 {
            return fail("neither MemRd nor MemWr".into());
        }
        let write = fmt & 0b010 != 0;
        let addr = if t.is_4dw() {
            (u64::from(t.hdr[2]) << 32) | u64::from(t.hdr[3] & !3)
        } else {
            u64::from(t.hdr[2] & !3)
        };
        if t.is_4dw() && addr >> 32 == 0 {
            return fail("4DW header for an address below 4 GiB".into());
        }
        let rid = (t.hdr[1] >> 16) as u16;
        if rid != card.cfg.requester_id {
            return fail(format!(
                "requester ID {rid:#06x}, the configuration says {:#06x}",
                card.cfg.requester_id
            ));
        }
        if t.hdr[0] & (1 << 15) != 0 {
            return fail("TD set (the shim sends no digest)".into());
        }
        // the Length field (`Tlp::len_dw` is the payload's: 0 for a read)
        let len = match (t.hdr[0] & 0x3ff) as usize {
            0 => 1024,
            l => l,
        };
        let fbe = (t.hdr[1] & 0xf) as u8;
        let lbe = (t.hdr[1] >> 4 & 0xf) as u8;
        if (len == 1 && lbe != 0) || (len > 1 && (fbe == 0 || lbe == 0)) {
            return fail(format!("byte enables {fbe:#x}/{lbe:#x} for {len} dwords"));
        }
        let bytes = len as u64 * 4;
        if (addr & 0xfff) + bytes > 0x1000 {
            return fail(format!("{bytes} bytes at {addr:#x} cross a 4 KiB boundary"));
        }
        let limit = 128u64
            << if write {
                card.cfg.max_payload
            } else {
                card.cfg.max_read_req
            };
        if bytes > limit {
            return fail(format!(
                "{bytes} bytes over the {} limit {limit}",
                if write {
                    "max payload"
                } else {
                    "max read request"
                }
            ));
        }
        let first = u64::from(fbe.trailing_zeros().min(4)) % 4;
        let last_mask = if len == 1 { fbe } else { lbe };
        let tail = 3 - u64::from(7 - last_mask.leading_zeros().min(7)) % 4;
        if write {
            for (i, b) in t.data.iter().enumerate() {
                let dw = i / 4;
                let be = if dw == 0 {
                    fbe
                } else if dw == len - 1 {
                    lbe
                } else {
                    0xf
                };
                if be >> (i % 4) & 1 != 0 {
                    self.bytes.insert(addr + i as u64, *b);
                }
            }
            self.log.push((false, addr, t.data.len()));
            return Ok(());
        }
        let tag = (t.hdr[1] >> 8) as u8;
        // A tag is free again once the card can know its read is done: when
        // the shim has taken the header beat of the read's last completion
        // (the root complex sent every completion of it by then; the hard
        // block has the whole TLP). dma_rd_engine frees a tag at the header
        // of the completion that ends its byte count, before that TLP's
        // data beats are in, so waiting for the TLP whole would be too
        // strict (it trips with 128-byte completions on the direct build).
        let started = card.rx_started();
        self.tags.retain(|_, upto| *upto > started);
        if self.tags.contains_key(&tag) {
            return fail(format!("tag {tag} reused while its read is outstanding"));
        }
        self.log.push((true, addr, len * 4));
        // completions: each ends at an RCB boundary except the last; the
        // byte count is what is left from its first byte on
        let start = addr + first;
        let end = addr + bytes - tail; // one past the last byte enabled
        let total = if fbe == 0 && len == 1 { 1 } else { end - start };
        let mut at = addr; // dword-aligned start of the next completion
        while at < addr + bytes {
            let room = ((at / self.rcb + 1) * self.rcb - at) / 4;
            let left = (addr + bytes - at) / 4;
            let chunks = match self.cpl_rcbs {
                Some(k) => k.max(1),
                None => self.rng.gen_range(1..=4u64),
            };
            let n = (room + (chunks - 1) * self.rcb / 4).min(left);
            let first_byte = if at == addr { start } else { at };
            let count = if at == addr { total } else { end - first_byte };
            let data = self.read(at, n as usize * 4);
            self.cpls += 1;
            self.cpl_bytes += n * 4;
            card.send(Tlp {
                hdr: [
                    Tlp::dw0(0b010, crate::bench::TYPE_CPL, n as usize),
                    (u32::from(self.completer_id) << 16) | (count as u32 & 0xfff),
                    (u32::from(rid) << 16) | (u32::from(tag) << 8) | (first_byte as u32 & 0x7f),
                    0,
                ],
                data,
            });
            at += n * 4;
        }
        // index of the last completion + 1
        self.tags.insert(tag, card.rx_sent);
        Ok(())
    }
}
