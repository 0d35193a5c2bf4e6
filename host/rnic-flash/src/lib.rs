//! The configuration flash of an rnic, through the flash register block
//! (`flash_block` in `hw/regs/rnic_csr.rdl`, served by
//! `hw/rtl/spi_flash_ctrl.v`).
//!
//! - [`SpiNor`]: SPI NOR commands over the NIC's command engine: JEDEC ID,
//!   read, sector / block erase, page program (quad data lanes, 4-byte
//!   addresses above 16 MiB). Every erase and program is checked against
//!   the protected range (the golden slot) first.
//! - [`write_slot`], [`verify_slot`], [`slot_state`], [`read_boot_record`],
//!   [`set_boot`]: the slot layout of `rnic-firmware` on top of it.

mod nor;
mod slots;

pub use nor::{FlashError, SpiNor, BUF_BYTES};
pub use slots::{
    read_boot_record, read_slot_image, set_boot, slot_state, verify_slot, write_slot, Phase,
    Progress, SlotState, WriteReport,
};
