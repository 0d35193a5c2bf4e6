//! PCI functions as sysfs shows them, and what it takes to open one.
//!
//! Everything here reads files under a sysfs root (`/sys`, or a fake tree
//! in tests): `bus/pci/devices/BDF/{vendor,device,class,resource,resource0}`,
//! the `driver` and `iommu_group` symlinks, `kernel/iommu_groups/N/{devices,
//! type,name}` and `module/vfio/parameters/enable_unsafe_noiommu_mode`.
//! Nothing is written.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{PciError, Result};
use crate::{is_rnic_id, rnic_ids_text};

/// Drivers that may hold other functions of a group a VFIO user opens
/// (the kernel lets drivers that manage no DMA share a group).
const GROUP_SAFE_DRIVERS: &[&str] = &["vfio-pci", "pci-stub", "pcieport"];

/// Drivers the sysfs backend works beside: none of them touches the
/// function's BAR0 on its own.
const SYSFS_SAFE_DRIVERS: &[&str] = &["vfio-pci", "pci-stub", "uio_pci_generic"];

/// A sysfs tree: `/sys`, or a copy laid out the same way.
#[derive(Clone, Debug)]
pub struct Sysfs {
    root: PathBuf,
}

impl Default for Sysfs {
    fn default() -> Self {
        Self::from_env()
    }
}

impl Sysfs {
    /// The tree at `root` (which holds `bus/pci/devices`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$RNIC_SYSFS_ROOT` if set, else `/sys`.
    pub fn from_env() -> Self {
        match std::env::var_os("RNIC_SYSFS_ROOT") {
            Some(r) if !r.is_empty() => Self::new(r),
            _ => Self::new("/sys"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `ROOT/bus/pci/devices`.
    pub fn devices_dir(&self) -> PathBuf {
        self.root.join("bus/pci/devices")
    }

    /// `ROOT/bus/pci/devices/BDF`.
    pub fn device_dir(&self, bdf: &str) -> PathBuf {
        self.devices_dir().join(bdf)
    }

    fn groups_dir(&self) -> PathBuf {
        self.root.join("kernel/iommu_groups")
    }

    /// Whether the kernel runs an IOMMU: some IOMMU group exists that VFIO's
    /// no-IOMMU mode did not make.
    pub fn iommu_on(&self) -> bool {
        let Ok(rd) = fs::read_dir(self.groups_dir()) else {
            return false;
        };
        rd.flatten()
            .any(|g| read_trim(&g.path().join("name")).as_deref() != Some(NOIOMMU_GROUP_NAME))
    }

    /// Whether VFIO's unsafe no-IOMMU mode is on.
    pub fn noiommu_mode(&self) -> bool {
        read_trim(
            &self
                .root
                .join("module/vfio/parameters/enable_unsafe_noiommu_mode"),
        )
        .is_some_and(|v| v == "Y" || v == "1")
    }

    /// Whether the vfio-pci driver is loaded.
    pub fn vfio_pci_loaded(&self) -> bool {
        self.root.join("bus/pci/drivers/vfio-pci").exists()
    }

    /// Every PCI function, in address order (unreadable ones left out).
    pub fn functions(&self) -> Vec<Function> {
        let Ok(rd) = fs::read_dir(self.devices_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.iter().filter_map(|b| self.function(b).ok()).collect()
    }

    /// The function at `bdf` (a sysfs address, see [`crate::parse_bdf`]).
    pub fn function(&self, bdf: &str) -> Result<Function> {
        let dir = self.device_dir(bdf);
        let (Some(vendor), Some(device)) =
            (read_hex(&dir.join("vendor")), read_hex(&dir.join("device")))
        else {
            return Err(PciError::NoSuchFunction {
                bdf: bdf.into(),
                dir: self.devices_dir().display().to_string(),
            });
        };
        let iommu_group = link_name(&dir.join("iommu_group")).and_then(|n| n.parse::<u32>().ok());
        let (group, group_peers) = match iommu_group {
            None => (GroupKind::None, Vec::new()),
            Some(n) => {
                let gdir = self.groups_dir().join(n.to_string());
                let kind = if read_trim(&gdir.join("name")).as_deref() == Some(NOIOMMU_GROUP_NAME) {
                    GroupKind::NoIommu
                } else {
                    match read_trim(&gdir.join("type")) {
                        Some(t) if t == "identity" => GroupKind::Identity,
                        Some(t) => GroupKind::Translated(t),
                        None => GroupKind::Translated("unknown".into()),
                    }
                };
                let mut peers: Vec<Peer> = fs::read_dir(gdir.join("devices"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|p| p != bdf)
                    .map(|p| Peer {
                        driver: link_name(&self.device_dir(&p).join("driver")),
                        bdf: p,
                    })
                    .collect();
                peers.sort_by(|a, b| a.bdf.cmp(&b.bdf));
                (kind, peers)
            }
        };
        let bar0_len = read_trim(&dir.join("resource")).and_then(|s| {
            let line = s.lines().next()?;
            let mut it = line
                .split_whitespace()
                .map(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok());
            let (start, end) = (it.next()??, it.next()??);
            (end > start).then(|| end - start + 1)
        });
        Ok(Function {
            bdf: bdf.into(),
            vendor,
            device,
            class: read_hex32(&dir.join("class")).unwrap_or(0),
            driver: link_name(&dir.join("driver")),
            iommu_group,
            group,
            group_peers,
            bar0_len,
            has_resource0: dir.join("resource0").exists(),
            iommu_on: self.iommu_on(),
            noiommu_mode: self.noiommu_mode(),
            vfio_pci_loaded: self.vfio_pci_loaded(),
        })
    }
}

/// Every PCI function under `sysfs` (see [`Sysfs::functions`]).
pub fn discover(sysfs: &Sysfs) -> Vec<Function> {
    sysfs.functions()
}

/// The name VFIO gives the groups it makes in no-IOMMU mode.
pub const NOIOMMU_GROUP_NAME: &str = "vfio-noiommu";

/// What stands between a function's DMA and physical memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// No IOMMU group: no IOMMU (DMA addresses are physical).
    None,
    /// A group VFIO made in no-IOMMU mode (DMA addresses are physical).
    NoIommu,
    /// An IOMMU in passthrough (`type` = `identity`): DMA addresses are
    /// physical while no VFIO user owns the group.
    Identity,
    /// An IOMMU translating DMA (`type` = `DMA`, `DMA-FQ`, `unmanaged`...).
    Translated(String),
}

/// Another function in the same IOMMU group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub bdf: String,
    pub driver: Option<String>,
}

impl Peer {
    fn blocks_vfio(&self) -> bool {
        self.driver
            .as_deref()
            .is_some_and(|d| !GROUP_SAFE_DRIVERS.contains(&d))
    }
}

/// A PCI function as sysfs shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub bdf: String,
    pub vendor: u16,
    pub device: u16,
    /// Class code (`0x020000` an Ethernet controller).
    pub class: u32,
    /// The driver bound (the `driver` symlink's target name).
    pub driver: Option<String>,
    /// The IOMMU group number (the `iommu_group` symlink's target name).
    pub iommu_group: Option<u32>,
    pub group: GroupKind,
    /// The other functions of the IOMMU group.
    pub group_peers: Vec<Peer>,
    /// BAR0's size from `resource` (None: not assigned).
    pub bar0_len: Option<u64>,
    /// Whether `resource0` exists (BAR0 is a memory BAR the kernel lets
    /// user space map).
    pub has_resource0: bool,
    /// Whether the machine runs an IOMMU (any real IOMMU group exists).
    pub iommu_on: bool,
    /// Whether VFIO's unsafe no-IOMMU mode is on.
    pub noiommu_mode: bool,
    /// Whether vfio-pci is loaded.
    pub vfio_pci_loaded: bool,
}

impl Function {
    pub fn is_rnic(&self) -> bool {
        is_rnic_id(self.vendor, self.device)
    }

    /// [`PciError::NotRnicId`] unless the PCI IDs are an rnic's.
    pub fn check_rnic(&self) -> Result<()> {
        if self.is_rnic() {
            Ok(())
        } else {
            Err(PciError::NotRnicId {
                bdf: self.bdf.clone(),
                vendor: self.vendor,
                device: self.device,
                expected: rnic_ids_text(),
            })
        }
    }

    /// The VFIO group device node: `/dev/vfio/N`, or `/dev/vfio/noiommu-N`
    /// in no-IOMMU mode.
    pub fn vfio_group_node(&self) -> Option<String> {
        let n = self.iommu_group?;
        Some(if self.group == GroupKind::NoIommu {
            format!("/dev/vfio/noiommu-{n}")
        } else {
            format!("/dev/vfio/{n}")
        })
    }

    /// Whether the VFIO backend can open the function, and if not why.
    pub fn check_vfio(&self) -> Result<()> {
        self.check_rnic()?;
        if self.driver.as_deref() != Some("vfio-pci") {
            return Err(PciError::NotVfio {
                bdf: self.bdf.clone(),
                driver: self.driver.clone(),
                fix: self.bind_commands().join("; "),
            });
        }
        let Some(group) = self.iommu_group else {
            return Err(PciError::NoIommuGroup {
                bdf: self.bdf.clone(),
            });
        };
        if let Some(p) = self.group_peers.iter().find(|p| p.blocks_vfio()) {
            return Err(PciError::GroupNotViable {
                bdf: self.bdf.clone(),
                group,
                other: p.bdf.clone(),
                other_driver: p.driver.clone(),
            });
        }
        Ok(())
    }

    /// Whether the sysfs backend can open the function for register
    /// access, and if not why.
    pub fn check_sysfs(&self) -> Result<()> {
        self.check_rnic()?;
        if let Some(d) = self.driver.as_deref() {
            if !SYSFS_SAFE_DRIVERS.contains(&d) {
                return Err(PciError::DriverBound {
                    bdf: self.bdf.clone(),
                    driver: d.into(),
                });
            }
        }
        if !self.has_resource0 {
            return Err(PciError::Unsupported(format!(
                "{}: no resource0 in sysfs (BAR0 unassigned, not a memory BAR, or a kernel without PCI mmap): use vfio:{}",
                self.bdf, self.bdf
            )));
        }
        Ok(())
    }

    /// Whether DMA by physical address reaches memory (no IOMMU translates
    /// the function's requests), and if not why.
    pub fn check_phys_dma(&self) -> Result<()> {
        match &self.group {
            GroupKind::None | GroupKind::NoIommu | GroupKind::Identity => Ok(()),
            GroupKind::Translated(kind) => Err(PciError::IommuOn {
                bdf: self.bdf.clone(),
                kind: kind.clone(),
            }),
        }
    }

    /// The shell commands that bind the function (and the functions of its
    /// IOMMU group that stop VFIO) to vfio-pci, as root.
    pub fn bind_commands(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.vfio_pci_loaded {
            out.push("modprobe vfio-pci".to_string());
        }
        if !self.iommu_on && !self.noiommu_mode {
            out.push(
                "echo Y > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode  # no IOMMU: unsafe mode, or use sysfs:BDF"
                    .replace("BDF", &self.bdf),
            );
        }
        let mut bind = |bdf: &str, driver: Option<&str>| {
            if driver == Some("vfio-pci") {
                return;
            }
            if driver.is_some() {
                out.push(format!(
                    "echo {bdf} > /sys/bus/pci/devices/{bdf}/driver/unbind"
                ));
            }
            out.push(format!(
                "echo vfio-pci > /sys/bus/pci/devices/{bdf}/driver_override"
            ));
            out.push(format!("echo {bdf} > /sys/bus/pci/drivers_probe"));
        };
        bind(&self.bdf, self.driver.as_deref());
        for p in self.group_peers.iter().filter(|p| p.blocks_vfio()) {
            bind(&p.bdf, p.driver.as_deref());
        }
        out
    }

    /// The same binding with driverctl (persistent across reboots).
    pub fn driverctl_command(&self) -> String {
        format!("driverctl set-override {} vfio-pci", self.bdf)
    }

    /// How `rnic` would open the function with a plain `--device BDF`:
    /// `Ok("vfio")`, `Ok("sysfs")`, or the reasons neither works.
    pub fn open_plan(&self) -> std::result::Result<&'static str, String> {
        self.check_rnic().map_err(|e| e.to_string())?;
        match self.check_vfio() {
            Ok(()) => Ok("vfio"),
            Err(v) => match self.check_sysfs() {
                Ok(()) => Ok("sysfs"),
                Err(s) => Err(format!("vfio: {v}; sysfs: {s}")),
            },
        }
    }
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn read_hex(p: &Path) -> Option<u16> {
    u16::from_str_radix(read_trim(p)?.trim_start_matches("0x"), 16).ok()
}

fn read_hex32(p: &Path) -> Option<u32> {
    u32::from_str_radix(read_trim(p)?.trim_start_matches("0x"), 16).ok()
}

/// The file name a symlink points at (`driver` -> `.../drivers/vfio-pci`).
fn link_name(p: &Path) -> Option<String> {
    let target = fs::read_link(p).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeSysfs;

    const RNIC: (u16, u16) = (0x1234, 0x4e49);

    #[test]
    fn lists_functions_with_driver_group_and_bar() {
        let f = FakeSysfs::new();
        f.add("0000:00:03.0", 0x1af4, 0x1041, 0x020000)
            .bind("0000:00:03.0", "virtio-pci")
            .add("0000:03:00.0", RNIC.0, RNIC.1, 0x020000)
            .group("0000:03:00.0", 7, "DMA-FQ");
        let fns = discover(&f.sysfs());
        assert_eq!(fns.len(), 2);
        let virtio = &fns[0];
        assert_eq!(virtio.bdf, "0000:00:03.0");
        assert_eq!(virtio.driver.as_deref(), Some("virtio-pci"));
        assert!(!virtio.is_rnic());
        assert_eq!(virtio.class, 0x020000);
        let rnic = &fns[1];
        assert!(rnic.is_rnic());
        assert_eq!(rnic.driver, None);
        assert_eq!(rnic.iommu_group, Some(7));
        assert_eq!(rnic.group, GroupKind::Translated("DMA-FQ".into()));
        assert_eq!(rnic.bar0_len, Some(0x10000));
        assert!(rnic.has_resource0);
        assert!(rnic.iommu_on);
        assert!(!rnic.noiommu_mode);
        assert_eq!(rnic.vfio_group_node().as_deref(), Some("/dev/vfio/7"));
    }

    #[test]
    fn missing_function_and_empty_tree() {
        let f = FakeSysfs::new();
        assert!(discover(&f.sysfs()).is_empty());
        assert!(!f.sysfs().iommu_on());
        let e = f.sysfs().function("0000:09:00.0").unwrap_err();
        assert!(matches!(e, PciError::NoSuchFunction { .. }), "{e}");
        assert!(discover(&Sysfs::new("/nonexistent/sysfs")).is_empty());
    }

    #[test]
    fn a_virtio_nic_is_not_an_rnic() {
        let f = FakeSysfs::new();
        f.add("0000:00:03.0", 0x1af4, 0x1041, 0x020000)
            .bind("0000:00:03.0", "virtio-pci");
        let v = f.sysfs().function("0000:00:03.0").unwrap();
        let e = v.check_vfio().unwrap_err().to_string();
        assert_eq!(
            e,
            "0000:00:03.0 is not an rnic: PCI id 1af4:1041 (rnic functions are 1234:4e49)"
        );
        assert!(v.check_sysfs().is_err());
        assert!(v.open_plan().is_err());
    }

    #[test]
    fn vfio_needs_the_binding_and_says_how() {
        let f = FakeSysfs::new();
        f.add("0000:03:00.0", RNIC.0, RNIC.1, 0x020000)
            .bind("0000:03:00.0", "some-driver")
            .group("0000:03:00.0", 5, "DMA");
        let func = f.sysfs().function("0000:03:00.0").unwrap();
        let e = func.check_vfio().unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, PciError::NotVfio { .. }));
        assert!(msg.starts_with("0000:03:00.0 is bound to some-driver, not to vfio-pci; bind it: modprobe vfio-pci; echo "), "{msg}");
        assert!(!msg.contains('\n'));
        assert_eq!(
            func.bind_commands(),
            [
                "modprobe vfio-pci",
                "echo 0000:03:00.0 > /sys/bus/pci/devices/0000:03:00.0/driver/unbind",
                "echo vfio-pci > /sys/bus/pci/devices/0000:03:00.0/driver_override",
                "echo 0000:03:00.0 > /sys/bus/pci/drivers_probe",
            ]
        );
        assert_eq!(
            func.driverctl_command(),
            "driverctl set-override 0000:03:00.0 vfio-pci"
        );
        // A driver other than the safe ones keeps sysfs off too.
        assert!(matches!(
            func.check_sysfs(),
            Err(PciError::DriverBound { .. })
        ));
        assert!(func.open_plan().is_err());

        f.bind("0000:03:00.0", "vfio-pci");
        let func = f.sysfs().function("0000:03:00.0").unwrap();
        func.check_vfio().unwrap();
        assert_eq!(func.open_plan(), Ok("vfio"));
        assert_eq!(func.bind_commands(), Vec::<String>::new());
    }

    #[test]
    fn a_shared_group_must_be_viable() {
        let f = FakeSysfs::new();
        f.add("0000:03:00.0", RNIC.0, RNIC.1, 0x020000)
            .bind("0000:03:00.0", "vfio-pci")
            .group("0000:03:00.0", 9, "unmanaged")
            .add("0000:03:00.1", 0x8086, 0x1533, 0x020000)
            .bind("0000:03:00.1", "igb")
            .group("0000:03:00.1", 9, "unmanaged")
            .add("0000:00:1c.0", 0x8086, 0xa110, 0x060400)
            .bind("0000:00:1c.0", "pcieport")
            .group("0000:00:1c.0", 9, "unmanaged");
        let func = f.sysfs().function("0000:03:00.0").unwrap();
        assert_eq!(func.group_peers.len(), 2);
        let e = func.check_vfio().unwrap_err();
        assert_eq!(
            e.to_string(),
            "0000:03:00.0: IOMMU group 9 is shared with 0000:03:00.1 (bound to igb), which is not bound to vfio-pci: bind it to vfio-pci too, or unbind it"
        );
        // The commands bind the peer, not the port, and not the function
        // already on vfio-pci.
        let cmds = func.bind_commands();
        assert!(cmds
            .iter()
            .any(|c| c.contains("0000:03:00.1/driver/unbind")));
        assert!(!cmds.iter().any(|c| c.contains("0000:00:1c.0")));
        assert!(!cmds.iter().any(|c| c.contains("0000:03:00.0")));
        // Unbound, the peer no longer blocks.
        fs::remove_file(f.dev("0000:03:00.1").join("driver")).unwrap();
        f.sysfs()
            .function("0000:03:00.0")
            .unwrap()
            .check_vfio()
            .unwrap();
    }

    #[test]
    fn no_iommu_machines() {
        let f = FakeSysfs::new();
        f.add("0000:03:00.0", RNIC.0, RNIC.1, 0x020000)
            .set("bus/pci/drivers/vfio-pci/bind", "");
        let func = f.sysfs().function("0000:03:00.0").unwrap();
        assert!(!func.iommu_on);
        assert_eq!(func.group, GroupKind::None);
        func.check_phys_dma().unwrap();
        assert_eq!(func.open_plan(), Ok("sysfs"));
        let cmds = func.bind_commands();
        assert!(cmds[0].contains("enable_unsafe_noiommu_mode"), "{cmds:?}");
        assert!(!cmds.iter().any(|c| c == "modprobe vfio-pci"));

        // Bound to vfio-pci without an IOMMU and without no-IOMMU mode: no group.
        f.bind("0000:03:00.0", "vfio-pci");
        let e = f
            .sysfs()
            .function("0000:03:00.0")
            .unwrap()
            .check_vfio()
            .unwrap_err();
        assert!(matches!(e, PciError::NoIommuGroup { .. }), "{e}");

        // No-IOMMU mode: VFIO makes a group, which is no IOMMU.
        f.set("module/vfio/parameters/enable_unsafe_noiommu_mode", "Y\n")
            .group("0000:03:00.0", 0, NOIOMMU_GROUP_NAME);
        let func = f.sysfs().function("0000:03:00.0").unwrap();
        assert!(func.noiommu_mode);
        assert!(!func.iommu_on, "a no-IOMMU group is no IOMMU");
        assert_eq!(func.group, GroupKind::NoIommu);
        assert_eq!(
            func.vfio_group_node().as_deref(),
            Some("/dev/vfio/noiommu-0")
        );
        func.check_vfio().unwrap();
        func.check_phys_dma().unwrap();
    }

    #[test]
    fn physical_dma_only_without_translation() {
        let f = FakeSysfs::new();
        f.add("0000:03:00.0", RNIC.0, RNIC.1, 0x020000)
            .group("0000:03:00.0", 2, "DMA")
            .add("0000:04:00.0", RNIC.0, RNIC.1, 0x020000)
            .group("0000:04:00.0", 3, "identity");
        let e = f
            .sysfs()
            .function("0000:03:00.0")
            .unwrap()
            .check_phys_dma()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "0000:03:00.0: DMA by physical address is refused: an IOMMU translates this function's DMA (DMA); use vfio:0000:03:00.0"
        );
        f.sysfs()
            .function("0000:04:00.0")
            .unwrap()
            .check_phys_dma()
            .unwrap();
    }

    #[test]
    fn root_from_the_environment() {
        // Only reads the variable; the default is /sys.
        if std::env::var_os("RNIC_SYSFS_ROOT").is_none() {
            assert_eq!(Sysfs::from_env().root(), Path::new("/sys"));
        }
        assert_eq!(
            Sysfs::new("/x").devices_dir(),
            Path::new("/x/bus/pci/devices")
        );
    }
}
