//! The card's datapath without the hard block (boards/artix7-pcie/rnic_artix7_datapath.v,
//! the module the card top instantiates: shim ->
//! clock crossing -> rnic_core at 128 bits on its own 62.5 MHz clock; the
//! ID block reads also on the direct build, rnic_core at 64 bits on the
//! user clock), driven on the TRN side by src/card.rs: BAR0 MMIO through
//! the whole path, checked at the completions that come back on TRN.

use pcie7_shim_sim::bench::{Fail, Tlp, TYPE_CPL};
use pcie7_shim_sim::card::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn skip() -> bool {
    if !CARD_MODEL_AVAILABLE {
        eprintln!("SKIPPED: pcie7-shim-sim was built without the card datapath model");
        return true;
    }
    false
}

/// Run `f` on a started card; a failure panics with the seed.
fn with_card(cfg: CardConfig, f: impl FnOnce(&mut Card) -> Result<(), Fail>) {
    let seed = cfg.seed;
    let r = Card::new(cfg).and_then(|mut c| {
        c.start()?;
        f(&mut c)
    });
    if let Err(Fail(m)) = r {
        panic!("seed={seed}: {m}");
    }
}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(Fail(format!($($arg)*)));
        }
    };
}

// ID block (hw/regs/rnic_csr.rdl, id_block; values from rnic_core's
// parameters as the card sets them)
const ID_BLK_TYPE: u32 = 0x00;
const ID_BLK_VERSION: u32 = 0x04;
const ID_BLK_NEXT: u32 = 0x08;
const ID_MAGIC: u32 = 0x0c;
const ID_BUILD_VERSION: u32 = 0x10;
const ID_GIT_HASH: u32 = 0x14;
const ID_BOARD_ID: u32 = 0x18;
const ID_DATA_W: u32 = 0x1c;
const ID_NUM_QUEUES: u32 = 0x20;
const ID_VERBS: u32 = 0x24;
const ID_CAPS: u32 = 0x28;
const ID_MP_WINDOW: u32 = 0x2c;
const ID_MRS: u32 = 0x3c;

/// (offset, value) of the ID registers whose values are fixed for the
/// card's build (`v`: the core's DATA_W).
fn id_expect(v: Variant) -> Vec<(u32, u32)> {
    vec![
        (ID_BLK_TYPE, 0x5249_0001),
        (ID_BLK_VERSION, 0x0001_0000),
        (ID_BLK_NEXT, 0x100),
        (ID_MAGIC, 0x524e_4943), // 'RNIC'
        (ID_BUILD_VERSION, 0x0001_0000),
        (ID_GIT_HASH, 0),
        (ID_BOARD_ID, 0),
        (ID_DATA_W, v.core_w()),
        (ID_NUM_QUEUES, CARD_NUM_Q),
        (ID_VERBS, 0x1f),
        // (bit 10: doorbells by QP number)
        (ID_CAPS, 0x47f),
        (ID_MP_WINDOW, 64),
        (ID_MRS, 64),
    ]
}

/// Plain read/write registers with no side effects: (offset, implemented
/// bits, reset value). Port MAC and IPv4 address, the queue block's staged
/// ring base (high), the QP block's staged destination IP, MAC high/UDP
/// source port and receive ring base (high): all `sw = rw; hw = r`, used
/// only when a command is written.
const RW_REGS: [(u32, u32, u32); 7] = [
    (0x310, 0xffff_ffff, 0),           // port.mac_lo
    (0x314, 0x0000_ffff, 0),           // port.mac_hi
    (0x318, 0xffff_ffff, 0),           // port.ipv4
    (0x118, 0xffff_ffff, 0),           // queue.q_base_hi
    (0x428, 0xffff_ffff, 0xc000_0000), // qp.qp_dmac_hi (udp_sport reset 0xC000)
    (0x42c, 0xffff_ffff, 0),           // qp.qp_dip
    (0x438, 0xffff_ffff, 0),           // qp.qp_rq_base_hi
];

/// Nothing but the completions asked for may come out of the card.
fn no_stray_tx(c: &Card) -> Result<(), Fail> {
    ensure!(
        c.tx.is_empty(),
        "unexpected TLPs from the card: {:08x?}",
        c.tx.iter().map(|(_, t)| t.hdr).collect::<Vec<_>>()
    );
    ensure!(c.msi.is_empty(), "unexpected MSIs {:?}", c.msi);
    Ok(())
}

/// Both builds: the crossing (seeds 1..=3) and the direct one (the core at
/// 64 bits on the user clock; seeds 4..=5).
#[test]
fn mmio_reads_of_the_id_block() {
    if skip() {
        return;
    }
    for seed in 1..=5u64 {
        let variant = if seed <= 3 {
            Variant::Cross
        } else {
            Variant::Direct
        };
        let mut cfg = CardConfig::new(seed);
        cfg.variant = variant;
        if seed == 2 {
            // core edges between the PCIe clock's (no coinciding edges)
            cfg.core_phase_ps = 3_000;
        }
        if seed == 3 || seed == 5 {
            cfg.rx_gap = 0.0;
            cfg.tx_stall = 0.0;
        }
        with_card(cfg, |c| {
            // one at a time, full header checks in read32
            for (off, v) in id_expect(variant) {
                let got = c.read32(off)?;
                ensure!(
                    got == v,
                    "ID register {off:#x} reads {got:#010x}, expected {v:#010x}"
                );
            }
            // the block list: every block's type ("RI" and its number) and
            // the offset of the next, down to the end of the list
            let mut at = 0u32;
            let mut blocks = Vec::new();
            loop {
                let t = c.read32(at + ID_BLK_TYPE)?;
                ensure!(
                    t >> 16 == 0x5249,
                    "block at {at:#x}: type {t:#010x} is not 'RI'"
                );
                blocks.push(at);
                let next = c.read32(at + ID_BLK_NEXT)?;
                if next == 0 {
                    break;
                }
                ensure!(
                    next > at && blocks.len() < 16,
                    "block at {at:#x}: next {next:#x}"
                );
                at = next;
            }
            ensure!(
                blocks == [0x000, 0x100, 0x200, 0x300, 0x400, 0x500, 0x600],
                "block list {blocks:x?}"
            );
            // every ID register once more, all requests queued back to
            // back, random tags, requester IDs and first byte enables
            let mut rng = ChaCha8Rng::seed_from_u64(seed * 1000 + 7);
            let mut want = HashMap::new();
            let exp = id_expect(variant);
            for (k, &(off, v)) in exp.iter().enumerate() {
                let fbe = if rng.gen_bool(0.5) {
                    0xf
                } else {
                    rng.gen_range(0..16)
                };
                let t = mmio_read(off, rng.gen(), k as u8 * 3 + 1, fbe);
                want.insert(k as u8 * 3 + 1, (t.clone(), v));
                c.send(t);
            }
            c.run_until(20_000, "the completions of the queued ID reads", |c| {
                c.tx.len() >= exp.len()
            })?;
            for (_, cpl) in c.tx.drain(..).collect::<Vec<_>>() {
                let tag = (cpl.hdr[2] >> 8) as u8;
                let Some((req, v)) = want.remove(&tag) else {
                    return Err(Fail(format!("completion {:08x?}: unknown tag", cpl.hdr)));
                };
                let got = check_cpl(&req, &cpl, c.cfg.requester_id)?;
                ensure!(
                    got == v,
                    "ID register {:#x} reads {got:#010x}, expected {v:#010x}",
                    req.hdr[2] & 0xffff
                );
            }
            // an unsupported read (2 dwords) gets an Unsupported Request
            // completion without data
            let mut t = mmio_read(ID_MAGIC, 0x0010, 0x77, 0xf);
            t.hdr[0] = Tlp::dw0(0, 0, 2);
            t.hdr[1] |= 0xf0;
            c.send(t.clone());
            c.run_until(4000, "the UR completion", |c| !c.tx.is_empty())?;
            let (_, cpl) = c.tx.pop_front().unwrap();
            let want = [
                Tlp::dw0(0, TYPE_CPL, 0),
                (u32::from(c.cfg.requester_id) << 16) | (0b001 << 13) | 4,
                (0x0010 << 16) | (0x77 << 8) | (ID_MAGIC & 0x7c),
                0,
            ];
            ensure!(
                cpl.hdr == want && cpl.data.is_empty(),
                "UR completion {:08x?} (+{} bytes), expected {want:08x?}",
                cpl.hdr,
                cpl.data.len()
            );
            // still answering afterwards
            let m = c.read32(ID_MAGIC)?;
            ensure!(m == 0x524e_4943, "magic after the UR: {m:#x}");
            c.cycles(200)?;
            no_stray_tx(c)
        });
    }
}

/// Byte mask of first byte enables.
fn be_mask(fbe: u8) -> u32 {
    (0..4)
        .filter(|b| fbe >> b & 1 != 0)
        .fold(0, |m, b| m | 0xff << (8 * b))
}

/// A random first byte enable, mostly all four; 0 (a zero-length
/// request) now and then.
fn rand_fbe(rng: &mut ChaCha8Rng) -> u8 {
    if rng.gen_bool(0.7) {
        0xf
    } else {
        rng.gen_range(0..16)
    }
}

#[test]
fn mmio_write_then_read_back() {
    if skip() {
        return;
    }
    for seed in 10..=15u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut cfg = CardConfig::new(seed);
        cfg.rx_gap = [0.0, 0.1, 0.4, 0.7][rng.gen_range(0..4)];
        cfg.tx_stall = [0.0, 0.3, 0.6, 0.9][rng.gen_range(0..4)];
        cfg.tbuf_max = rng.gen_range(1..=28);
        cfg.tbuf_drain = rng.gen_range(0.05..0.9);
        cfg.core_phase_ps = rng.gen_range(0..16) * 1_000;
        with_card(cfg, |c| {
            // reset values
            let mut regs: HashMap<u32, u32> = HashMap::new();
            for &(off, _, reset) in &RW_REGS {
                let v = c.read32(off)?;
                ensure!(
                    v == reset,
                    "{off:#x} after reset: {v:#010x}, expected {reset:#010x}"
                );
                regs.insert(off, reset);
            }
            let ids = id_expect(Variant::Cross);
            let mut reads = 0usize;
            let mut writes = 0usize;
            for batch in 0..400 {
                // a batch of requests queued back to back: writes (posted)
                // and reads; each read must see every write before it
                let mut want: HashMap<u8, (Tlp, u32, u32)> = HashMap::new();
                let mut tag = 0u8;
                let n = rng.gen_range(1..=40);
                let pattern = rng.gen_range(0..5);
                let mut last_write = None;
                for k in 0..n {
                    let (off, bits, _) = RW_REGS[rng.gen_range(0..RW_REGS.len())];
                    // 0: random mix; 1: every write followed by a read of
                    // the same register; others: writes first, then reads
                    let write = match pattern {
                        0 => rng.gen_bool(0.5),
                        1 => k % 2 == 0,
                        _ => k < n / 2,
                    };
                    if pattern == 1 && k % 2 == 1 {
                        // read back the register just written
                        let off = last_write.unwrap_or(off);
                        let fbe = rand_fbe(&mut rng);
                        let t = mmio_read(off, rng.gen(), tag, fbe);
                        want.insert(tag, (t.clone(), regs[&off], be_mask(fbe)));
                        tag += 1;
                        c.send(t);
                        continue;
                    }
                    if write {
                        let v: u32 = rng.gen();
                        let fbe = if rng.gen_bool(0.03) {
                            0
                        } else {
                            rand_fbe(&mut rng)
                        };
                        let m = be_mask(fbe) & bits;
                        let r = regs.get_mut(&off).unwrap();
                        *r = (*r & !m) | (v & m);
                        c.send(mmio_write(off, v, rng.gen(), fbe));
                        last_write = Some(off);
                        writes += 1;
                    } else if rng.gen_bool(0.15) {
                        let (off, v) = ids[rng.gen_range(0..ids.len())];
                        let t = mmio_read(off, rng.gen(), tag, 0xf);
                        want.insert(tag, (t.clone(), v, !0));
                        tag += 1;
                        c.send(t);
                    } else {
                        let fbe = rand_fbe(&mut rng);
                        let t = mmio_read(off, rng.gen(), tag, fbe);
                        want.insert(tag, (t.clone(), regs[&off], be_mask(fbe)));
                        tag += 1;
                        c.send(t);
                    }
                }
                let nr = want.len();
                reads += nr;
                c.run_until(
                    400 * n as u64 + 2000,
                    &format!("{nr} completions of batch {batch}"),
                    |c| c.tx.len() >= nr && c.rx_idle(),
                )?;
                c.cycles(rng.gen_range(0..40))?;
                for (at, cpl) in c.tx.drain(..).collect::<Vec<_>>() {
                    let tag = (cpl.hdr[2] >> 8) as u8;
                    let Some((req, v, mask)) = want.remove(&tag) else {
                        return Err(Fail(format!(
                            "batch {batch}: completion {:08x?} at cycle {at}: unexpected tag",
                            cpl.hdr
                        )));
                    };
                    let got = check_cpl(&req, &cpl, c.cfg.requester_id)
                        .map_err(|Fail(m)| Fail(format!("batch {batch}: {m}")))?;
                    ensure!(
                        (got ^ v) & mask == 0,
                        "batch {batch}: read of {:#x} (tag {tag}, first BE {:#x}) completed at \
                         cycle {at} with {got:#010x}, expected {v:#010x} (byte mask {mask:#010x})",
                        req.hdr[2] & 0xffff,
                        req.hdr[1] & 0xf
                    );
                }
                ensure!(
                    want.is_empty(),
                    "batch {batch}: reads never completed: {:?}",
                    want.keys()
                );
                no_stray_tx(c)?;
            }
            // and the final values, one by one
            for &(off, _, _) in &RW_REGS {
                let v = c.read32(off)?;
                ensure!(
                    v == regs[&off],
                    "{off:#x} at the end: {v:#010x}, expected {:#010x}",
                    regs[&off]
                );
            }
            eprintln!(
                "seed {seed}: {reads} reads, {writes} writes in {} pcie cycles",
                c.cycle
            );
            ensure!(
                reads > 1000 && writes > 1000,
                "only {reads} reads and {writes} writes"
            );
            Ok(())
        });
    }
}

// queue block (hw/regs/rnic_csr.rdl, queue_block)
const Q_SEL: u32 = 0x110;
const Q_BASE_LO: u32 = 0x114;
const Q_BASE_HI: u32 = 0x118;
const Q_SIZE: u32 = 0x11c;
const Q_CQN: u32 = 0x120;
const Q_CMD: u32 = 0x124;
const Q_SQ_STATE: u32 = 0x128;
const Q_CQ_STATE: u32 = 0x12c;
const SQ_DB: u32 = 0x130;
const CQ_ARM: u32 = 0x138;
const ERR_COUNT: u32 = 0x144;
const CMD_ENABLE_SQ: u32 = 1;
const CMD_ENABLE_CQ: u32 = 3;
// hw/formats/rnic_formats.rdl
const WQE_SIZE: u64 = 64;
const CQE_SIZE: u64 = 32;
const OP_LOCAL_DMA_COPY: u8 = 0x80;
const WC_LOCAL_DMA_COPY: u8 = 0x40;
const FLAG_SIGNALED: u8 = 0x01; // byte 1, bit 0

fn queue_cmd(c: &mut Card, qn: u32, cmd: u32, base: u64, entries: u32, cqn: u32) {
    c.write32(Q_SEL, qn);
    c.write32(Q_BASE_LO, base as u32);
    c.write32(Q_BASE_HI, (base >> 32) as u32);
    c.write32(Q_SIZE, entries);
    c.write32(Q_CQN, cqn);
    c.write32(Q_CMD, cmd);
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().unwrap())
}

/// LOCAL_DMA_COPY work requests through the whole path: the core fetches
/// the WQEs (MemRd, answered by the host model with split completions),
/// reads the source (MemRd), writes the destination (MemWr) and then the
/// CQE (MemWr), and raises an MSI for the armed CQ. Every request is
/// checked against the card's PCIe settings (requester ID, max payload,
/// max read request, 4 KiB boundaries, byte enables, tags).
#[test]
fn dma_local_copy_through_the_card() {
    if skip() {
        return;
    }
    for seed in 30..=37u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut cfg = CardConfig::new(seed);
        cfg.rx_gap = [0.0, 0.2, 0.5][rng.gen_range(0..3)];
        cfg.tx_stall = [0.0, 0.3, 0.6][rng.gen_range(0..3)];
        cfg.core_phase_ps = rng.gen_range(0..16) * 1_000;
        // max payload 128/256, max read request 128..512
        cfg.max_payload = rng.gen_range(0..=1);
        cfg.max_read_req = rng.gen_range(0..=2);
        // CARD_TRACE=1: print every TLP the card sends
        let trace = std::env::var_os("CARD_TRACE").is_some();
        with_card(cfg, |c| {
            let mut mem = HostMem::new(seed);
            mem.rcb = if rng.gen_bool(0.5) { 64 } else { 128 };
            let cq_base: u64 = 0x8000_0000;
            let sq_base: u64 = 0x1_2345_6000;
            let entries = 16u32;
            queue_cmd(c, 0, CMD_ENABLE_CQ, cq_base, entries, 0);
            queue_cmd(c, 0, CMD_ENABLE_SQ, sq_base, entries, 0);
            c.write32(CQ_ARM, 0);
            let e = c.read32(ERR_COUNT)?;
            ensure!(e == 0, "queue commands refused: err_count {e}");
            c.write32(Q_SEL, 0);
            let st = c.read32(Q_CQ_STATE)?;
            ensure!(
                st >> 16 & 0b111 == 0b111,
                "q_cq_state {st:#010x}: SQ/CQ enabled and CQ armed expected"
            );
            // the work: copies of random lengths and alignments, sources
            // above and below 4 GiB (4DW and 3DW requests)
            let n = rng.gen_range(3..=8usize);
            let mut wrs = Vec::new();
            for k in 0..n {
                let len = if k == 0 {
                    4
                } else {
                    rng.gen_range(1..=1500u32)
                };
                let src_hi: u64 = if rng.gen_bool(0.5) {
                    0x2_0000_0000
                } else {
                    0x4000_0000
                };
                let src = src_hi + k as u64 * 0x10_0000 + rng.gen_range(0..0x2000);
                let dst = 0x6000_0000 + k as u64 * 0x10_0000 + rng.gen_range(0..0x2000);
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                mem.write(src, &data);
                let wr_id: u64 = rng.gen();
                let mut w = [0u8; WQE_SIZE as usize];
                w[0] = OP_LOCAL_DMA_COPY;
                w[1] = FLAG_SIGNALED;
                w[4..8].copy_from_slice(&len.to_le_bytes());
                w[8..16].copy_from_slice(&wr_id.to_le_bytes());
                w[16..24].copy_from_slice(&src.to_le_bytes());
                w[24..32].copy_from_slice(&dst.to_le_bytes());
                mem.write(sq_base + k as u64 * WQE_SIZE, &w);
                wrs.push((wr_id, src, dst, data));
            }
            c.write32(SQ_DB, n as u32); // qn 0, producer index n
                                        // serve the card's DMA until every CQE is in the ring
            let t0 = c.cycle;
            let done = |mem: &HostMem| {
                (0..n as u64).all(|k| mem.read(cq_base + k * CQE_SIZE + 31, 1)[0] & 1 == 1)
            };
            while !done(&mem) {
                ensure!(
                    c.cycle - t0 < 400_000,
                    "pcie cycle {}: {} of {n} CQEs after {} cycles ({} requests served)",
                    c.cycle,
                    (0..n as u64)
                        .filter(|k| mem.read(cq_base + k * CQE_SIZE + 31, 1)[0] & 1 == 1)
                        .count(),
                    c.cycle - t0,
                    mem.log.len()
                );
                c.step()?;
                while let Some((at, t)) = c.tx.pop_front() {
                    if trace {
                        eprintln!("{at}: {:08x?} +{}", t.hdr, t.data.len());
                    }
                    mem.serve(c, &t)
                        .map_err(|Fail(m)| Fail(format!("pcie cycle {at}: {m}")))?;
                }
            }
            let t_dma = c.cycle - t0;
            // let everything settle (MSI, late writes), serving on
            for _ in 0..2000 {
                c.step()?;
                while let Some((at, t)) = c.tx.pop_front() {
                    mem.serve(c, &t)
                        .map_err(|Fail(m)| Fail(format!("pcie cycle {at}: {m}")))?;
                }
            }
            for (k, (wr_id, _, dst, data)) in wrs.iter().enumerate() {
                let got = mem.read(*dst, data.len());
                if &got != data {
                    let at = got.iter().zip(data).position(|(a, b)| a != b);
                    return Err(Fail(format!(
                        "copy {k}: destination differs from the source ({} bytes, first \
                         difference at byte {at:?})",
                        data.len()
                    )));
                }
                let cqe = mem.read(cq_base + k as u64 * CQE_SIZE, CQE_SIZE as usize);
                ensure!(
                    le64(&cqe[0..]) == *wr_id
                        && le32(&cqe[8..]) == data.len() as u32
                        && le32(&cqe[16..]) == 0
                        && cqe[20] == WC_LOCAL_DMA_COPY
                        && cqe[21] == 0
                        && u16::from_le_bytes([cqe[22], cqe[23]]) == k as u16
                        && cqe[31] & 1 == 1,
                    "CQE {k}: {cqe:02x?} (wr_id {wr_id:#x}, {} bytes expected)",
                    data.len()
                );
            }
            // nothing written outside the destinations and the CQ ring,
            // and each CQE written after its copy's data
            let mut cqe_at = vec![usize::MAX; n];
            for (i, &(read, a, len)) in mem.log.iter().enumerate() {
                if read {
                    continue;
                }
                if a >= cq_base && a < cq_base + u64::from(entries) * CQE_SIZE {
                    let k = ((a - cq_base) / CQE_SIZE) as usize;
                    if k < n && cqe_at[k] == usize::MAX {
                        cqe_at[k] = i;
                    }
                    continue;
                }
                let hit = wrs.iter().position(|(_, _, d, data)| {
                    a + len as u64 > *d & !3 && a < (*d + data.len() as u64 + 3) & !3
                });
                ensure!(
                    hit.is_some(),
                    "write of {len} bytes at {a:#x} outside every destination"
                );
            }
            for (i, &(read, a, len)) in mem.log.iter().enumerate() {
                if read {
                    continue;
                }
                for (k, (_, _, d, data)) in wrs.iter().enumerate() {
                    if a + len as u64 > *d && a < *d + data.len() as u64 {
                        ensure!(
                            i < cqe_at[k],
                            "copy {k}: data written at {a:#x} after its CQE"
                        );
                    }
                }
            }
            ensure!(!c.msi.is_empty(), "no MSI for the armed CQ");
            // the queue state over MMIO once the DMA is quiet
            c.write32(Q_SEL, 0);
            let st = c.read32(Q_SQ_STATE)?;
            ensure!(
                st & 0xffff == n as u32 && st >> 16 == n as u32,
                "q_sq_state {st:#010x}: pi and ci {n} expected"
            );
            let st = c.read32(Q_CQ_STATE)?;
            ensure!(
                st & 0xffff == n as u32,
                "q_cq_state {st:#010x}: cq_pi {n} expected"
            );
            let e = c.read32(ERR_COUNT)?;
            ensure!(e == 0, "err_count {e} after the copies");
            eprintln!(
                "seed {seed}: {n} copies ({} bytes) in {t_dma} pcie cycles, {} DMA requests, \
                 {} MSIs",
                wrs.iter().map(|w| w.3.len()).sum::<usize>(),
                mem.log.len(),
                c.msi.len()
            );
            ensure!(c.tx.is_empty(), "TLPs after the last read: {:08x?}", c.tx);
            Ok(())
        });
    }
}
