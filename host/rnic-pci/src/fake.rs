//! A fake sysfs tree in a temporary directory, for tests of this crate and
//! of tools built on it (point `RNIC_SYSFS_ROOT` at [`FakeSysfs::root`]).
//! Functions, drivers, IOMMU groups and BAR0 images are plain files and
//! symlinks laid out as Linux lays them out; the tree is removed on drop.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fake sysfs root.
pub struct FakeSysfs {
    pub root: PathBuf,
}

impl Drop for FakeSysfs {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

impl Default for FakeSysfs {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeSysfs {
    pub fn new() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let root = std::env::temp_dir().join(format!(
            "rnic-pci-sysfs-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("bus/pci/devices")).unwrap();
        fs::create_dir_all(root.join("bus/pci/drivers")).unwrap();
        fs::create_dir_all(root.join("kernel/iommu_groups")).unwrap();
        Self { root }
    }

    pub fn sysfs(&self) -> crate::Sysfs {
        crate::Sysfs::new(&self.root)
    }

    pub fn dev(&self, bdf: &str) -> PathBuf {
        self.root.join("bus/pci/devices").join(bdf)
    }

    /// A function with IDs, class, a 64 KiB BAR0 and a resource0 file.
    pub fn add(&self, bdf: &str, vendor: u16, device: u16, class: u32) -> &Self {
        let d = self.dev(bdf);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("vendor"), format!("0x{vendor:04x}\n")).unwrap();
        fs::write(d.join("device"), format!("0x{device:04x}\n")).unwrap();
        fs::write(d.join("class"), format!("0x{class:06x}\n")).unwrap();
        fs::write(
            d.join("resource"),
            "0x00000000fe000000 0x00000000fe00ffff 0x0000000000040200\n\
             0x0000000000000000 0x0000000000000000 0x0000000000000000\n",
        )
        .unwrap();
        fs::write(d.join("resource0"), vec![0u8; 0x10000]).unwrap();
        fs::write(d.join("config"), vec![0u8; 256]).unwrap();
        fs::write(d.join("enable"), "1\n").unwrap();
        self
    }

    pub fn bind(&self, bdf: &str, driver: &str) -> &Self {
        let drv = self.root.join("bus/pci/drivers").join(driver);
        fs::create_dir_all(&drv).unwrap();
        let link = self.dev(bdf).join("driver");
        let _ = fs::remove_file(&link);
        symlink(&drv, link).unwrap();
        self
    }

    pub fn group(&self, bdf: &str, group: u32, kind: &str) -> &Self {
        let g = self
            .root
            .join("kernel/iommu_groups")
            .join(group.to_string());
        fs::create_dir_all(g.join("devices")).unwrap();
        if kind == crate::discover::NOIOMMU_GROUP_NAME {
            fs::write(g.join("name"), format!("{kind}\n")).unwrap();
        } else {
            fs::write(g.join("type"), format!("{kind}\n")).unwrap();
        }
        let dev = self.dev(bdf);
        symlink(&dev, g.join("devices").join(bdf)).unwrap();
        symlink(&g, dev.join("iommu_group")).unwrap();
        self
    }

    /// Writes `words` (offset, value) into the function's `resource0`
    /// (64 KiB of zeros otherwise), e.g. an ID block.
    pub fn bar0(&self, bdf: &str, words: &[(usize, u32)]) -> &Self {
        let mut img = vec![0u8; 0x10000];
        for &(off, v) in words {
            img[off..off + 4].copy_from_slice(&v.to_le_bytes());
        }
        fs::write(self.dev(bdf).join("resource0"), img).unwrap();
        self
    }

    pub fn set(&self, rel: impl AsRef<Path>, text: &str) -> &Self {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
        self
    }
}
