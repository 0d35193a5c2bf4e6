//! What only the end-to-end tests need on top of the one harness
//! (`rnic-harness`): a simulated NIC per data-path width, a copy runner
//! that checks every byte at the moment its CQE is seen, and the harness's
//! connection steps on a simulated pair, failing the test on any error
//! (`roce`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic_device::{Device, DmaBuffer};
use rnic_driver::{CompletionQueue, CopyWr, Cqe, Nic, SendQueue, WcStatus};
use rnic_harness::pattern;
use rnic_sim::{RootComplexConfig, SimConfig, SimDevice};

/// Widths every end-to-end test runs at.
pub const WIDTHS: [u32; 2] = [64, 256];

/// The QEMU guest image (`sim/rxe-guest/build-image.sh`, built by
/// `.ci/run` into `target/rxe-guest`); RNIC_GUEST_IMAGE names another.
pub fn guest_image() -> std::path::PathBuf {
    std::env::var_os("RNIC_GUEST_IMAGE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/rxe-guest")
        })
}

/// Whether the tests that boot the vfio-user guest (`what`) are to be
/// skipped: `RNIC_VFIO_USER=skip`, or a simulator built without the RTL.
/// Says so on stderr.
pub fn skip_vfio_user_guest(what: &str) -> bool {
    if std::env::var("RNIC_VFIO_USER").as_deref() == Ok("skip") {
        eprintln!("RNIC_VFIO_USER=skip: {what} are SKIPPED");
        return true;
    }
    if !rnic_sim::RTL_AVAILABLE {
        eprintln!("skipped: rnic-sim was built without the RTL");
        return true;
    }
    false
}

pub fn sim(data_w: u32, seed: u64) -> Nic<SimDevice> {
    sim_with(data_w, seed, RootComplexConfig::default())
}

pub fn sim_with(data_w: u32, seed: u64, rc: RootComplexConfig) -> Nic<SimDevice> {
    let dev = SimDevice::new(SimConfig {
        data_w,
        seed,
        root_complex: rc,
        ..SimConfig::default()
    })
    .unwrap_or_else(|e| panic!("simulator: {e}"));
    Nic::open(dev).unwrap_or_else(|e| panic!("open: {e}"))
}

/// Writes the pattern of `tag` into `buf[off..off + len]`.
pub fn fill_pattern(buf: &DmaBuffer, off: usize, len: usize, tag: u64) {
    pattern::fill_buf(buf, off, len, tag);
}

/// First byte index where `buf[off..off+len]` differs from pattern `tag`.
pub fn check_pattern(buf: &DmaBuffer, off: usize, len: usize, tag: u64) -> Option<usize> {
    pattern::check_buf(buf, off, len, tag)
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn rand_len(r: &mut ChaCha8Rng, max: usize) -> usize {
    r.gen_range(1..=max)
}

/// One planned copy.
#[derive(Debug, Clone, Copy)]
pub struct Copy {
    pub src_off: usize,
    pub dst_off: usize,
    pub len: usize,
}

/// Runs `copies` between `src` and `dst` through `sq`, `window` in flight at
/// a time; checks every destination byte when its CQE is seen and that
/// bytes around it are untouched. Returns the number of ordering violations
/// (CQE seen while data was not yet all visible).
pub fn run_copies<D: Device>(
    nic: &Nic<D>,
    sq: &mut SendQueue,
    cq: &mut CompletionQueue,
    src: &DmaBuffer,
    dst: &DmaBuffer,
    copies: &[Copy],
    window: usize,
) -> usize {
    let mut violations = 0;
    let mut next = 0;
    let mut done = 0;
    let mut cqes: Vec<Cqe> = Vec::new();
    while done < copies.len() {
        let mut posted = false;
        while next < copies.len() && (next - done) < window && sq.outstanding() < sq.entries() {
            let c = copies[next];
            fill_pattern(src, c.src_off, c.len, next as u64 + 1);
            guard_fill(dst, c.dst_off, c.len);
            nic.post_copy(
                sq,
                &CopyWr {
                    wr_id: next as u64,
                    src: src.bus_addr() + c.src_off as u64,
                    dst: dst.bus_addr() + c.dst_off as u64,
                    length: c.len as u32,
                },
            )
            .expect("post");
            next += 1;
            posted = true;
        }
        if posted {
            nic.ring_sq(sq).expect("doorbell");
        }
        cqes.clear();
        let n = nic.poll_cq(cq, 64, &mut cqes).expect("poll");
        if n == 0 {
            nic.device().idle();
            continue;
        }
        for cqe in &cqes {
            assert_eq!(
                cqe.status,
                WcStatus::Success,
                "copy {} failed: {cqe:?}",
                cqe.wr_id
            );
            assert_eq!(cqe.wr_id, done as u64, "completions out of order");
            let c = copies[done];
            assert_eq!(cqe.byte_len as usize, c.len);
            if let Some(i) = check_pattern(dst, c.dst_off, c.len, done as u64 + 1) {
                violations += 1;
                // Not yet visible: let the model drain, then the data must be right.
                for _ in 0..2000 {
                    nic.device().idle();
                }
                assert_eq!(
                    check_pattern(dst, c.dst_off, c.len, done as u64 + 1),
                    None,
                    "copy {done} ({c:?}) wrong at byte {i} even after draining"
                );
            }
            if let Some(at) = guard_check(dst, c.dst_off, c.len) {
                panic!("copy {done} ({c:?}) wrote outside its destination, at offset {at}");
            }
            done += 1;
        }
    }
    violations
}

/// Guard bytes on each side of a destination.
pub const GUARD: usize = 16;
const GUARD_BYTE: u8 = 0xEE;

/// Fills the destination and its guards with a value no pattern run matches.
pub fn guard_fill(buf: &DmaBuffer, off: usize, len: usize) {
    let lo = off.saturating_sub(GUARD);
    let hi = (off + len + GUARD).min(buf.len());
    buf.fill(lo, hi - lo, GUARD_BYTE);
}

/// Offset of the first guard byte that changed.
pub fn guard_check(buf: &DmaBuffer, off: usize, len: usize) -> Option<usize> {
    let lo = off.saturating_sub(GUARD);
    let hi = (off + len + GUARD).min(buf.len());
    (lo..off)
        .chain(off + len..hi)
        .find(|&i| buf.read_u8(i) != GUARD_BYTE)
}

/// Copies that each get their own slot of `stride` bytes in source and
/// destination, so `window` of them can be in flight without overlapping.
pub fn slotted(lens_aligns: &[(usize, usize, usize)], window: usize, stride: usize) -> Vec<Copy> {
    lens_aligns
        .iter()
        .enumerate()
        .map(|(i, &(len, sa, da))| {
            let base = (i % window) * stride + 64;
            Copy {
                src_off: base + sa,
                dst_off: base + da,
                len,
            }
        })
        .collect()
}

pub mod capture;
pub mod roce;
