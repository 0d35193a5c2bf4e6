//! Memory regions: registration in the NIC's MR table.

use std::rc::Rc;

use bitflags::bitflags;
use rnic_device::{Device, DmaBuffer};

use crate::context::{Context, Shared};
use crate::error::{Result, VerbsError};
use crate::pd::{PdInner, ProtectionDomain};
use crate::wr::{RdmaInfo, Sge};

bitflags! {
    /// Access rights of a memory region or of a QP's remote requests, as
    /// libibverbs' `enum ibv_access_flags`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct AccessFlags: u32 {
        const LOCAL_WRITE = 1;
        const REMOTE_WRITE = 2;
        const REMOTE_READ = 4;
        const REMOTE_ATOMIC = 8;
    }
}

impl AccessFlags {
    /// Checks flags for `ibv_reg_mr`: no unknown bits, and remote write or
    /// atomic access only together with local write.
    pub fn validate_for_mr(self) -> Result<()> {
        if self.bits() & !Self::all().bits() != 0 {
            return Err(VerbsError::InvalidAccess {
                flags: self.bits(),
                reason: "unknown access bits",
            });
        }
        if self.intersects(Self::REMOTE_WRITE | Self::REMOTE_ATOMIC)
            && !self.contains(Self::LOCAL_WRITE)
        {
            return Err(VerbsError::InvalidAccess {
                flags: self.bits(),
                reason: "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE",
            });
        }
        Ok(())
    }
}

/// A registered memory region (`ibv_mr`). It keeps its buffer alive (the NIC
/// may reach it until deregistration) and is deregistered when dropped.
pub struct MemoryRegion<D: Device> {
    ctx: Rc<Shared<D>>,
    pd: Rc<PdInner<D>>,
    buf: DmaBuffer,
    offset: usize,
    index: u16,
    key: u32,
    addr: u64,
    length: usize,
    access: AccessFlags,
    registered: bool,
}

impl<D: Device> Context<D> {
    /// `ibv_reg_mr`: registers `buf[offset..offset + len]` with `access`.
    ///
    /// [`AccessFlags::REMOTE_ATOMIC`] (with `LOCAL_WRITE`, as ibverbs
    /// requires) is taken on a build that executes atomics (`id.caps` bit
    /// 9, ATOMIC_EN) and refused with [`VerbsError::InvalidAccess`] on any
    /// other.
    ///
    /// The region's [`addr`](MemoryRegion::addr) is the host virtual address
    /// of its first byte (`buf.as_ptr() + offset`); SGEs and RETHs name bytes
    /// by that address, and the NIC translates it to the bus address with
    /// the MR table entry (va, len, bus address, pd, access, key).
    pub fn reg_mr(
        &self,
        pd: &ProtectionDomain<D>,
        buf: &DmaBuffer,
        offset: usize,
        len: usize,
        access: AccessFlags,
    ) -> Result<MemoryRegion<D>> {
        pd.check_ctx(self)?;
        access.validate_for_mr()?;
        if access.contains(AccessFlags::REMOTE_ATOMIC)
            && !crate::serves_atomic(self.shared.nic.id().caps)
        {
            return Err(VerbsError::InvalidAccess {
                flags: access.bits(),
                reason: "REMOTE_ATOMIC: this NIC executes no atomics \
                         (id.caps bit 9 clear: not an ATOMIC_EN build)",
            });
        }
        if len == 0 {
            return Err(VerbsError::ZeroLength);
        }
        match offset.checked_add(len) {
            Some(end) if end <= buf.len() => {}
            _ => {
                return Err(VerbsError::OutOfRange {
                    offset,
                    len,
                    buf_len: buf.len(),
                })
            }
        }
        let len32 = u32::try_from(len).map_err(|_| VerbsError::TooLong(len))?;
        let addr = (buf.as_ptr() as u64).wrapping_add(offset as u64);
        let bus = buf.bus_addr().wrapping_add(offset as u64);
        // Refused here, before any register write, beyond the NIC's table
        // (`DeviceAttr::max_mr`).
        let (index, key) = {
            let mut t = self.shared.mrs.borrow_mut();
            let entries = t.entries();
            t.alloc().ok_or(VerbsError::MrTableFull(entries))?
        };
        let pdn = pd.pd_num();
        let res = self.shared.command(|io| {
            let mr = io.csr().mr();
            mr.mr_sel().try_write(|r| r.set_index(index))?;
            mr.mr_key().try_write(|r| r.set_key(key))?;
            mr.mr_va_lo().try_write(|r| r.set_addr(addr as u32))?;
            mr.mr_va_hi()
                .try_write(|r| r.set_addr((addr >> 32) as u32))?;
            mr.mr_len().try_write(|r| r.set_len(len32))?;
            mr.mr_bus_lo().try_write(|r| r.set_addr(bus as u32))?;
            mr.mr_bus_hi()
                .try_write(|r| r.set_addr((bus >> 32) as u32))?;
            mr.mr_attr().try_write(|r| {
                r.set_pd(pdn);
                // access[19:16] holds ibv_access_flags as they are: bit 0
                // LOCAL_WRITE, 1 REMOTE_WRITE, 2 REMOTE_READ, 3 REMOTE_ATOMIC
                r.set_access(access.bits() as u8);
            })?;
            mr.mr_cmd().try_write(|r| r.set_op(MR_CMD_REGISTER))
        });
        if let Err(e) = res {
            self.shared.mrs.borrow_mut().free(index);
            return Err(e);
        }
        Ok(MemoryRegion {
            ctx: self.shared.clone(),
            pd: pd.inner.clone(),
            buf: buf.clone(),
            offset,
            index,
            key,
            addr,
            length: len,
            access,
            registered: true,
        })
    }

    /// `ibv_dereg_mr`.
    pub fn dereg_mr(&self, mr: MemoryRegion<D>) -> Result<()> {
        if !Rc::ptr_eq(&mr.ctx, &self.shared) {
            return Err(VerbsError::ForeignObject("memory region"));
        }
        mr.dereg()
    }
}

const MR_CMD_REGISTER: u8 = 1;
const MR_CMD_DEREGISTER: u8 = 2;

impl<D: Device> MemoryRegion<D> {
    /// Local key, for SGEs. Bits 15:8 are the MR table index, bits 7:0 a
    /// generation, so a key of a deregistered region stays invalid.
    pub fn lkey(&self) -> u32 {
        self.key
    }

    /// Remote key, for the peer's RETHs (equal to the lkey).
    pub fn rkey(&self) -> u32 {
        self.key
    }

    /// Virtual address of the first byte (host virtual address).
    pub fn addr(&self) -> u64 {
        self.addr
    }

    pub fn length(&self) -> usize {
        self.length
    }

    pub fn access(&self) -> AccessFlags {
        self.access
    }

    pub fn pd_num(&self) -> u16 {
        self.pd.pdn
    }

    /// The registered buffer and the offset of the region in it.
    pub fn buffer(&self) -> (&DmaBuffer, usize) {
        (&self.buf, self.offset)
    }

    /// Bus address of the first byte (what the MR table translates to).
    pub fn bus_addr(&self) -> u64 {
        self.buf.bus_addr().wrapping_add(self.offset as u64)
    }

    /// A scatter/gather entry for bytes `offset..offset + length` of the
    /// region.
    pub fn sge(&self, offset: usize, length: u32) -> Result<Sge> {
        match offset.checked_add(length as usize) {
            Some(end) if end <= self.length => Ok(Sge {
                addr: self.addr + offset as u64,
                length,
                lkey: self.key,
            }),
            _ => Err(VerbsError::OutOfRange {
                offset,
                len: length as usize,
                buf_len: self.length,
            }),
        }
    }

    /// What a peer needs to RDMA-write at `offset` of the region.
    pub fn rdma_info(&self, offset: usize) -> Result<RdmaInfo> {
        if offset >= self.length {
            return Err(VerbsError::OutOfRange {
                offset,
                len: 0,
                buf_len: self.length,
            });
        }
        Ok(RdmaInfo {
            remote_addr: self.addr + offset as u64,
            rkey: self.key,
        })
    }

    /// `ibv_dereg_mr`: invalidates the table entry, then releases the
    /// buffer reference.
    pub fn dereg(mut self) -> Result<()> {
        self.dereg_inner()
    }

    fn dereg_inner(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        self.registered = false;
        let index = self.index;
        let res = self.ctx.command(|io| {
            let mr = io.csr().mr();
            mr.mr_sel().try_write(|r| r.set_index(index))?;
            mr.mr_cmd().try_write(|r| r.set_op(MR_CMD_DEREGISTER))
        });
        // The index is free for the host either way: a later registration
        // overwrites the entry with a new generation of the key.
        self.ctx.mrs.borrow_mut().free(index);
        res
    }
}

impl<D: Device> Drop for MemoryRegion<D> {
    fn drop(&mut self) {
        let _ = self.dereg_inner();
    }
}

impl<D: Device> std::fmt::Debug for MemoryRegion<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("length", &self.length)
            .field("lkey", &format_args!("{:#x}", self.key))
            .field("access", &self.access)
            .field("pd", &self.pd.pdn)
            .finish()
    }
}
