//! DMA read requests in flight at the root complex, and how their data comes
//! back: completions split at the read completion boundary (RCB), each at
//! most MPS, interleaved between tags, in address order within a tag, and
//! never before the posted writes that arrived ahead of the request are
//! visible (reads push writes).

use std::sync::Arc;

use crate::host_memory::DmaMemory;
use rand::Rng;

/// One completion of a read: which bytes it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CplChunk {
    /// Bus address of the first byte this completion returns.
    pub addr: u64,
    /// Bytes returned (of the request's byte count).
    pub bytes: u32,
    /// Byte count field: bytes remaining including this completion.
    pub byte_count: u32,
    /// Payload length in dwords (from `addr & !3`).
    pub length_dw: u32,
    /// Lower address field (`addr[6:0]`).
    pub lower_addr: u8,
    /// Last completion of the request.
    pub last: bool,
}

/// Size in bytes of the next completion for a request whose next byte is at
/// `addr` with `remaining` bytes left. Every completion but the last ends on
/// an `rcb` boundary; the payload (from the dword holding `addr`) is at most
/// `mps` bytes. `rng = None` picks the largest legal size.
pub fn next_chunk_bytes<R: Rng + ?Sized>(
    addr: u64,
    remaining: u32,
    mps: u32,
    rcb: u32,
    rng: Option<&mut R>,
) -> u32 {
    let dw_start = addr & !3;
    let rcb = u64::from(rcb.max(4));
    let mps = u64::from(mps);
    let end_all = addr + u64::from(remaining);
    // The whole rest fits in one completion?
    let fits_all = end_all.next_multiple_of(4) - dw_start <= mps;
    // Candidate ends on RCB boundaries, strictly before end_all.
    let first_boundary = (addr / rcb + 1) * rcb;
    let max_end = dw_start + mps; // payload limit
    let mut n_boundaries = 0u64;
    if first_boundary < end_all && first_boundary <= max_end {
        let last = max_end.min(end_all - 1);
        n_boundaries = (last - first_boundary) / rcb + 1;
    }
    let n_choices = n_boundaries + u64::from(fits_all);
    debug_assert!(n_choices > 0, "mps must be at least 2 * rcb");
    let pick = match rng {
        Some(r) if n_choices > 1 => r.gen_range(0..n_choices),
        _ => n_choices.saturating_sub(1),
    };
    if pick < n_boundaries {
        (first_boundary + pick * rcb - addr) as u32
    } else {
        remaining
    }
}

/// The completion plan for `addr..addr+byte_count` (all chunks).
pub fn split_read<R: Rng + ?Sized>(
    addr: u64,
    byte_count: u32,
    mps: u32,
    rcb: u32,
    mut rng: Option<&mut R>,
) -> Vec<CplChunk> {
    let mut v = Vec::new();
    let (mut a, mut rem) = (addr, byte_count);
    while rem > 0 {
        let n = next_chunk_bytes(a, rem, mps, rcb, rng.as_deref_mut());
        v.push(chunk(a, n, rem));
        a += u64::from(n);
        rem -= n;
    }
    v
}

fn chunk(addr: u64, bytes: u32, remaining: u32) -> CplChunk {
    let end = addr + u64::from(bytes);
    CplChunk {
        addr,
        bytes,
        byte_count: remaining,
        length_dw: ((end.next_multiple_of(4) - (addr & !3)) / 4) as u32,
        lower_addr: (addr & 0x7f) as u8,
        last: bytes == remaining,
    }
}

/// A read request waiting for (more of) its completions.
pub struct PendingRead {
    pub tag: u8,
    pub requester_id: u16,
    pub tc: u8,
    pub ro: bool,
    pub ns: bool,
    pub ido: bool,
    /// Received at this cycle.
    pub arrived: u64,
    /// No completion before this cycle (latency + jitter).
    pub ready_at: u64,
    /// Posted entries with a lower sequence number must be visible first.
    pub writes_before: u64,
    /// Bus address of the next byte to return.
    pub next_addr: u64,
    /// Bytes still to return.
    pub remaining: u32,
    /// Answer with one completion of this status (UR/CA) instead of data.
    pub error_status: Option<u8>,
    /// Zero-length read: one CplD of 1 DW, byte count 1, no data.
    pub zero_length: bool,
    /// Host pointer of `next_addr` (None for error / zero-length reads).
    pub(crate) host: Option<(*mut u8, Arc<dyn DmaMemory>)>,
}

/// Requests in flight, in arrival order.
#[derive(Default)]
pub struct ReadCompleter {
    reqs: Vec<PendingRead>,
    busy: [u64; 4],
}

impl ReadCompleter {
    pub fn len(&self) -> usize {
        self.reqs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// The memory every request in flight will read from.
    pub(crate) fn memories(&self) -> impl Iterator<Item = &Arc<dyn DmaMemory>> {
        self.reqs
            .iter()
            .filter_map(|r| r.host.as_ref().map(|(_, m)| m))
    }

    pub fn tag_busy(&self, tag: u8) -> bool {
        self.busy[usize::from(tag >> 6)] & (1 << (tag & 63)) != 0
    }

    pub fn push(&mut self, r: PendingRead) {
        self.busy[usize::from(r.tag >> 6)] |= 1 << (r.tag & 63);
        self.reqs.push(r);
    }

    /// Index of the request that sends the next completion at `now`, if any
    /// may: it must be ready and every posted write ahead of it visible.
    /// With `reorder`, a random one of those; else only the oldest request
    /// may go (strict arrival order).
    pub fn pick<R: Rng + ?Sized>(
        &self,
        now: u64,
        oldest_pending_write: u64,
        reorder: bool,
        rng: &mut R,
    ) -> Option<usize> {
        let ok = |r: &PendingRead| r.ready_at <= now && r.writes_before <= oldest_pending_write;
        if !reorder {
            return self.reqs.first().filter(|r| ok(r)).map(|_| 0);
        }
        let n = self.reqs.iter().filter(|r| ok(r)).count();
        if n == 0 {
            return None;
        }
        let k = if n == 1 { 0 } else { rng.gen_range(0..n) };
        self.reqs
            .iter()
            .enumerate()
            .filter(|(_, r)| ok(r))
            .nth(k)
            .map(|(i, _)| i)
    }

    pub fn get(&self, i: usize) -> &PendingRead {
        &self.reqs[i]
    }

    pub fn get_mut(&mut self, i: usize) -> &mut PendingRead {
        &mut self.reqs[i]
    }

    /// Drop request `i` (all its completions are out); frees its tag.
    pub fn finish(&mut self, i: usize) {
        let r = self.reqs.remove(i);
        self.busy[usize::from(r.tag >> 6)] &= !(1 << (r.tag & 63));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn check_plan(addr: u64, bc: u32, mps: u32, rcb: u32, plan: &[CplChunk]) {
        let mut a = addr;
        let mut rem = bc;
        for (i, c) in plan.iter().enumerate() {
            assert_eq!(c.addr, a, "chunks are contiguous and in address order");
            assert_eq!(c.byte_count, rem, "byte count = remaining bytes");
            assert_eq!(c.lower_addr, (a & 0x7f) as u8);
            assert!(
                c.length_dw * 4 <= mps,
                "payload {} > MPS {mps}",
                c.length_dw * 4
            );
            assert!(c.bytes > 0);
            let end = a + u64::from(c.bytes);
            let dws = (end.next_multiple_of(4) - (a & !3)) / 4;
            assert_eq!(u64::from(c.length_dw), dws);
            if i + 1 < plan.len() {
                assert!(!c.last);
                assert_eq!(
                    end % u64::from(rcb),
                    0,
                    "non-final completion must end on the RCB"
                );
            } else {
                assert!(c.last);
                assert_eq!(c.bytes, rem);
            }
            a = end;
            rem -= c.bytes;
        }
        assert_eq!(rem, 0);
    }

    #[test]
    fn completion_splitting_rules() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut sizes = std::collections::BTreeSet::new();
        for _ in 0..20000 {
            let mps = 128u32 << rng.gen_range(0..3);
            let rcb = if rng.gen_bool(0.8) { 64 } else { 128 };
            let mrrs = 128u32 << rng.gen_range(0..6);
            let addr = 0x1_0000_0000u64 + rng.gen_range(0..8192u64);
            let bc = rng.gen_range(1..=mrrs);
            let plan = split_read(addr, bc, mps, rcb, Some(&mut rng));
            check_plan(addr, bc, mps, rcb, &plan);
            for c in &plan {
                sizes.insert(c.length_dw);
            }
            // Largest-first (no RNG) obeys the same rules and is minimal.
            let max = split_read::<ChaCha8Rng>(addr, bc, mps, rcb, None);
            check_plan(addr, bc, mps, rcb, &max);
            assert!(max.len() <= plan.len());
        }
        assert!(sizes.len() > 50, "sizes are varied");
    }

    fn req(tag: u8, ready_at: u64, writes_before: u64) -> PendingRead {
        PendingRead {
            tag,
            requester_id: 0x100,
            tc: 0,
            ro: false,
            ns: false,
            ido: false,
            arrived: 0,
            ready_at,
            writes_before,
            next_addr: 0x1000,
            remaining: 4,
            error_status: None,
            zero_length: false,
            host: None,
        }
    }

    /// Reads push writes: a request may only complete once every posted
    /// entry that arrived before it is visible.
    #[test]
    fn read_waits_for_earlier_posted_writes() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut rc = ReadCompleter::default();
        rc.push(req(1, 10, 5)); // arrived after posted entries 0..5
        rc.push(req(2, 10, 0)); // arrived before any
        for reorder in [false, true] {
            // Entries 0..5 not all visible (oldest pending = 3).
            for _ in 0..50 {
                let p = rc.pick(100, 3, reorder, &mut rng);
                if reorder {
                    assert_eq!(p, Some(1), "only the request with no earlier writes may go");
                } else {
                    assert_eq!(p, None, "in-order mode: the head must wait");
                }
            }
            assert_eq!(
                rc.pick(5, 5, reorder, &mut rng),
                None,
                "not ready before its latency"
            );
            assert!(rc.pick(100, 5, reorder, &mut rng).is_some());
        }
        assert!(rc.tag_busy(1) && rc.tag_busy(2) && !rc.tag_busy(3));
        rc.finish(0);
        assert!(!rc.tag_busy(1));
    }

    #[test]
    fn completion_split_examples() {
        // 512 B from an unaligned address with MPS 256: ends at RCB boundaries.
        let p = split_read::<ChaCha8Rng>(0x1000_0010, 512, 256, 64, None);
        let bytes: Vec<u32> = p.iter().map(|c| c.bytes).collect();
        assert_eq!(bytes, vec![240, 256, 16]);
        assert_eq!(p[0].length_dw, 60);
        assert_eq!(p[0].byte_count, 512);
        assert_eq!(p[1].lower_addr, 0x00);
        assert_eq!(p[1].byte_count, 272);
        // Small read fits one completion.
        let p = split_read::<ChaCha8Rng>(0x1003, 5, 128, 64, None);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].length_dw, 2);
        assert_eq!(p[0].lower_addr, 3);
    }
}
