//! Types of the generated register table ([`crate::generated_table`]).
//!
//! The data is generated from the SystemRDL map by `hw/regs/gen_table.py`;
//! these types are written by hand so that the generator only emits data.

/// Software or hardware access to a field, as SystemRDL spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// No access (`na`).
    Na,
    /// Read only (`r`).
    R,
    /// Write only (`w`).
    W,
    /// Read and write (`rw`).
    Rw,
    /// Write once (`w1`).
    W1,
    /// Read, and write once (`rw1`).
    Rw1,
}

impl Access {
    pub fn readable(self) -> bool {
        matches!(self, Access::R | Access::Rw | Access::Rw1)
    }

    pub fn writable(self) -> bool {
        matches!(self, Access::W | Access::Rw | Access::W1 | Access::Rw1)
    }

    /// The SystemRDL keyword (`r`, `rw`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Na => "na",
            Access::R => "r",
            Access::W => "w",
            Access::Rw => "rw",
            Access::W1 => "w1",
            Access::Rw1 => "rw1",
        }
    }
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One field of a register: bits `msb..=lsb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDesc {
    pub name: &'static str,
    pub msb: u8,
    pub lsb: u8,
    /// Software (host) access.
    pub sw: Access,
    /// Hardware (RTL) access.
    pub hw: Access,
    /// Reset value of the field (shifted down to bit 0), if it is a constant.
    pub reset: Option<u64>,
    /// Read side effect (`rclr`, `rset`, ...), if any.
    pub onread: Option<&'static str>,
    /// Write side effect (`woclr`, `wot`, ...), if any.
    pub onwrite: Option<&'static str>,
    /// The RTL gets a pulse when software writes the field.
    pub swmod: bool,
    pub desc: &'static str,
}

impl FieldDesc {
    pub fn width(&self) -> u32 {
        u32::from(self.msb - self.lsb) + 1
    }

    /// Mask of the field in place (not shifted down).
    pub fn mask(&self) -> u64 {
        let ones = if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        };
        ones << self.lsb
    }

    /// The field's value inside a register value, shifted down to bit 0.
    pub fn extract(&self, reg_value: u64) -> u64 {
        (reg_value & self.mask()) >> self.lsb
    }

    /// `reg_value` with this field replaced by `field_value` (truncated).
    pub fn insert(&self, reg_value: u64, field_value: u64) -> u64 {
        (reg_value & !self.mask()) | ((field_value << self.lsb) & self.mask())
    }

    /// Bit range as the register map writes it: `[31:16]` or `[3]`.
    pub fn bits(&self) -> String {
        if self.msb == self.lsb {
            format!("[{}]", self.lsb)
        } else {
            format!("[{}:{}]", self.msb, self.lsb)
        }
    }
}

/// One register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegDesc {
    /// Name inside its block (`sq_db`).
    pub name: &'static str,
    /// Byte offset in BAR0.
    pub offset: u64,
    /// Byte offset inside its block.
    pub block_offset: u64,
    /// Width in bits (always 32 in this map).
    pub width: u32,
    /// Software can read at least one field (write-only registers read as 0).
    pub readable: bool,
    /// Software can write at least one field.
    pub writable: bool,
    /// Reset value, if every field has a constant reset.
    pub reset: Option<u64>,
    pub desc: &'static str,
    pub fields: &'static [FieldDesc],
}

impl RegDesc {
    pub fn field(&self, name: &str) -> Option<&'static FieldDesc> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// One register block (a top-level child of the address map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDesc {
    /// Instance name (`queue`).
    pub name: &'static str,
    /// SystemRDL type name (`queue_block`).
    pub type_name: &'static str,
    /// Byte offset in BAR0 in this build of the map.
    pub offset: u64,
    /// Bytes spanned by the block's registers.
    pub size: u64,
    /// Block type (reset value of its `blk_type` register), as found by
    /// [`crate::discover`].
    pub block_type: Option<u32>,
    /// Block version (reset value of its `blk_version` register).
    pub version: Option<u32>,
    pub desc: &'static str,
    pub regs: &'static [RegDesc],
}

impl BlockDesc {
    pub fn reg(&self, name: &str) -> Option<&'static RegDesc> {
        self.regs.iter().find(|r| r.name == name)
    }
}

/// All blocks of the map.
pub fn blocks() -> &'static [BlockDesc] {
    crate::generated_table::BLOCKS
}

/// The block with this instance name (`"queue"`).
pub fn block(name: &str) -> Option<&'static BlockDesc> {
    blocks().iter().find(|b| b.name == name)
}

/// The block with this block type (`0x52490002`).
pub fn block_by_type(block_type: u32) -> Option<&'static BlockDesc> {
    blocks().iter().find(|b| b.block_type == Some(block_type))
}

/// A register by `block.reg` path (`"queue.sq_db"`).
pub fn reg(path: &str) -> Option<(&'static BlockDesc, &'static RegDesc)> {
    let (b, r) = path.split_once('.')?;
    let block = block(b)?;
    Some((block, block.reg(r)?))
}

/// Every register with its block, in address order.
pub fn registers() -> impl Iterator<Item = (&'static BlockDesc, &'static RegDesc)> {
    blocks()
        .iter()
        .flat_map(|b| b.regs.iter().map(move |r| (b, r)))
}
