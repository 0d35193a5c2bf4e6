//! Slots, images and the boot record on top of [`SpiNor`].

use rnic_device::Device;
use rnic_firmware::{
    Board, BootRecord, Header, Image, Layout, SlotId, BOOT_RECORD_LEN, HEADER_LEN,
};
use serde::Serialize;

use crate::nor::{FlashError, SpiNor};

/// Steps of a slot write, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The boot record named the slot being written: point it at golden.
    BootToGolden,
    /// Erase the slot's trailer: from here on the slot reads as invalid.
    Invalidate,
    Erase,
    Program,
    Verify,
    /// Program and read back the trailer: the slot becomes valid.
    Commit,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::BootToGolden => "boot record to golden",
            Phase::Invalidate => "invalidate",
            Phase::Erase => "erase",
            Phase::Program => "program",
            Phase::Verify => "verify",
            Phase::Commit => "commit",
        }
    }
}

/// Progress of a long operation: `done` of `total` bytes of `phase`.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

/// What [`write_slot`] did, with the cycle (`Device::now`) each phase began.
#[derive(Debug, Clone, Serialize)]
pub struct WriteReport {
    pub slot: SlotId,
    pub bytes: u64,
    pub phases: Vec<(Phase, u64)>,
    pub start_cycle: u64,
    pub end_cycle: u64,
}

/// What a slot holds.
#[derive(Debug, Clone, Serialize)]
pub struct SlotState {
    pub slot: SlotId,
    pub base: u64,
    pub size: u64,
    /// The header in the trailer, or why there is none.
    pub header: Result<Header, String>,
    /// With a content check: whether the bitstream matches the header.
    pub content: Option<Result<(), String>>,
}

impl SlotState {
    pub fn valid(&self) -> bool {
        self.header.is_ok() && !matches!(self.content, Some(Err(_)))
    }
}

/// The board's slots; an estimate-only target has none.
fn layout(board: &Board) -> Result<&Layout, FlashError> {
    Ok(&board.image_target()?.layout)
}

fn erased(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0xFF)
}

/// Read a slot's trailer and, with `check_content`, its bitstream.
pub fn slot_state<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
    slot: SlotId,
    check_content: bool,
) -> Result<SlotState, FlashError> {
    let s = layout(board)?.slot(slot);
    let mut t = vec![0u8; HEADER_LEN];
    nor.read(s.trailer(), &mut t)?;
    let header = if erased(&t) {
        Err("no image (trailer erased: empty, or a write that did not finish)".to_string())
    } else {
        Header::parse(&t)
            .map_err(|e| format!("invalid trailer: {e} (a write that did not finish)"))
            .and_then(|h| {
                if h.bitstream_len > s.max_bitstream() {
                    Err(format!(
                        "invalid trailer: bitstream length {} exceeds the slot",
                        h.bitstream_len
                    ))
                } else {
                    Ok(h)
                }
            })
    };
    let content = match (&header, check_content) {
        (Ok(h), true) => {
            let mut b = vec![0u8; h.bitstream_len as usize];
            nor.read(s.base, &mut b)?;
            Some(h.check_bitstream(&b).map_err(|e| e.to_string()))
        }
        _ => None,
    };
    Ok(SlotState {
        slot,
        base: s.base,
        size: s.size,
        header,
        content,
    })
}

/// The image a slot holds (header + bitstream), checked.
pub fn read_slot_image<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
    slot: SlotId,
) -> Result<Image, FlashError> {
    let st = slot_state(nor, board, slot, false)?;
    let h = st.header.map_err(FlashError::Arg)?;
    let mut b = vec![0u8; h.bitstream_len as usize];
    nor.read(layout(board)?.slot(slot).base, &mut b)?;
    h.check_bitstream(&b)?;
    Ok(Image {
        header: h,
        bitstream: b,
    })
}

/// The boot record, or why there is none.
pub fn read_boot_record<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
) -> Result<Result<BootRecord, String>, FlashError> {
    let mut b = [0u8; BOOT_RECORD_LEN];
    nor.read(layout(board)?.boot_record, &mut b)?;
    Ok(BootRecord::parse(&b))
}

/// Point the boot record at `slot` (erase its sector, program it, read
/// it back).
pub fn set_boot<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
    slot: SlotId,
) -> Result<BootRecord, FlashError> {
    let seq = match read_boot_record(nor, board)? {
        Ok(r) => r.seq.wrapping_add(1),
        Err(_) => 1,
    };
    let rec = BootRecord { slot, seq };
    let a = layout(board)?.boot_record;
    nor.erase_sector(a)?;
    let bytes = rec.to_bytes();
    nor.program(a, &bytes, |_| {})?;
    nor.verify(a, &bytes, |_| {})?;
    Ok(rec)
}

/// Write `image` to `slot`: refuse a bad image before anything is erased,
/// then invalidate the slot (erase its trailer), erase and program the
/// bitstream, read it back, and commit (program and read back the
/// trailer). The golden slot is refused unless `nor` was unprotected.
pub fn write_slot<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
    slot: SlotId,
    image: &Image,
    progress: &mut dyn FnMut(Progress),
) -> Result<WriteReport, FlashError> {
    let s = layout(board)?.slot(slot);
    image.header.check_bitstream(&image.bitstream)?;
    image
        .header
        .check_for(board, slot.name(), s.max_bitstream(), &image.bitstream)?;
    let trailer = image.header.to_bytes()?;
    let dev = nor.device();
    let start = dev.now();
    let mut phases = Vec::new();
    let mark = |p: Phase, phases: &mut Vec<(Phase, u64)>| {
        phases.push((p, dev.now()));
        tracing::info!(phase = p.name(), cycle = dev.now(), "flash write");
    };
    let len = image.bitstream.len() as u64;
    let sector = u64::from(nor.chip().sector);
    let erase_len = len.div_ceil(sector) * sector;

    if slot == SlotId::Update {
        if let Ok(r) = read_boot_record(nor, board)? {
            if r.slot == slot {
                mark(Phase::BootToGolden, &mut phases);
                set_boot(nor, board, SlotId::Golden)?;
            }
        }
    }
    mark(Phase::Invalidate, &mut phases);
    nor.erase_sector(s.trailer())?;

    mark(Phase::Erase, &mut phases);
    progress(Progress {
        phase: Phase::Erase,
        done: 0,
        total: erase_len,
    });
    nor.erase_range(s.base, erase_len, |d| {
        progress(Progress {
            phase: Phase::Erase,
            done: d,
            total: erase_len,
        })
    })?;

    mark(Phase::Program, &mut phases);
    nor.program(s.base, &image.bitstream, |d| {
        if d % 4096 == 0 || d == len {
            progress(Progress {
                phase: Phase::Program,
                done: d,
                total: len,
            })
        }
    })?;

    mark(Phase::Verify, &mut phases);
    nor.verify(s.base, &image.bitstream, |d| {
        progress(Progress {
            phase: Phase::Verify,
            done: d,
            total: len,
        })
    })?;

    mark(Phase::Commit, &mut phases);
    nor.program(s.trailer(), &trailer, |_| {})?;
    nor.verify(s.trailer(), &trailer, |_| {})?;
    Ok(WriteReport {
        slot,
        bytes: len,
        phases,
        start_cycle: start,
        end_cycle: dev.now(),
    })
}

/// Compare a slot with `image` (trailer and bitstream).
pub fn verify_slot<D: Device + ?Sized>(
    nor: &SpiNor<'_, D>,
    board: &Board,
    slot: SlotId,
    image: &Image,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), FlashError> {
    let s = layout(board)?.slot(slot);
    let len = image.bitstream.len() as u64;
    nor.verify(s.trailer(), &image.header.to_bytes()?, |_| {})?;
    nor.verify(s.base, &image.bitstream, |d| {
        progress(Progress {
            phase: Phase::Verify,
            done: d,
            total: len,
        })
    })
}
