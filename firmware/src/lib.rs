//! rnic firmware images, the board table and the flash layout.
//!
//! - [`image`]: the image file: a 512-byte header (magic, format version,
//!   board and FPGA part, build version, git hash, build knobs, bitstream
//!   length, CRC-32 and SHA-256, header CRC) followed by the bitstream.
//! - [`board`]: the boards rnic knows, read from `boards/boards.json` (part,
//!   build flow, flash chip, slot layout, bitstream kind); one table,
//!   shared by images, the flashing tools and the FPGA build flow.
//! - [`layout`]: where things live in the configuration flash: the golden
//!   and update slots (bitstream at the slot start, image header in the
//!   slot's last sector, written last) and the boot record.
//!
//! Nothing here touches a device; `rnic-flash` writes these to flash and
//! the simulator's configuration loader reads them back.

pub mod board;
pub mod image;
pub mod layout;

pub use board::{
    board, board_by_id, board_by_name, boards, BitstreamKind, Board, BoardTable, FlashChip,
    ImageTarget, Kind, TableError, UnknownBoard,
};
pub use image::{BuildInfo, Header, Image, ImageError, HEADER_LEN, MAGIC};
pub use layout::{BootRecord, Layout, Slot, SlotId, BOOT_RECORD_LEN};
