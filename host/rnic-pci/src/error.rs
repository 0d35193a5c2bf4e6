//! Every way reaching a PCI function can fail, each in one line that names
//! the fix.

use std::io;

use rnic_device::DeviceError;

/// Errors of discovery and of the two backends.
#[derive(Debug, thiserror::Error)]
pub enum PciError {
    #[error("{0}: not a PCI address (DDDD:BB:DD.F, e.g. 0000:03:00.0)")]
    BadAddress(String),
    #[error("no PCI function {bdf} in {dir} (see `rnic list`)")]
    NoSuchFunction { bdf: String, dir: String },
    #[error(
        "{bdf} is not an rnic: PCI id {vendor:04x}:{device:04x} (rnic functions are {expected})"
    )]
    NotRnicId {
        bdf: String,
        vendor: u16,
        device: u16,
        expected: String,
    },
    #[error("{bdf} is not an rnic: magic {magic:#010x} at BAR0+0x0c, expected {:#010x} (\"RNIC\"){}",
        rnic_regs::MAGIC, all_ones_hint(*magic))]
    BadMagic { bdf: String, magic: u32 },
    #[error(
        "{bdf}: block type {found:#010x} at BAR0+0x00, expected the ID block {expected:#010x}"
    )]
    BadIdBlock {
        bdf: String,
        found: u32,
        expected: u32,
    },
    #[error(
        "{bdf}: register map version {major}.{minor}, this rnic speaks {supported}.x: use an rnic built for that bitstream, or flash a matching one"
    )]
    IncompatibleVersion {
        bdf: String,
        major: u16,
        minor: u16,
        supported: u16,
    },
    #[error("{bdf}: BAR0 is {len:#x} bytes, the register map needs {need:#x}")]
    BarTooSmall { bdf: String, len: u64, need: u64 },
    #[error("{bdf} is {}, not to vfio-pci; bind it: {fix}", driver_phrase(.driver))]
    NotVfio {
        bdf: String,
        driver: Option<String>,
        fix: String,
    },
    #[error(
        "{bdf}: IOMMU group {group} is shared with {other} ({}), which is not bound to vfio-pci: bind it to vfio-pci too, or unbind it",
        driver_phrase(.other_driver)
    )]
    GroupNotViable {
        bdf: String,
        group: u32,
        other: String,
        other_driver: Option<String>,
    },
    #[error(
        "{bdf} has no IOMMU group: enable the IOMMU (intel_iommu=on or amd_iommu=on), or load vfio with enable_unsafe_noiommu_mode=1, or use sysfs:{bdf}"
    )]
    NoIommuGroup { bdf: String },
    #[error("{bdf}: {driver} holds it; unbind it first: echo {bdf} > /sys/bus/pci/devices/{bdf}/driver/unbind")]
    DriverBound { bdf: String, driver: String },
    #[error("permission denied opening {node}: {fix}")]
    PermissionDenied { node: String, fix: String },
    #[error(
        "no free 2 MiB huge pages for DMA ({free} free): reserve some with `echo 64 > /proc/sys/vm/nr_hugepages` (or hugepages=64 on the kernel command line)"
    )]
    NoHugePages { free: u64 },
    #[error(
        "{bdf}: DMA by physical address is refused: an IOMMU translates this function's DMA ({kind}); use vfio:{bdf}"
    )]
    IommuOn { bdf: String, kind: String },
    #[error(
        "physical addresses from /proc/self/pagemap read as 0: DMA without an IOMMU needs CAP_SYS_ADMIN (run as root)"
    )]
    NoPagemap,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    Unsupported(String),
}

fn driver_phrase(d: &Option<String>) -> String {
    match d {
        Some(d) => format!("bound to {d}"),
        None => "bound to no driver".into(),
    }
}

fn all_ones_hint(magic: u32) -> &'static str {
    if magic == u32::MAX {
        " (all ones: the function did not answer; link down, memory decoding off, or BAR0 unassigned)"
    } else {
        ""
    }
}

impl PciError {
    /// An I/O error of `what`.
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        PciError::Io {
            what: what.into(),
            source,
        }
    }

    /// An error opening device node `node`: permission problems become
    /// [`PciError::PermissionDenied`] with `fix`.
    pub fn open(node: impl Into<String>, source: io::Error, fix: &str) -> Self {
        let node = node.into();
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => PciError::PermissionDenied {
                node,
                fix: fix.into(),
            },
            _ => PciError::Io {
                what: format!("opening {node}"),
                source,
            },
        }
    }
}

impl From<PciError> for DeviceError {
    fn from(e: PciError) -> Self {
        DeviceError::Other(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, PciError>;
