//! What the card's datapath moves in LOCAL_DMA_COPY work requests, in both
//! builds of rnic_artix7_datapath: the crossing (CLK_MHZ 62: rnic_core at
//! 128 bits on 62.5 MHz behind hw/rtl/pcie_clock_crossing.v) and direct
//! (CLK_MHZ 125: rnic_core at 64 bits on the 125 MHz user clock).
//!
//! A measurement, not a test: for each variant and copy size it fills the
//! SQ with signaled copies, rings the doorbell once and counts `pcie_clk`
//! cycles from the cycle the doorbell MemWr is queued on TRN to the cycle
//! of the EOF of the last CQE's MemWr. The block never stalls (no receive
//! gaps, TRNTDSTRDY always high, transmit buffers always free) and the host
//! model (src/card.rs, `HostMem`) answers every read at once (or after
//! `--latency-ns`) with completions split at each read-completion boundary.
//! Everything is deterministic for a seed (the data, the model's initial
//! register values).
//!
//! cargo run --release -p pcie7-shim-sim --example card_dma_rate [-- --json]
//!   [--seed N] [--rcb 64|128] [--cpl-rcbs K] [--mps 128|256|512]
//!   [--mrrs 128|256|512|1024] [--latency-ns NS] [--wrs N] [--sizes 256,4096]

use std::collections::VecDeque;
use std::process::ExitCode;

use pcie7_shim_sim::bench::{Fail, Tlp};
use pcie7_shim_sim::card::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// queue block (hw/regs/rnic_csr.rdl) and formats (hw/formats/rnic_formats.rdl),
// as tests/card_datapath.rs uses them
const Q_SEL: u32 = 0x110;
const Q_BASE_LO: u32 = 0x114;
const Q_BASE_HI: u32 = 0x118;
const Q_SIZE: u32 = 0x11c;
const Q_CQN: u32 = 0x120;
const Q_CMD: u32 = 0x124;
const SQ_DB: u32 = 0x130;
const ERR_COUNT: u32 = 0x144;
const CMD_ENABLE_SQ: u32 = 1;
const CMD_ENABLE_CQ: u32 = 3;
const WQE_SIZE: u64 = 64;
const CQE_SIZE: u64 = 32;
const OP_LOCAL_DMA_COPY: u8 = 0x80;
const FLAG_SIGNALED: u8 = 0x01;

const CQ_BASE: u64 = 0x8000_0000;
const SQ_BASE: u64 = 0x1_2345_6000;
const SRC_BASE: u64 = 0x2_0000_0000;
const DST_BASE: u64 = 0x3_0000_0000;

/// TRN: 64 bits at 125 MHz.
const TRN_GBPS: f64 = 8.0;

struct Opts {
    seed: u64,
    json: bool,
    rcb: u64,
    cpl_rcbs: u64,
    mps: u64,
    mrrs: u64,
    latency_ns: u64,
    wrs: u32,
    sizes: Vec<u32>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        seed: 1,
        json: false,
        rcb: 64,
        cpl_rcbs: 1,
        mps: 256,
        mrrs: 512,
        latency_ns: 0,
        wrs: 16,
        sizes: vec![256, 4096, 65536],
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--json" {
            o.json = true;
            continue;
        }
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{a} {v}: {e}"));
        match a.as_str() {
            "--seed" => o.seed = num(&v)?,
            "--rcb" => o.rcb = num(&v)?,
            "--cpl-rcbs" => o.cpl_rcbs = num(&v)?,
            "--mps" => o.mps = num(&v)?,
            "--mrrs" => o.mrrs = num(&v)?,
            "--latency-ns" => o.latency_ns = num(&v)?,
            "--wrs" => o.wrs = num(&v)? as u32,
            "--sizes" => {
                o.sizes = v
                    .split(',')
                    .map(|s| s.parse::<u32>().map_err(|e| format!("--sizes {s}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown option {a}")),
        }
    }
    let code = |b: u64, what: &str| match b {
        128 => Ok(0u8),
        256 => Ok(1),
        512 => Ok(2),
        1024 => Ok(3),
        _ => Err(format!("{what} {b}: 128, 256, 512 or 1024")),
    };
    code(o.mps, "--mps")?;
    code(o.mrrs, "--mrrs")?;
    if o.rcb != 64 && o.rcb != 128 {
        return Err("--rcb: 64 or 128".into());
    }
    if !o.wrs.is_power_of_two() || o.wrs < 2 {
        return Err("--wrs: a power of two (the SQ's size), at least 2".into());
    }
    Ok(o)
}

fn code(b: u64) -> u8 {
    (b / 128).trailing_zeros() as u8
}

struct Row {
    variant: Variant,
    size: u32,
    bytes: u64,
    cycles: u64,
    core_cycles: u64,
    rx_beats: u64,
    rx_refused: u64,
    tx_beats: u64,
    /// pcie cycles: an MMIO read's request queued -> its completion's EOF;
    /// the doorbell queued -> the EOF of the first MemRd (the WQE fetch).
    mmio_rt: u64,
    db_to_rd: u64,
    rd_reqs: usize,
    wr_reqs: usize,
    cpls: u64,
}

impl Row {
    fn ns(&self) -> u64 {
        self.cycles * PCIE_PS / 1000
    }
    fn gbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.ns() as f64
    }
}

fn run(o: &Opts, v: Variant, size: u32) -> Result<Row, Fail> {
    let mut cfg = CardConfig::new(o.seed);
    cfg.variant = v;
    cfg.rx_gap = 0.0;
    cfg.tx_stall = 0.0;
    cfg.tbuf_max = 32;
    cfg.tbuf_drain = 1.0;
    cfg.msg_rate = 0.0;
    cfg.max_payload = code(o.mps);
    cfg.max_read_req = code(o.mrrs);
    let mut c = Card::new(cfg)?;
    c.start()?;
    let mut mem = HostMem::new(o.seed);
    mem.rcb = o.rcb;
    mem.cpl_rcbs = Some(o.cpl_rcbs);
    let n = o.wrs as u64;
    let cq_entries = (2 * o.wrs).max(16);
    let setup = |c: &mut Card, cmd: u32, base: u64, entries: u32| {
        c.write32(Q_SEL, 0);
        c.write32(Q_BASE_LO, base as u32);
        c.write32(Q_BASE_HI, (base >> 32) as u32);
        c.write32(Q_SIZE, entries);
        c.write32(Q_CQN, 0);
        c.write32(Q_CMD, cmd);
    };
    setup(&mut c, CMD_ENABLE_CQ, CQ_BASE, cq_entries);
    setup(&mut c, CMD_ENABLE_SQ, SQ_BASE, o.wrs);
    let e = c.read32(ERR_COUNT)?;
    if e != 0 {
        return Err(Fail(format!("queue commands refused: err_count {e}")));
    }
    // a full SQ of copies, sources and destinations 4 KiB aligned, above
    // 4 GiB (4DW headers), `size` bytes of the seed's data each
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed ^ u64::from(size));
    let stride = u64::from(size).next_multiple_of(0x1000);
    let mut wrs = Vec::new();
    for k in 0..n {
        let (src, dst) = (SRC_BASE + k * stride, DST_BASE + k * stride);
        let data: Vec<u8> = (0..size).map(|_| rng.gen()).collect();
        mem.write(src, &data);
        let mut w = [0u8; WQE_SIZE as usize];
        w[0] = OP_LOCAL_DMA_COPY;
        w[1] = FLAG_SIGNALED;
        w[4..8].copy_from_slice(&size.to_le_bytes());
        w[8..16].copy_from_slice(&k.to_le_bytes());
        w[16..24].copy_from_slice(&src.to_le_bytes());
        w[24..32].copy_from_slice(&dst.to_le_bytes());
        mem.write(SQ_BASE + k * WQE_SIZE, &w);
        wrs.push((dst, data));
    }
    c.run_until(1000, "the setup writes", |c| c.rx_idle())?;
    let m0 = c.cycle;
    c.read32(ERR_COUNT)?;
    let mmio_rt = c.cycle - 1 - m0;
    c.run_until(1000, "quiet", |c| c.rx_idle())?;
    let (rx0, rf0, tx0, cc0) = (c.rx_beats, c.rx_refused, c.tx_beats, c.core_cycles);
    let t0 = c.cycle;
    c.write32(SQ_DB, o.wrs); // qn 0, producer index: the whole ring
    let lat = o.latency_ns * 1000 / PCIE_PS;
    let mut reads: VecDeque<(u64, Tlp)> = VecDeque::new();
    let mut cqes = 0u64;
    let mut last = t0;
    let mut first_rd = None;
    let limit = 200_000 + u64::from(size) * n;
    while cqes < n {
        if c.cycle - t0 > limit {
            return Err(Fail(format!(
                "{cqes} of {n} CQEs after {} pcie cycles ({} requests served)",
                c.cycle - t0,
                mem.log.len()
            )));
        }
        c.step()?;
        while let Some((at, t)) = c.tx.pop_front() {
            let write = t.hdr[0] >> 30 & 1 != 0;
            if !write {
                first_rd.get_or_insert(at);
                reads.push_back((at + lat, t));
                continue;
            }
            mem.serve(&mut c, &t)?;
            let a = (u64::from(t.hdr[2]) << 32) | u64::from(t.hdr[3]);
            let a = if t.is_4dw() { a } else { u64::from(t.hdr[2]) };
            if (CQ_BASE..CQ_BASE + u64::from(cq_entries) * CQE_SIZE).contains(&a) {
                cqes += 1;
                last = at;
            }
        }
        while reads.front().is_some_and(|(due, _)| *due <= c.cycle) {
            let (_, t) = reads.pop_front().unwrap();
            mem.serve(&mut c, &t)?;
        }
    }
    let row = Row {
        variant: v,
        size,
        bytes: n * u64::from(size),
        cycles: last - t0,
        core_cycles: c.core_cycles - cc0,
        mmio_rt,
        db_to_rd: first_rd.unwrap_or(t0) - t0,
        rx_beats: c.rx_beats - rx0,
        rx_refused: c.rx_refused - rf0,
        tx_beats: c.tx_beats - tx0,
        rd_reqs: mem.log.iter().filter(|l| l.0).count(),
        wr_reqs: mem.log.iter().filter(|l| !l.0).count(),
        cpls: mem.cpls,
    };
    // the copies and CQEs must be right, or the figures mean nothing
    for (k, (dst, data)) in wrs.iter().enumerate() {
        if &mem.read(*dst, data.len()) != data {
            return Err(Fail(format!(
                "copy {k}: destination differs from the source"
            )));
        }
        let cqe = mem.read(CQ_BASE + k as u64 * CQE_SIZE, CQE_SIZE as usize);
        if cqe[0..8] != (k as u64).to_le_bytes() || cqe[16..20] != [0; 4] {
            return Err(Fail(format!("CQE {k}: {cqe:02x?}")));
        }
    }
    Ok(row)
}

/// Payload ceiling of TRN's framing for a copy at these settings, Gb/s:
/// receive carries completions of `cpl_rcbs * rcb` bytes (3DW header),
/// transmit MemWr of max payload and MemRd of max read request (4DW
/// headers), 8 bytes a beat, a TLP starting on a beat of its own. WQE
/// fetches and CQEs not counted.
fn trn_ceiling(o: &Opts) -> (f64, f64) {
    let beats = |dw: u64| dw.div_ceil(2) as f64;
    let cpl = o.rcb * o.cpl_rcbs;
    let rx = cpl as f64 / beats(3 + cpl / 4);
    let writes = o.mrrs as f64 / o.mps as f64;
    let tx = o.mrrs as f64 / (writes * beats(4 + o.mps / 4) + beats(4));
    // bytes a beat -> Gb/s: 8 bytes a beat is TRN_GBPS
    (rx * TRN_GBPS / 8.0, tx * TRN_GBPS / 8.0)
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("card_dma_rate: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !CARD_MODEL_AVAILABLE {
        eprintln!("card_dma_rate: pcie7-shim-sim was built without the card datapath model");
        return ExitCode::FAILURE;
    }
    let mut rows = Vec::new();
    for v in Variant::ALL {
        for &size in &o.sizes {
            match run(&o, v, size) {
                Ok(r) => rows.push(r),
                Err(Fail(m)) => {
                    eprintln!("card_dma_rate: seed={} {v:?} {size} B: {m}", o.seed);
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let (rx_ceil, tx_ceil) = trn_ceiling(&o);
    if o.json {
        let rows: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{{\"variant\":\"{:?}\",\"clk_mhz\":{},\"core_w\":{},\"size\":{},\"wrs\":{},\
                     \"bytes\":{},\"pcie_cycles\":{},\"core_cycles\":{},\"ns\":{},\
                     \"copy_gbps\":{:.3},\"rx_beats\":{},\"rx_refused\":{},\"tx_beats\":{},\
                     \"mmio_read_cycles\":{},\"doorbell_to_wqe_read_cycles\":{},\"mem_rd\":{},\"mem_wr\":{},\"cpl\":{}}}",
                    r.variant,
                    r.variant.clk_mhz(),
                    r.variant.core_w(),
                    r.size,
                    o.wrs,
                    r.bytes,
                    r.cycles,
                    r.core_cycles,
                    r.ns(),
                    r.gbps(),
                    r.rx_beats,
                    r.rx_refused,
                    r.tx_beats,
                    r.mmio_rt,
                    r.db_to_rd,
                    r.rd_reqs,
                    r.wr_reqs,
                    r.cpls
                )
            })
            .collect();
        println!(
            "{{\"seed\":{},\"rcb\":{},\"cpl_rcbs\":{},\"mps\":{},\"mrrs\":{},\"latency_ns\":{},\
             \"trn_gbps\":{TRN_GBPS},\"trn_ceiling_rx_gbps\":{rx_ceil:.3},\
             \"trn_ceiling_tx_gbps\":{tx_ceil:.3},\"rows\":[{}]}}",
            o.seed,
            o.rcb,
            o.cpl_rcbs,
            o.mps,
            o.mrrs,
            o.latency_ns,
            rows.join(",")
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "card_dma_rate: seed {}, {} LOCAL_DMA_COPY WRs per run (a full SQ, one doorbell), \
         max payload {} B, max read request {} B, completions of {} B (RCB {}), host latency \
         {} ns; TRN never stalls",
        o.seed,
        o.wrs,
        o.mps,
        o.mrrs,
        o.rcb * o.cpl_rcbs,
        o.rcb,
        o.latency_ns
    );
    println!(
        "time: doorbell queued on TRN -> EOF of the last CQE's MemWr; rate: payload bytes \
         copied x 8 / time (each byte crosses TRN twice, in a completion and in a MemWr: \
         the rate is per direction)"
    );
    println!(
        "TRN: 64 b x 125 MHz = {TRN_GBPS} Gb/s per direction; payload ceiling of its framing \
         here: receive {rx_ceil:.2} Gb/s, transmit {tx_ceil:.2} Gb/s"
    );
    println!();
    println!(
        "{:<9} {:>7} {:>9} {:>8} {:>10} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6}",
        "variant",
        "size",
        "bytes",
        "cycles",
        "ns",
        "Gb/s",
        "rx use",
        "rx ref",
        "tx use",
        "MemRd",
        "MemWr",
        "Cpl"
    );
    for r in &rows {
        println!(
            "{:<9} {:>7} {:>9} {:>8} {:>10} {:>7.3} {:>6.1}% {:>6.1}% {:>6.1}% {:>6} {:>6} {:>6}",
            match r.variant {
                Variant::Cross => "crossing",
                Variant::Direct => "direct",
            },
            r.size,
            r.bytes,
            r.cycles,
            r.ns(),
            r.gbps(),
            100.0 * r.rx_beats as f64 / r.cycles as f64,
            100.0 * r.rx_refused as f64 / r.cycles as f64,
            100.0 * r.tx_beats as f64 / r.cycles as f64,
            r.rd_reqs,
            r.wr_reqs,
            r.cpls
        );
    }
    println!();
    for v in Variant::ALL {
        if let Some(r) = rows.iter().find(|r| r.variant == v) {
            println!(
                "{v:?}: MMIO read round trip {} pcie cycles, doorbell -> WQE fetch MemRd {} \
                 pcie cycles",
                r.mmio_rt, r.db_to_rd
            );
        }
    }
    println!(
        "rx use / tx use: TRN receive / transmit beats taken per pcie_clk cycle; rx ref: \
         receive beats the shim refused (TRNRDSTRDY low) per cycle; MemRd/MemWr/Cpl: the \
         card's requests (WQE fetches and CQEs included) and the host's completions"
    );
    for v in Variant::ALL {
        println!("{v:?}: {}", v.name());
    }
    ExitCode::SUCCESS
}
