//! A client's memory, mapped into this process from the file descriptor a
//! `VFIO_USER_DMA_MAP` carries (QEMU's guest RAM: a shared memfd).
//!
//! One mapping per file (not per DMA region): with a virtual IOMMU the
//! client maps page after page of the same guest RAM file, each with a new
//! descriptor, so files are recognised by device and inode and mapped once,
//! whole. The IOMMU table then points its regions into that mapping at the
//! region's file offset.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use rnic_sim::DmaMemory;

/// A whole file mapped shared, read-write if the descriptor allows it.
pub struct FileMapping {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

// SAFETY: the mapping is only reached through raw pointers (volatile or
// copy operations of the root-complex model), never through references.
unsafe impl Send for FileMapping {}
unsafe impl Sync for FileMapping {}

impl FileMapping {
    /// Map all of `file` (shared).
    pub fn new(file: &File) -> io::Result<Self> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large"))?;
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "DMA region file has size 0 (QEMU guest RAM must be a shared memfd: \
                 -object memory-backend-memfd,share=on)",
            ));
        }
        let map = |prot| {
            // SAFETY: a fresh shared mapping of a file we hold open; the
            // kernel chooses the address.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            (p != libc::MAP_FAILED).then_some(p.cast::<u8>())
        };
        if let Some(ptr) = map(libc::PROT_READ | libc::PROT_WRITE) {
            return Ok(Self {
                ptr,
                len,
                writable: true,
            });
        }
        match map(libc::PROT_READ) {
            Some(ptr) => Ok(Self {
                ptr,
                len,
                writable: false,
            }),
            None => Err(io::Error::last_os_error()),
        }
    }

    /// The descriptor allowed a writable mapping.
    pub fn writable(&self) -> bool {
        self.writable
    }
}

impl DmaMemory for FileMapping {
    fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for FileMapping {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length; nobody holds it any more
        // (the last Arc is gone).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The files a client's DMA regions live in, each mapped once.
#[derive(Default)]
pub struct FileMappings {
    files: HashMap<(u64, u64), Arc<FileMapping>>,
}

impl FileMappings {
    /// The mapping of `file` (made now if this file was not seen before, or
    /// if it grew past the old mapping).
    pub fn get(&mut self, file: &File) -> io::Result<Arc<FileMapping>> {
        let md = file.metadata()?;
        let key = (md.dev(), md.ino());
        if let Some(m) = self.files.get(&key) {
            if m.len as u64 >= md.len() {
                return Ok(m.clone());
            }
        }
        let m = Arc::new(FileMapping::new(file)?);
        self.files.insert(key, m.clone());
        Ok(m)
    }

    /// Files mapped so far.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    #[test]
    fn one_mapping_per_file_shared_with_the_writer() {
        let mut f = tempfile();
        f.set_len(8192).unwrap();
        let mut maps = FileMappings::default();
        let a = maps.get(&f).unwrap();
        let b = maps.get(&f.try_clone().unwrap()).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.writable());
        assert_eq!(DmaMemory::len(&*a), 8192);
        f.seek(SeekFrom::Start(4096)).unwrap();
        f.write_all(b"rnic").unwrap();
        // SAFETY: inside the mapping.
        let got = unsafe { std::slice::from_raw_parts(a.as_ptr().add(4096), 4) }.to_vec();
        assert_eq!(got, b"rnic");
        // SAFETY: inside the mapping.
        unsafe { a.as_ptr().add(100).write_volatile(7) };
        let mut back = [0u8; 1];
        use std::io::Read;
        f.seek(SeekFrom::Start(100)).unwrap();
        f.read_exact(&mut back).unwrap();
        assert_eq!(back[0], 7);
        let g = tempfile();
        assert!(FileMapping::new(&g).is_err(), "empty file");
    }

    fn tempfile() -> File {
        let dir = std::env::temp_dir();
        let p = dir.join(format!(
            "rnic-vfu-mem-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        let _ = std::fs::remove_file(&p);
        f
    }
}
