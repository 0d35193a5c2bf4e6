//! VFIO in no-IOMMU mode, by raw ioctls.
//!
//! With `enable_unsafe_noiommu_mode` set, vfio-pci binds functions that
//! have no IOMMU and puts each in a group of its own, `/dev/vfio/noiommu-N`,
//! which only a container set to `VFIO_NOIOMMU_IOMMU` accepts (and only
//! with CAP_SYS_RAWIO). `pci-driver` opens neither, so this module does the
//! few ioctls the backend needs, with the uapi structs of rust-vmm's
//! `vfio-bindings`: container and group setup, the device file, region
//! info (config space and BAR0), reset, and MSI/MSI-X eventfds. There is no
//! DMA mapping in this mode: bus addresses are physical addresses, served
//! by [`crate::physmem`].

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::FileExt;

use vfio_bindings::bindings::vfio::{
    vfio_device_info, vfio_group_status, vfio_irq_info, vfio_irq_set, vfio_region_info,
    VFIO_API_VERSION, VFIO_BASE, VFIO_DEVICE_FLAGS_PCI, VFIO_DEVICE_FLAGS_RESET,
    VFIO_GROUP_FLAGS_VIABLE, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_IRQ_SET_DATA_EVENTFD,
    VFIO_IRQ_SET_DATA_NONE, VFIO_NOIOMMU_IOMMU, VFIO_TYPE,
};

use crate::error::{PciError, Result};
use crate::mmio::{check_access, Bar32};

/// `_IO(VFIO_TYPE, VFIO_BASE + n)`: VFIO's ioctls carry no size in their
/// number.
const fn vfio_io(n: u32) -> libc::c_ulong {
    ((VFIO_TYPE as u32) << 8 | (VFIO_BASE + n)) as libc::c_ulong
}
const GET_API_VERSION: libc::c_ulong = vfio_io(0);
const CHECK_EXTENSION: libc::c_ulong = vfio_io(1);
const SET_IOMMU: libc::c_ulong = vfio_io(2);
const GROUP_GET_STATUS: libc::c_ulong = vfio_io(3);
const GROUP_SET_CONTAINER: libc::c_ulong = vfio_io(4);
const GROUP_GET_DEVICE_FD: libc::c_ulong = vfio_io(6);
const DEVICE_GET_INFO: libc::c_ulong = vfio_io(7);
const DEVICE_GET_REGION_INFO: libc::c_ulong = vfio_io(8);
const DEVICE_GET_IRQ_INFO: libc::c_ulong = vfio_io(9);
const DEVICE_SET_IRQS: libc::c_ulong = vfio_io(10);
const DEVICE_RESET: libc::c_ulong = vfio_io(11);

/// An ioctl whose argument is a value or a pointer; -1 becomes the error.
///
/// # Safety
/// `arg` must be what `req` expects on `fd`.
unsafe fn ioctl(fd: &File, req: libc::c_ulong, arg: libc::c_ulong) -> io::Result<i32> {
    // SAFETY: the caller's contract.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn ptr<T>(v: &mut T) -> libc::c_ulong {
    v as *mut T as libc::c_ulong
}

fn sized<T: Default>(set: impl FnOnce(&mut T)) -> T {
    let mut v = T::default();
    set(&mut v);
    v
}

/// An open no-IOMMU VFIO device, with its group and container.
#[derive(Debug)]
pub struct RawVfio {
    device: File,
    // Kept open for the device's life: closing them detaches the device.
    _group: File,
    _container: File,
    info: vfio_device_info,
}

impl RawVfio {
    /// Opens `bdf` of group node `group_node` (`/dev/vfio/noiommu-N`).
    pub fn open(group_node: &str, bdf: &str) -> Result<Self> {
        let fix = "no-IOMMU VFIO needs root (CAP_SYS_RAWIO)";
        let rw = |p: &str| OpenOptions::new().read(true).write(true).open(p);
        let container =
            rw("/dev/vfio/vfio").map_err(|e| PciError::open("/dev/vfio/vfio", e, fix))?;
        let group = rw(group_node).map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => PciError::Unsupported(format!(
                "{group_node} is open in another process (another rnic, or a VM): close it first"
            )),
            _ => PciError::open(group_node, e, fix),
        })?;
        let err = |what: &str| {
            let what = format!("{bdf}: {what}");
            move |e| PciError::io(what, e)
        };
        // SAFETY: argument-less query.
        let api = unsafe { ioctl(&container, GET_API_VERSION, 0) }
            .map_err(err("VFIO_GET_API_VERSION"))?;
        if api != VFIO_API_VERSION as i32 {
            return Err(PciError::Unsupported(format!(
                "VFIO API version {api}, expected {VFIO_API_VERSION}"
            )));
        }
        // SAFETY: the extension number is passed by value.
        let ext = unsafe { ioctl(&container, CHECK_EXTENSION, VFIO_NOIOMMU_IOMMU.into()) }
            .map_err(err("VFIO_CHECK_EXTENSION"))?;
        if ext != 1 {
            return Err(PciError::Unsupported(
                "this kernel's VFIO has no no-IOMMU mode (CONFIG_VFIO_NOIOMMU)".into(),
            ));
        }
        let mut status: vfio_group_status =
            sized(|s: &mut vfio_group_status| s.argsz = size_of::<vfio_group_status>() as u32);
        // SAFETY: a vfio_group_status with argsz set.
        unsafe { ioctl(&group, GROUP_GET_STATUS, ptr(&mut status)) }
            .map_err(err("VFIO_GROUP_GET_STATUS"))?;
        if status.flags & VFIO_GROUP_FLAGS_VIABLE == 0 {
            return Err(PciError::Unsupported(format!(
                "{bdf}: VFIO group {group_node} is not viable: every function in it must be bound to vfio-pci or to no driver"
            )));
        }
        let mut cfd: i32 = container.as_raw_fd();
        // SAFETY: a pointer to the container's descriptor.
        unsafe { ioctl(&group, GROUP_SET_CONTAINER, ptr(&mut cfd)) }
            .map_err(err("VFIO_GROUP_SET_CONTAINER"))?;
        // SAFETY: the IOMMU type is passed by value.
        unsafe { ioctl(&container, SET_IOMMU, VFIO_NOIOMMU_IOMMU.into()) }
            .map_err(err("VFIO_SET_IOMMU (no-IOMMU)"))?;
        let name = CString::new(bdf).map_err(|_| PciError::BadAddress(bdf.into()))?;
        // SAFETY: a NUL-terminated device name.
        let fd = unsafe { ioctl(&group, GROUP_GET_DEVICE_FD, name.as_ptr() as libc::c_ulong) }
            .map_err(|e| PciError::open(format!("{bdf} in {group_node}"), e, fix))?;
        // SAFETY: a fresh descriptor the kernel gave us.
        let device = unsafe { File::from_raw_fd(fd) };
        let mut info: vfio_device_info =
            sized(|i: &mut vfio_device_info| i.argsz = size_of::<vfio_device_info>() as u32);
        // SAFETY: a vfio_device_info with argsz set.
        unsafe { ioctl(&device, DEVICE_GET_INFO, ptr(&mut info)) }
            .map_err(err("VFIO_DEVICE_GET_INFO"))?;
        if info.flags & VFIO_DEVICE_FLAGS_PCI == 0 {
            return Err(PciError::Unsupported(format!(
                "{bdf}: VFIO says this is not a PCI device"
            )));
        }
        Ok(Self {
            device,
            _group: group,
            _container: container,
            info,
        })
    }

    /// The device file (config space and BARs are regions of it).
    pub fn file(&self) -> &File {
        &self.device
    }

    /// Region `index` (0..=5 BARs, 7 config space).
    pub fn region(&self, index: u32) -> io::Result<vfio_region_info> {
        let mut r: vfio_region_info = sized(|r: &mut vfio_region_info| {
            r.argsz = size_of::<vfio_region_info>() as u32;
            r.index = index;
        });
        // SAFETY: a vfio_region_info with argsz and index set.
        unsafe { ioctl(&self.device, DEVICE_GET_REGION_INFO, ptr(&mut r)) }?;
        Ok(r)
    }

    /// Whether the function has a reset method VFIO can use.
    pub fn can_reset(&self) -> bool {
        self.info.flags & VFIO_DEVICE_FLAGS_RESET != 0
    }

    /// `VFIO_DEVICE_RESET` (FLR or another function reset).
    pub fn reset(&self) -> io::Result<()> {
        // SAFETY: argument-less.
        unsafe { ioctl(&self.device, DEVICE_RESET, 0) }.map(|_| ())
    }

    /// Vectors of interrupt index `index` (1 MSI, 2 MSI-X).
    pub fn irq_count(&self, index: u32) -> io::Result<u32> {
        let mut i: vfio_irq_info = sized(|i: &mut vfio_irq_info| {
            i.argsz = size_of::<vfio_irq_info>() as u32;
            i.index = index;
        });
        // SAFETY: a vfio_irq_info with argsz and index set.
        unsafe { ioctl(&self.device, DEVICE_GET_IRQ_INFO, ptr(&mut i)) }?;
        Ok(i.count)
    }

    /// Triggers vectors `0..fds.len()` of `index` on `fds`, or (empty)
    /// disables the index.
    pub fn set_irqs(&self, index: u32, fds: &[RawFd]) -> io::Result<()> {
        let head = size_of::<vfio_irq_set>();
        let len = head + 4 * fds.len();
        // u32 words keep the header aligned.
        let mut buf = vec![0u32; len.div_ceil(4)];
        let set = vfio_irq_set {
            argsz: len as u32,
            flags: VFIO_IRQ_SET_ACTION_TRIGGER
                | if fds.is_empty() {
                    VFIO_IRQ_SET_DATA_NONE
                } else {
                    VFIO_IRQ_SET_DATA_EVENTFD
                },
            index,
            start: 0,
            count: fds.len() as u32,
            data: Default::default(),
        };
        // SAFETY: `buf` holds at least `head` bytes, 4-byte aligned, and
        // vfio_irq_set is a plain C struct of u32s.
        unsafe { buf.as_mut_ptr().cast::<vfio_irq_set>().write(set) };
        for (i, fd) in fds.iter().enumerate() {
            buf[head / 4 + i] = *fd as u32;
        }
        // SAFETY: a vfio_irq_set followed by `count` descriptors, argsz set.
        unsafe {
            ioctl(
                &self.device,
                DEVICE_SET_IRQS,
                buf.as_mut_ptr() as libc::c_ulong,
            )
        }
        .map(|_| ())
    }
}

/// A BAR that VFIO will not let user space map: 32-bit `pread`/`pwrite` on
/// the device file at the region's offset.
pub struct FileBar {
    pub file: File,
    pub base: u64,
    pub len: u64,
}

impl Bar32 for FileBar {
    fn size(&self) -> u64 {
        self.len
    }

    fn read32(&self, offset: u64) -> rnic_device::Result<u32> {
        check_access(offset, self.len)?;
        let mut b = [0u8; 4];
        self.file
            .read_exact_at(&mut b, self.base + offset)
            .map_err(|e| {
                rnic_device::DeviceError::Other(format!("BAR0 read at {offset:#x}: {e}"))
            })?;
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&self, offset: u64, value: u32) -> rnic_device::Result<()> {
        check_access(offset, self.len)?;
        self.file
            .write_all_at(&value.to_le_bytes(), self.base + offset)
            .map_err(|e| rnic_device::DeviceError::Other(format!("BAR0 write at {offset:#x}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_uapi() {
        // linux/vfio.h: _IO(';', 100 + n).
        assert_eq!(GET_API_VERSION, 0x3b64);
        assert_eq!(SET_IOMMU, 0x3b66);
        assert_eq!(GROUP_GET_DEVICE_FD, 0x3b6a);
        assert_eq!(DEVICE_SET_IRQS, 0x3b6e);
        assert_eq!(DEVICE_RESET, 0x3b6f);
        assert_eq!(size_of::<vfio_irq_set>(), 20);
    }

    #[test]
    fn file_bar_words() {
        let p = std::env::temp_dir().join(format!("rnic-pci-filebar-{}", std::process::id()));
        std::fs::write(&p, vec![0u8; 0x2000]).unwrap();
        let f = OpenOptions::new().read(true).write(true).open(&p).unwrap();
        let bar = FileBar {
            file: f,
            base: 0x1000,
            len: 0x1000,
        };
        bar.write32(0x0c, 0x524e_4943).unwrap();
        assert_eq!(bar.read32(0x0c).unwrap(), 0x524e_4943);
        assert!(bar.read32(0x1000).is_err());
        let bytes = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(&bytes[0x100c..0x1010], &0x524e_4943u32.to_le_bytes());
    }
}
