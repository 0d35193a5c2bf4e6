//! The sysfs backend: BAR0 through `/sys/bus/pci/devices/BDF/resource0`.
//!
//! Needs no driver and no IOMMU setup, only root (sysfs resource and
//! config files are root's). Register access is enough for `rnic info`,
//! `regs` and `flash`. DMA works only where nothing translates the
//! function's requests (no IOMMU, or an IOMMU in passthrough): buffers are
//! carved from locked huge pages by physical address ([`PhysPool`]);
//! otherwise `alloc_dma` refuses with the reason ("use vfio:BDF", or how to
//! reserve huge pages). Bus mastering is switched on at the first DMA
//! allocation, so `info` and `regs` never enable it. sysfs delivers no
//! interrupts: `wait_irq` is an error saying so (callers poll CQs).

use std::cell::Cell;
use std::fs::{self, OpenOptions};
use std::path::PathBuf;

use memmap2::{MmapOptions, MmapRaw};
use rnic_device::{Device, DeviceError, DmaBuffer, IrqWait};

use crate::clock::Clock;
use crate::config::{update_command, FileConfig, CMD_BUS_MASTER, CMD_MEMORY};
use crate::discover::{Function, Sysfs};
use crate::error::{PciError, Result};
use crate::id::{check_id_block, IdBlock};
use crate::mmio::Mmio;
use crate::physmem::PhysPool;

const ROOT_FIX: &str = "run as root (sysfs PCI resource and config files are root's)";

/// An rnic function reached through sysfs.
pub struct SysfsDevice {
    bdf: String,
    func: Function,
    bar: Mmio,
    _map: MmapRaw,
    config_path: PathBuf,
    enable_path: PathBuf,
    enabled_by_us: bool,
    bus_master_by_us: Cell<bool>,
    id: IdBlock,
    pool: PhysPool,
    clock: Clock,
}

impl SysfsDevice {
    /// Opens `bdf` under the sysfs root `RNIC_SYSFS_ROOT` or `/sys`.
    pub fn open(bdf: &str) -> Result<Self> {
        Self::open_in(&Sysfs::from_env(), bdf)
    }

    /// Opens `bdf` under `sysfs`: PCI IDs, driver and `resource0` checked,
    /// memory decoding enabled (`enable`), BAR0 mapped and its ID block
    /// checked before anything is written to BAR0.
    pub fn open_in(sysfs: &Sysfs, bdf: &str) -> Result<Self> {
        let bdf = crate::bdf(bdf)?;
        let func = sysfs.function(&bdf)?;
        func.check_sysfs()?;
        let dir = sysfs.device_dir(&bdf);
        let res = dir.join("resource0");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&res)
            .map_err(|e| PciError::open(res.display().to_string(), e, ROOT_FIX))?;
        let len = file
            .metadata()
            .map_err(|e| PciError::io(format!("reading {}", res.display()), e))?
            .len();
        let len = if len == 0 {
            func.bar0_len.unwrap_or(0)
        } else {
            len
        };
        // The ID check refuses a BAR0 smaller than the map; map what there is.
        let map = MmapOptions::new()
            .len(len as usize)
            .map_raw(&file)
            .map_err(|e| PciError::io(format!("mapping {}", res.display()), e))?;
        // SAFETY: `map` stays mapped while `Self` lives (field order drops
        // `bar` first); BAR0 is only reached through `Mmio`.
        let bar = unsafe { Mmio::new(map.as_mut_ptr(), map.len()) };

        // Memory decoding must be on to read BAR0: `enable` (the kernel's
        // pci_enable_device) is a request to the kernel, not a BAR write.
        let enable_path = dir.join("enable");
        let enabled = fs::read_to_string(&enable_path)
            .map_err(|e| PciError::open(enable_path.display().to_string(), e, ROOT_FIX))?;
        let enabled_by_us = enabled.trim() == "0";
        if enabled_by_us {
            fs::write(&enable_path, "1")
                .map_err(|e| PciError::open(enable_path.display().to_string(), e, ROOT_FIX))?;
        }
        let mut dev = Self {
            bdf: bdf.clone(),
            func,
            bar,
            _map: map,
            config_path: dir.join("config"),
            enable_path,
            enabled_by_us,
            bus_master_by_us: Cell::new(false),
            id: IdBlock {
                block_type: 0,
                version: 0,
                magic: 0,
            },
            pool: PhysPool::new(),
            clock: Clock::new(),
        };
        // Dropping `dev` on error undoes `enable`.
        dev.id = check_id_block(&bdf, &dev.bar)?;
        Ok(dev)
    }

    /// The ID block words read at open.
    pub fn id_block(&self) -> IdBlock {
        self.id
    }

    pub fn function(&self) -> &Function {
        &self.func
    }

    fn config(&self) -> Result<FileConfig> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.config_path)
            .map_err(|e| PciError::open(self.config_path.display().to_string(), e, ROOT_FIX))?;
        Ok(FileConfig { file, base: 0 })
    }
}

impl Drop for SysfsDevice {
    fn drop(&mut self) {
        if self.bus_master_by_us.get() {
            if let Ok(c) = self.config() {
                let _ = update_command(&c, 0, CMD_BUS_MASTER);
            }
        }
        if self.enabled_by_us {
            let _ = fs::write(&self.enable_path, "0");
        }
    }
}

impl Device for SysfsDevice {
    crate::clock::hardware_device_common!();

    fn name(&self) -> String {
        format!("sysfs:{}", self.bdf)
    }

    fn alloc_dma(&self, len: usize) -> rnic_device::Result<DmaBuffer> {
        self.func.check_phys_dma()?;
        let buf = self.pool.alloc(len)?;
        if !self.bus_master_by_us.get() {
            let c = self.config()?;
            update_command(&c, CMD_MEMORY | CMD_BUS_MASTER, 0).map_err(|e| {
                DeviceError::Other(format!("{}: enabling bus mastering: {e}", self.bdf))
            })?;
            self.bus_master_by_us.set(true);
        }
        Ok(buf)
    }

    /// Without an IOMMU nothing can be unmapped: the memory leaves the
    /// device's reach only by the device not being told about it. The
    /// slots return to the pool when the last clone of the buffer goes.
    fn free_dma(&self, _buf: &DmaBuffer) -> rnic_device::Result<()> {
        Ok(())
    }

    fn wait_irq(&self, _vector: u32, _budget: u64) -> rnic_device::Result<IrqWait> {
        Err(DeviceError::Other(format!(
            "sysfs:{} has no interrupts (sysfs delivers no MSI); poll the completion queue, or use vfio:{}",
            self.bdf, self.bdf
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeSysfs;

    const BDF: &str = "0000:03:00.0";

    fn rnic_tree() -> FakeSysfs {
        let f = FakeSysfs::new();
        f.add(BDF, 0x1234, 0x4e49, 0x020000).bar0(
            BDF,
            &[
                (0x00, rnic_regs::BLOCK_TYPE_ID),
                (0x04, 0x0001_0000),
                (0x0c, rnic_regs::MAGIC),
                (0x20, 16),
            ],
        );
        f
    }

    #[test]
    fn registers_through_resource0() {
        let f = rnic_tree();
        let d = SysfsDevice::open_in(&f.sysfs(), BDF).unwrap();
        assert_eq!(d.name(), "sysfs:0000:03:00.0");
        assert_eq!(d.bar_len(), 0x10000);
        assert_eq!(d.read32(0x0c).unwrap(), rnic_regs::MAGIC);
        assert_eq!(d.read32(0x20).unwrap(), 16);
        d.write32(0x104, 0xabcd).unwrap();
        assert_eq!(d.read32(0x104).unwrap(), 0xabcd);
        assert!(d.read32(0x10000).is_err());
        let e = d.wait_irq(0, 100).unwrap_err().to_string();
        assert!(e.contains("has no interrupts"), "{e}");
        assert_eq!(d.clock_mhz(), 250.0);
        drop(d);
        let img = fs::read(f.dev(BDF).join("resource0")).unwrap();
        assert_eq!(img[0x104], 0xcd, "the write reached resource0");
    }

    #[test]
    fn refuses_a_non_rnic_before_writing() {
        let f = rnic_tree();
        // An rnic PCI id whose BAR0 holds no ID block.
        fs::write(f.dev(BDF).join("resource0"), vec![0u8; 0x10000]).unwrap();
        fs::write(f.dev(BDF).join("enable"), "0\n").unwrap();
        let e = SysfsDevice::open_in(&f.sysfs(), BDF).err().unwrap();
        assert!(matches!(e, PciError::BadMagic { .. }), "{e}");
        assert_eq!(
            fs::read(f.dev(BDF).join("resource0")).unwrap(),
            vec![0u8; 0x10000]
        );
        assert_eq!(
            fs::read_to_string(f.dev(BDF).join("enable")).unwrap(),
            "0",
            "enable undone"
        );

        // A virtio NIC is refused by its PCI id: nothing opened or written.
        f.add("0000:00:03.0", 0x1af4, 0x1041, 0x020000);
        fs::write(f.dev("0000:00:03.0").join("enable"), "0\n").unwrap();
        let e = SysfsDevice::open_in(&f.sysfs(), "00:03.0").err().unwrap();
        assert!(matches!(e, PciError::NotRnicId { .. }), "{e}");
        assert_eq!(
            fs::read_to_string(f.dev("0000:00:03.0").join("enable")).unwrap(),
            "0\n"
        );
    }

    #[test]
    fn refuses_a_small_bar_and_a_bound_driver() {
        let f = rnic_tree();
        let img = fs::read(f.dev(BDF).join("resource0")).unwrap();
        fs::write(f.dev(BDF).join("resource0"), &img[..0x400]).unwrap();
        let e = SysfsDevice::open_in(&f.sysfs(), BDF).err().unwrap();
        assert_eq!(
            e.to_string(),
            "0000:03:00.0: BAR0 is 0x400 bytes, the register map needs 0x800"
        );
        f.bind(BDF, "mlx5_core");
        let e = SysfsDevice::open_in(&f.sysfs(), BDF).err().unwrap();
        assert!(matches!(e, PciError::DriverBound { .. }), "{e}");
        assert!(SysfsDevice::open_in(&f.sysfs(), "bogus").is_err());
    }

    #[test]
    fn dma_is_refused_behind_an_iommu() {
        let f = rnic_tree();
        f.group(BDF, 4, "DMA-FQ");
        let d = SysfsDevice::open_in(&f.sysfs(), BDF).unwrap();
        let e = d.alloc_dma(4096).unwrap_err().to_string();
        assert!(e.ends_with("use vfio:0000:03:00.0"), "{e}");
        assert!(!d.bus_master_by_us.get());
    }

    /// No IOMMU: DMA from huge pages by physical address, bus mastering
    /// switched on at the first buffer and off again on drop. Without
    /// reserved huge pages the refusal says how to reserve them.
    #[test]
    fn dma_without_an_iommu() {
        let f = rnic_tree();
        let d = SysfsDevice::open_in(&f.sysfs(), BDF).unwrap();
        let cfg = || fs::read(f.dev(BDF).join("config")).unwrap()[4];
        match d.alloc_dma(8192) {
            Ok(b) => {
                assert_eq!(b.len(), 8192);
                assert_ne!(b.bus_addr(), 0);
                assert_eq!(cfg() & 0x06, 0x06, "memory and bus master on");
                d.free_dma(&b).unwrap();
                drop(d);
                assert_eq!(cfg() & 0x04, 0, "bus master off after drop");
            }
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("nr_hugepages") || e.contains("CAP_SYS_ADMIN"),
                    "{e}"
                );
                assert_eq!(cfg(), 0, "no bus mastering without DMA memory");
            }
        }
    }
}
