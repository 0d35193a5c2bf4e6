//! Interrupt vectors on eventfds: VFIO signals MSI/MSI-X vector *n* by
//! incrementing eventfd *n*; [`EventFds::wait`] sleeps in `ppoll` on it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// One non-blocking eventfd per vector.
#[derive(Debug)]
pub struct EventFds {
    fds: Vec<OwnedFd>,
}

impl EventFds {
    pub fn new(n: usize) -> io::Result<Self> {
        let fds = (0..n)
            .map(|_| {
                // SAFETY: plain syscall; the descriptor is owned below.
                let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
                if fd < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    // SAFETY: a fresh descriptor nobody else owns.
                    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
                }
            })
            .collect::<io::Result<_>>()?;
        Ok(Self { fds })
    }

    pub fn len(&self) -> usize {
        self.fds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }

    /// The descriptors, for `VFIO_DEVICE_SET_IRQS`.
    pub fn raw(&self) -> Vec<RawFd> {
        self.fds.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// Waits until `vector` fires or `timeout` passes; consumes the count.
    /// `Ok(true)` if it fired.
    pub fn wait(&self, vector: usize, timeout: Duration) -> io::Result<bool> {
        let fd = self.fds.get(vector).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "interrupt vector {vector} not enabled (0..{})",
                    self.fds.len()
                ),
            )
        })?;
        if self.take(fd)? {
            return Ok(true);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ts = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            };
            let mut pfd = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, a valid timespec, no signal mask.
            let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r > 0 && self.take(fd)? {
                return Ok(true);
            }
            if left.is_zero() {
                return Ok(false);
            }
        }
    }

    /// Reads (and so clears) the counter if it is non-zero.
    fn take(&self, fd: &OwnedFd) -> io::Result<bool> {
        let mut v = 0u64;
        // SAFETY: reads 8 bytes into a u64 we own.
        let r = unsafe { libc::read(fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
        if r == 8 {
            return Ok(v != 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(false)
        } else {
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(fd: RawFd) {
        let one = 1u64;
        // SAFETY: writes 8 bytes from a u64 we own to an eventfd.
        assert_eq!(
            unsafe { libc::write(fd, (&one as *const u64).cast(), 8) },
            8
        );
    }

    #[test]
    fn fires_and_times_out() {
        let e = EventFds::new(2).unwrap();
        assert_eq!(e.len(), 2);
        let t = std::time::Instant::now();
        assert!(!e.wait(0, Duration::from_millis(20)).unwrap());
        assert!(t.elapsed() >= Duration::from_millis(20));
        signal(e.raw()[1]);
        assert!(e.wait(1, Duration::from_secs(5)).unwrap());
        assert!(
            !e.wait(1, Duration::ZERO).unwrap(),
            "the count was consumed"
        );
        let raw = e.raw()[0];
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            signal(raw);
        });
        assert!(e.wait(0, Duration::from_secs(5)).unwrap());
        h.join().unwrap();
        assert!(e.wait(2, Duration::ZERO).is_err());
    }
}
