//! Deterministic randomness: a SplitMix64 generator and the per-message
//! byte patterns. A buffer's pattern comes from a key (e.g. [`key`] of
//! seed, QP, message and buffer), so a byte in the wrong place, a byte of
//! another message and a stale byte all read differently.

use rnic_device::DmaBuffer;

/// SplitMix64 finalizer: a good 64-bit mix of `x`.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A small seeded generator (SplitMix64). Every random choice of the
/// workload comes from one of these, seeded from the run's seed.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// A generator for one `(seed, qp, msg)`: the choices of a message do
    /// not depend on the order messages were posted in.
    pub fn for_message(seed: u64, qp: u32, msg: u64) -> Self {
        Self(mix(mix(seed ^ 0x746f_7274_7572_6521)
            ^ (u64::from(qp) << 40)
            ^ mix(msg)))
    }

    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi - lo;
        if span == u64::MAX {
            return self.next();
        }
        // Multiply-shift: bias below 2^-64 * span, irrelevant here.
        lo + ((u128::from(self.next()) * u128::from(span + 1)) >> 64) as u64
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.range(0, n - 1) == 0
    }
}

/// The key of buffer `buf` of message `msg` on QP index `qp`.
#[inline]
pub fn key(seed: u64, qp: u32, msg: u64, buf: u32) -> u64 {
    mix(mix(seed ^ 0x7061_7474_6572_6e00)
        ^ mix((u64::from(qp) << 48) ^ (u64::from(buf) << 40) ^ msg))
}

/// Fills `out` with the pattern of `key` (byte `i` of the buffer is byte
/// `i % 8` of `mix(key + i / 8)`).
pub fn fill(key: u64, out: &mut [u8]) {
    let mut chunks = out.chunks_exact_mut(8);
    let mut w = 0u64;
    for c in &mut chunks {
        c.copy_from_slice(&mix(key.wrapping_add(w)).to_le_bytes());
        w += 1;
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let b = mix(key.wrapping_add(w)).to_le_bytes();
        rest.copy_from_slice(&b[..rest.len()]);
    }
}

/// Byte `i` of the pattern of `key`.
#[inline]
pub fn byte(key: u64, i: usize) -> u8 {
    (mix(key.wrapping_add((i / 8) as u64)) >> ((i % 8) * 8)) as u8
}

/// Writes the pattern of `key` into `buf[off..off + len]`.
pub fn fill_buf(buf: &DmaBuffer, off: usize, len: usize, key: u64) {
    let mut v = vec![0u8; len];
    fill(key, &mut v);
    buf.write(off, &v);
}

/// Writes the complement of `key`'s pattern (bytes that differ from every
/// byte the pattern will bring) into `buf[off..off + len]`.
pub fn fill_buf_stale(buf: &DmaBuffer, off: usize, len: usize, key: u64) {
    let mut v = vec![0u8; len];
    fill(key, &mut v);
    v.iter_mut().for_each(|b| *b = !*b);
    buf.write(off, &v);
}

/// The first index in `buf[off..off + len]` that differs from `key`'s
/// pattern.
pub fn check_buf(buf: &DmaBuffer, off: usize, len: usize, key: u64) -> Option<usize> {
    let got = buf.to_vec(off, len);
    let mut want = vec![0u8; len];
    fill(key, &mut want);
    got.iter().zip(&want).position(|(g, w)| g != w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_matches_byte() {
        let mut v = vec![0u8; 37];
        fill(42, &mut v);
        for (i, b) in v.iter().enumerate() {
            assert_eq!(*b, byte(42, i));
        }
    }

    #[test]
    fn range_stays_in_bounds() {
        let mut r = SplitMix::new(1);
        for _ in 0..10_000 {
            let x = r.range(3, 9);
            assert!((3..=9).contains(&x));
        }
        assert_eq!(r.range(5, 5), 5);
    }

    #[test]
    fn message_generators_differ() {
        let a = SplitMix::for_message(1, 0, 0).next();
        let b = SplitMix::for_message(1, 0, 1).next();
        let c = SplitMix::for_message(1, 1, 0).next();
        assert!(a != b && a != c && b != c);
    }
}
