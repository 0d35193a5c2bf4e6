//! Bench of `tag_match`: which of N entries hold a key, checked against
//! `match[i] = valid[i] && tag[i] == key` in two parts:
//!
//! - directed cases, for a few keys (zero, all ones, the top bit alone,
//!   the bottom bit alone, alternate bits): every entry holding the key
//!   with none, every other or all of them valid; each entry alone
//!   holding it, valid or not (a wrong slice of the packed tags shows
//!   here); each entry's tag one top bit or one bottom bit off the key,
//!   among entries that hold it and among entries that do not;
//! - a seeded random campaign: tags drawn partly from a small pool, so
//!   that several entries share one, keys mostly an entry's tag, some of
//!   them with the top or the bottom bit flipped, valid bits at several
//!   densities.
//!
//! The block is combinational, so each case is one peek; a failure names
//! the case.

use crate::{fail, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a run checked: the tests require each kind of case to occur.
#[derive(Debug, Clone, Default)]
pub struct TagReport {
    /// cases peeked (directed and random)
    pub cases: usize,
    /// entries matched, over all cases
    pub matches: usize,
    /// cases with two valid entries or more holding the key
    pub multi: usize,
    /// cases with an invalid entry holding the key
    pub invalid_held: usize,
    /// cases with a valid entry's tag the key with its top bit flipped
    pub top_off: usize,
    /// cases with a valid entry's tag the key with its bottom bit flipped
    pub bottom_off: usize,
}

/// The reference: bit i set when entry i is valid and its tag is the key.
pub fn reference(valid: u32, tags: &[u32], key: u32) -> u32 {
    tags.iter()
        .enumerate()
        .filter(|&(i, &t)| valid >> i & 1 == 1 && t == key)
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The low `w` bits set (w <= 32).
fn ones(w: usize) -> u32 {
    if w >= 32 {
        u32::MAX
    } else {
        (1 << w) - 1
    }
}

/// A configuration's model and sizes, and the report so far.
struct Bench {
    m: Model,
    model: &'static str,
    n: usize,
    kw: usize,
    r: TagReport,
}

impl Bench {
    /// Peeks one case (inputs masked to the port widths, as the model
    /// expects) and checks it against the reference.
    fn check(&mut self, what: &str, valid: u32, tags: &[u32], key: u32) -> Result<(), Fail> {
        let (n, kw, model) = (self.n, self.kw, self.model);
        let kmask = ones(kw);
        let valid = valid & ones(n);
        let key = key & kmask;
        let tags: Vec<u32> = tags.iter().map(|t| t & kmask).collect();
        let mut i = PortsIn {
            s_valid: valid,
            s_last: key,
            ..PortsIn::default()
        };
        for (e, &t) in tags.iter().enumerate() {
            for b in 0..kw {
                let p = e * kw + b;
                i.s_data[p / 32] |= (t >> b & 1) << (p % 32);
            }
        }
        let o = self.m.peek(&i);
        if o.sim_flags != 0 {
            fail!("{model}: {what}: the model stopped ({:#x})", o.sim_flags);
        }
        let want = reference(valid, &tags, key);
        let got = o.m_data[0];
        if got != want {
            fail!(
                "{model}: {what}: match {got:#x}, want {want:#x} (valid {valid:#x}, key {key:#x}, \
                 tags {tags:x?})"
            );
        }
        let r = &mut self.r;
        let top = 1 << (kw - 1);
        let held = |k: u32, v: bool| {
            tags.iter()
                .enumerate()
                .any(|(e, &t)| t == k && (valid >> e & 1 == 1) == v)
        };
        r.cases += 1;
        r.matches += want.count_ones() as usize;
        r.multi += usize::from(want.count_ones() >= 2);
        r.invalid_held += usize::from(held(key, false));
        r.top_off += usize::from(held(key ^ top, true));
        r.bottom_off += usize::from(held(key ^ 1, true));
        Ok(())
    }

    fn directed(&mut self) -> Result<(), Fail> {
        let (n, kw) = (self.n, self.kw);
        let kmask = ones(kw);
        let full = ones(n);
        let top = 1 << (kw - 1);
        let mut keys = vec![0, kmask, top, 1, 0x5555_5555 & kmask];
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            // every tag differs from the key in every bit
            let other = k ^ kmask;
            let same = vec![k; n];
            for (what, v) in [
                ("none valid", 0),
                ("every other valid", 0x5555_5555),
                ("the others valid", 0xaaaa_aaaa),
                ("all valid", full),
            ] {
                self.check(&format!("key {k:#x} in every entry, {what}"), v, &same, k)?;
            }
            for j in 0..n {
                let mut tags = vec![other; n];
                tags[j] = k;
                let c = format!("key {k:#x} in entry {j} alone");
                self.check(&format!("{c}, all valid"), full, &tags, k)?;
                self.check(&format!("{c}, it invalid"), full & !(1 << j), &tags, k)?;
                for (bit, flip) in [("top", top), ("bottom", 1)] {
                    let c = format!("key {k:#x}, entry {j} off in its {bit} bit");
                    tags[j] = k ^ flip;
                    self.check(&format!("{c}, no other entry holds it"), full, &tags, k)?;
                    let mut rest = same.clone();
                    rest[j] = k ^ flip;
                    self.check(&format!("{c}, every other entry holds it"), full, &rest, k)?;
                }
            }
        }
        Ok(())
    }

    fn random(&mut self, seed: u64, cases: usize) -> Result<(), Fail> {
        let (n, kw) = (self.n, self.kw);
        let kmask = ones(kw);
        let top = 1 << (kw - 1);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for c in 0..cases {
            let pool: Vec<u32> = (0..rng.gen_range(1..=3))
                .map(|_| rng.gen::<u32>() & kmask)
                .collect();
            let tags: Vec<u32> = (0..n)
                .map(|_| {
                    if rng.gen_bool(0.5) {
                        pool[rng.gen_range(0..pool.len())]
                    } else {
                        rng.gen::<u32>() & kmask
                    }
                })
                .collect();
            let p = [0.1, 0.5, 0.9, 1.0][rng.gen_range(0..4)];
            let valid = (0..n).fold(0, |v, i| v | u32::from(rng.gen_bool(p)) << i);
            let t = tags[rng.gen_range(0..n)];
            let key = match rng.gen_range(0..10) {
                0..=5 => t,
                6 => t ^ top,
                7 => t ^ 1,
                _ => rng.gen::<u32>() & kmask,
            };
            self.check(&format!("seed {seed}, random case {c}"), valid, &tags, key)?;
        }
        Ok(())
    }
}

/// The directed cases, then `cases` random ones from `seed`, of
/// configuration `model`.
pub fn run(model: &'static str, seed: u64, cases: usize) -> Result<TagReport, Fail> {
    let m = Model::new(model, 1).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::TagMatch, "{} is not a tag_match", c.name);
    let (n, kw) = (c.param("N") as usize, c.param("KEY_W") as usize);
    // what the port structs carry: valid and match in one word, the key in
    // s_last, the tags in s_data
    assert!(
        (1..=32).contains(&n) && (1..=32).contains(&kw) && n * kw <= 32 * 24,
        "{model}: N {n}, KEY_W {kw} do not fit the port structs"
    );
    let mut b = Bench {
        m,
        model,
        n,
        kw,
        r: TagReport::default(),
    };
    b.directed()?;
    b.random(seed, cases)?;
    Ok(b.r)
}
