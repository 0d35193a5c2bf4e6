//! The root complex's posted-write queue: writes (and MSIs) the NIC has
//! issued but that are not yet visible to the host.
//!
//! Rules (PCIe ordering for posted requests, DESIGN.md section 12.7):
//! - every entry gets a visibility time when it arrives (arrival + a seeded
//!   random delay) and is never applied before it;
//! - an entry with Relaxed Ordering (RO=1) may be applied as soon as its time
//!   has come, so it may pass earlier entries;
//! - an entry with RO=0 is applied only once every earlier entry has been
//!   applied (it never passes an earlier posted write of either kind);
//! - [`PostedQueue::oldest_pending`] tells readers (read completions, which
//!   must push earlier posted writes) which entries are still in flight.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::host_memory::DmaMemory;

/// A memory write ready to be applied.
pub struct PostedWrite {
    /// Host pointer of the first byte of the first payload dword.
    pub(crate) ptr: *mut u8,
    /// Payload, dword aligned: `len_dw * 4` bytes.
    pub data: Vec<u8>,
    pub len_dw: u32,
    pub first_be: u8,
    pub last_be: u8,
    /// Keeps the memory alive even if the buffer is unmapped meanwhile.
    pub(crate) _owner: Option<Arc<dyn DmaMemory>>,
}

impl std::fmt::Debug for PostedWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostedWrite")
            .field("len_dw", &self.len_dw)
            .field("first_be", &self.first_be)
            .field("last_be", &self.last_be)
            .finish()
    }
}

impl PostedWrite {
    /// Copy the enabled bytes into host memory.
    ///
    /// # Safety
    /// `ptr` must be valid for writes of every enabled byte (the IOMMU check
    /// guarantees it for writes the root complex accepted).
    pub(crate) unsafe fn apply(&self) {
        let n = self.len_dw as usize;
        let bytes_enabled = |mask: u8, dw: usize| {
            for b in 0..4 {
                if mask & (1 << b) != 0 {
                    let o = dw * 4 + b;
                    // SAFETY: enabled bytes are inside the mapping (caller).
                    unsafe { self.ptr.add(o).write_volatile(self.data[o]) };
                }
            }
        };
        if n == 1 {
            bytes_enabled(self.first_be, 0);
            return;
        }
        bytes_enabled(self.first_be, 0);
        if n > 2 {
            // SAFETY: the middle dwords are fully enabled.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.data.as_ptr().add(4),
                    self.ptr.add(4),
                    (n - 2) * 4,
                );
            }
        }
        bytes_enabled(self.last_be, n - 1);
    }
}

/// What a posted entry does when it becomes visible.
#[derive(Debug)]
pub enum PostedKind {
    Write(PostedWrite),
    /// A zero-length write: an ordering point with no data.
    Nop,
    /// MSI with this vector.
    Msi(u8),
}

#[derive(Debug)]
pub struct PostedEntry {
    pub seq: u64,
    pub due: u64,
    pub ro: bool,
    pub arrived: u64,
    applied: bool,
    pub kind: PostedKind,
}

/// The queue. Entries are kept in arrival order.
#[derive(Debug, Default)]
pub struct PostedQueue {
    entries: VecDeque<PostedEntry>,
    /// Number of entries not yet applied.
    pending: usize,
    next_seq: u64,
    /// No entry can be applied before this cycle.
    next_due: u64,
    pool: Vec<Vec<u8>>,
}

impl PostedQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries not yet visible.
    pub fn len(&self) -> usize {
        self.pending
    }

    pub fn is_empty(&self) -> bool {
        self.pending == 0
    }

    /// The memory every write not yet applied will land in.
    pub(crate) fn memories(&self) -> impl Iterator<Item = &Arc<dyn DmaMemory>> {
        self.entries.iter().filter_map(|e| match &e.kind {
            PostedKind::Write(w) if !e.applied => w._owner.as_ref(),
            _ => None,
        })
    }

    /// Sequence number the next entry will get (= entries ever pushed).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Sequence number of the oldest entry not yet visible (`next_seq()` if
    /// all are). Every entry with a lower number is visible.
    pub fn oldest_pending(&self) -> u64 {
        self.entries.front().map_or(self.next_seq, |e| e.seq)
    }

    /// A payload buffer from the pool (empty, with capacity).
    pub fn take_buf(&mut self) -> Vec<u8> {
        let mut v = self.pool.pop().unwrap_or_else(|| Vec::with_capacity(512));
        v.clear();
        v
    }

    /// Append an entry that becomes visible no earlier than cycle `due`.
    pub fn push(&mut self, kind: PostedKind, ro: bool, now: u64, due: u64) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        // Only the head and RO entries can go before the head has gone.
        if self.pending == 0 {
            self.next_due = due;
        } else if ro {
            self.next_due = self.next_due.min(due);
        }
        self.entries.push_back(PostedEntry {
            seq,
            due,
            ro,
            arrived: now,
            applied: false,
            kind,
        });
        self.pending += 1;
        seq
    }

    /// Apply, in an order the rules allow, every entry that may become
    /// visible at cycle `now`; `apply` is called once per entry.
    pub fn service(&mut self, now: u64, mut apply: impl FnMut(&PostedEntry)) {
        if self.pending == 0 || now < self.next_due {
            return;
        }
        loop {
            let mut progressed = false;
            // The head may go when due (nothing is ahead of it).
            while let Some(front) = self.entries.front() {
                if front.applied {
                    let e = self.entries.pop_front().unwrap();
                    self.recycle(e);
                    continue;
                }
                if front.due <= now {
                    apply(front);
                    self.pending -= 1;
                    let e = self.entries.pop_front().unwrap();
                    self.recycle(e);
                    progressed = true;
                    continue;
                }
                break;
            }
            // Relaxed-ordering entries behind the head may pass it.
            for e in self.entries.iter_mut().skip(1) {
                if e.ro && !e.applied && e.due <= now {
                    apply(e);
                    e.applied = true;
                    self.pending -= 1;
                    progressed = true;
                    if let PostedKind::Write(w) = &mut e.kind {
                        w._owner = None;
                    }
                }
            }
            if !progressed {
                break;
            }
        }
        // Next time anything can go: the head's time, or an RO entry's.
        let mut next = u64::MAX;
        for (i, e) in self.entries.iter().enumerate() {
            if !e.applied && (i == 0 || e.ro) {
                next = next.min(e.due);
            }
        }
        self.next_due = next;
    }

    fn recycle(&mut self, e: PostedEntry) {
        if let PostedKind::Write(w) = e.kind {
            if self.pool.len() < 256 {
                self.pool.push(w.data);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random RO/non-RO entries with random delays: every RO=0 entry becomes
    /// visible only after all earlier entries; RO=1 entries do pass.
    #[test]
    fn posted_write_ordering_rule() {
        let mut passes = 0;
        for seed in 0..50u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut q = PostedQueue::new();
            let mut ro_of = Vec::new();
            let mut order: Vec<u64> = Vec::new();
            let mut oldest_seen = Vec::new();
            for now in 0..5000u64 {
                if now < 3000 && rng.gen_bool(0.3) {
                    let ro = rng.gen_bool(0.5);
                    let due = now + rng.gen_range(0..200);
                    let s = q.push(PostedKind::Nop, ro, now, due);
                    assert_eq!(s as usize, ro_of.len());
                    ro_of.push(ro);
                }
                q.service(now, |e| {
                    assert!(e.due <= now, "applied before its time");
                    order.push(e.seq);
                });
                oldest_seen.push(q.oldest_pending());
            }
            assert!(q.is_empty());
            assert_eq!(order.len(), ro_of.len());
            let mut visible = vec![false; ro_of.len()];
            for &s in &order {
                if !ro_of[s as usize] {
                    assert!(
                        visible[..s as usize].iter().all(|&v| v),
                        "seed {seed}: RO=0 write {s} passed"
                    );
                } else if visible[..s as usize].iter().any(|&v| !v) {
                    passes += 1;
                }
                visible[s as usize] = true;
            }
            assert!(oldest_seen.windows(2).all(|w| w[0] <= w[1]));
        }
        assert!(
            passes > 100,
            "relaxed-ordering writes should pass earlier ones ({passes})"
        );
    }

    /// `oldest_pending` only advances past entries that are visible.
    #[test]
    fn oldest_pending_tracks_head() {
        let mut q = PostedQueue::new();
        q.push(PostedKind::Nop, false, 0, 10);
        q.push(PostedKind::Nop, true, 0, 1);
        q.push(PostedKind::Nop, false, 0, 2);
        q.service(5, |_| {});
        assert_eq!(q.oldest_pending(), 0);
        assert_eq!(q.len(), 2, "the RO entry went, the RO=0 one waits");
        q.service(10, |_| {});
        assert_eq!(q.oldest_pending(), 3);
        assert!(q.is_empty());
    }
}
