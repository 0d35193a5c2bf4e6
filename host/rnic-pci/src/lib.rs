//! Reach an rnic PCI function from Linux.
//!
//! - [`discover`]: every PCI function in sysfs with its IDs, driver, IOMMU
//!   group, whether rnic can open it (and why not), and the commands that
//!   bind it to vfio-pci. The sysfs root is a parameter ([`Sysfs::new`]) or
//!   `RNIC_SYSFS_ROOT` ([`Sysfs::from_env`]), so it is tested on fake trees.
//! - [`vfio`]: [`VfioDevice`], the [`Device`](rnic_device::Device) backend
//!   for a function bound to vfio-pci: MMIO, DMA through the IOMMU at IOVAs
//!   this crate allocates, MSI/MSI-X on eventfds, reset on open.
//! - [`sysfs`]: [`SysfsDevice`], register access through
//!   `/sys/bus/pci/devices/BDF/resource0` with no IOMMU setup (enough for
//!   `rnic info`, `regs` and `flash`); DMA only on a machine without an
//!   IOMMU, from pinned huge pages by physical address ([`physmem`]).
//!
//! Both backends open a function the same way: its PCI IDs checked in sysfs
//! first, then BAR0's ID block (magic, block type, register-map major
//! version) read and checked ([`id::check_id_block`]) before anything is
//! written to the function (section 8.1 of DESIGN.md).
//!
//! # Which crate does what
//!
//! | job | how | why |
//! |---|---|---|
//! | type-1 IOMMU container, group, device fd, config space, BAR0 mmap, `VFIO_DEVICE_RESET`, MSI/MSI-X eventfds, `VFIO_IOMMU_MAP_DMA`/`UNMAP_DMA` | `pci-driver` | the crate this project chose (open-rdma's driver uses it); it does all of these |
//! | VFIO no-IOMMU mode (`/dev/vfio/noiommu-N`, `VFIO_NOIOMMU_IOMMU`) | raw `ioctl`s in [`vfio::noiommu`], uapi structs from rust-vmm's `vfio-bindings` | `pci-driver` only opens `/dev/vfio/N` with a type-1 IOMMU; `vfio-ioctls` has no no-IOMMU container either, and would bring KVM in |
//! | the checks before opening: bound to vfio-pci, group viable, device node permissions | sysfs reads ([`discover`]) | `pci-driver` fails these with an unnamed `io::Error`; rnic names the fix |
//! | `sysfs` backend | `memmap2::MmapRaw` over `resource0`, `pread`/`pwrite` on `config` | no driver needed |
//! | DMA without an IOMMU | `MAP_HUGETLB` + `mlock` (libc), `/proc/self/pagemap` | a physical address is only stable for pinned memory |
//!
//! iommufd (`/dev/iommu`, `/dev/vfio/devices/vfioN`) is not used: the
//! legacy container interface is served by every kernel with VFIO (by
//! iommufd's compatibility mode on kernels built without the legacy
//! container), and `pci-driver` speaks only that.
//!
//! # Soundness
//!
//! Device memory is never behind a Rust reference: BAR0 is reached with
//! volatile 32-bit raw-pointer accesses only ([`mmio::Mmio`]), DMA memory
//! through [`rnic_device::DmaBuffer`]'s volatile accessors.
//!
//! # Time
//!
//! Hardware has no simulated clock. Both backends count
//! [`Device::now`](rnic_device::Device::now) in cycles of a nominal
//! [`NOMINAL_CLOCK_MHZ`] (250 MHz, the simulator's clock) clock derived from
//! [`std::time::Instant`], so watchdogs written in cycles mean the same time
//! on both; `wait_irq`'s budget is in the same cycles (`budget / clock_mhz()` µs).
//! `RNIC_PCI_CLOCK_MHZ` ([`clock::CLOCK_ENV`]) sets another rate: a
//! simulated NIC served to a QEMU guest over vfio-user (`rnic vm`) runs at
//! some 0.05-2 MHz of wall time, and its watchdogs must wait that much
//! longer.

pub mod config;
pub mod discover;
pub mod error;
pub mod fake;
pub mod id;
pub mod irq;
pub mod mmio;
pub mod physmem;
pub mod sysfs;
pub mod vfio;

pub mod clock;

pub use discover::{discover, Function, Sysfs};
pub use error::{PciError, Result};
pub use sysfs::SysfsDevice;
pub use vfio::VfioDevice;

/// PCI vendor and device IDs rnic functions enumerate with (set in the
/// boards' PCIe core configuration, and by the vfio-user server that
/// presents the simulator to a guest).
pub const RNIC_PCI_IDS: &[(u16, u16)] = &[(0x1234, 0x4e49)];

/// The nominal clock of [`Device::now`](rnic_device::Device::now) on
/// hardware backends, in MHz.
pub const NOMINAL_CLOCK_MHZ: f64 = 250.0;

/// Whether `(vendor, device)` is an rnic function's ID.
pub fn is_rnic_id(vendor: u16, device: u16) -> bool {
    RNIC_PCI_IDS.contains(&(vendor, device))
}

/// `RNIC_PCI_IDS` as text, `1234:4e49`.
pub fn rnic_ids_text() -> String {
    RNIC_PCI_IDS
        .iter()
        .map(|(v, d)| format!("{v:04x}:{d:04x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A PCI address `DDDD:BB:DD.F` (domain optional, `0000` assumed), in the
/// lower-case form sysfs spells it.
pub fn parse_bdf(s: &str) -> Option<String> {
    let full = if s.matches(':').count() == 1 {
        format!("0000:{s}")
    } else {
        s.to_string()
    };
    let (dom, rest) = full.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    let hex = |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_hexdigit());
    let ok = hex(dom, 4)
        && hex(bus, 2)
        && hex(dev, 2)
        && u8::from_str_radix(dev, 16).is_ok_and(|d| d < 32)
        && func.len() == 1
        && matches!(func.as_bytes()[0], b'0'..=b'7');
    ok.then(|| full.to_ascii_lowercase())
}

/// [`parse_bdf`], or [`PciError::BadAddress`].
pub fn bdf(s: &str) -> Result<String> {
    parse_bdf(s).ok_or_else(|| PciError::BadAddress(s.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse() {
        assert_eq!(parse_bdf("03:00.1").as_deref(), Some("0000:03:00.1"));
        assert_eq!(parse_bdf("0000:0A:1f.7").as_deref(), Some("0000:0a:1f.7"));
        for bad in ["", "0000:03:00", "0000:03:20.0", "03:00.8", "x:03:00.0"] {
            assert!(parse_bdf(bad).is_none(), "{bad:?}");
        }
        assert!(matches!(bdf("nope"), Err(PciError::BadAddress(_))));
        assert!(is_rnic_id(0x1234, 0x4e49));
        assert!(!is_rnic_id(0x1af4, 0x1041));
        assert_eq!(rnic_ids_text(), "1234:4e49");
    }
}
