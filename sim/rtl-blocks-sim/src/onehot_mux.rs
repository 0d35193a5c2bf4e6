//! Bench of `onehot_mux`: out is the OR of the inputs whose select bit is
//! set, checked against that reference in two parts:
//!
//! - directed cases: no input selected (every input all ones); each input
//!   selected alone, all ones among zeros and zero among all ones (a select
//!   ignored, a wrong slice of the packed inputs, the last input left out
//!   show here), its top bit alone and its bottom bit alone; every input
//!   selected (the OR of distinct values);
//! - a seeded random campaign: inputs at several bit densities, the select
//!   mostly one-hot (what the users give), some zero, some several bits.
//!
//! The block is combinational, so each case is one peek; a failure names
//! the case.

use crate::{fail, from_words, mask, Fail, Kind, Model, PortsIn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a run checked: the tests require each kind of case to occur.
#[derive(Debug, Clone, Default)]
pub struct OhmReport {
    /// cases peeked (directed and random)
    pub cases: usize,
    /// cases with exactly one input selected
    pub onehot: usize,
    /// cases with none selected
    pub zero: usize,
    /// cases with several selected
    pub multi: usize,
    /// cases selecting the last input (alone)
    pub last: usize,
    /// cases whose output has its top bit set
    pub top_set: usize,
}

/// The reference: the OR of the inputs whose select bit is set.
pub fn reference(sel: u32, ins: &[u128]) -> u128 {
    ins.iter()
        .enumerate()
        .filter(|&(i, _)| sel >> i & 1 == 1)
        .fold(0, |o, (_, &v)| o | v)
}

/// The low `n` bits set (n <= 32).
fn ones(n: usize) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// A configuration's model and sizes, and the report so far.
struct Bench {
    m: Model,
    model: &'static str,
    n: usize,
    w: u32,
    r: OhmReport,
}

impl Bench {
    /// Peeks one case (inputs masked to the port widths, as the model
    /// expects) and checks it against the reference.
    fn check(&mut self, what: &str, sel: u32, ins: &[u128]) -> Result<(), Fail> {
        let (n, w, model) = (self.n, self.w, self.model);
        let sel = sel & ones(n);
        let ins: Vec<u128> = ins.iter().map(|&v| mask(v, w)).collect();
        let mut i = PortsIn {
            s_valid: sel,
            ..PortsIn::default()
        };
        for (e, &v) in ins.iter().enumerate() {
            for b in 0..w as usize {
                let p = e * w as usize + b;
                i.s_data[p / 32] |= ((v >> b & 1) as u32) << (p % 32);
            }
        }
        let o = self.m.peek(&i);
        if o.sim_flags != 0 {
            fail!("{model}: {what}: the model stopped ({:#x})", o.sim_flags);
        }
        let want = reference(sel, &ins);
        let got = mask(from_words(&o.m_data), w);
        if got != want {
            fail!("{model}: {what}: out {got:#x}, want {want:#x} (sel {sel:#x}, inputs {ins:x?})");
        }
        let r = &mut self.r;
        r.cases += 1;
        match sel.count_ones() {
            0 => r.zero += 1,
            1 => r.onehot += 1,
            _ => r.multi += 1,
        }
        r.last += usize::from(sel == 1 << (n - 1));
        r.top_set += usize::from(want >> (w - 1) & 1 == 1);
        Ok(())
    }

    fn directed(&mut self) -> Result<(), Fail> {
        let (n, w) = (self.n, self.w);
        let full = mask(u128::MAX, w);
        let top = 1u128 << (w - 1);
        self.check("none selected, every input all ones", 0, &vec![full; n])?;
        for j in 0..n {
            let sel = 1 << j;
            let mut ins = vec![0; n];
            ins[j] = full;
            self.check(&format!("input {j} alone, all ones among zeros"), sel, &ins)?;
            let mut ins = vec![full; n];
            ins[j] = 0;
            self.check(&format!("input {j} alone, zero among all ones"), sel, &ins)?;
            for (bit, v) in [("top", top), ("bottom", 1)] {
                let mut ins = vec![0; n];
                ins[j] = v;
                self.check(&format!("input {j} alone, its {bit} bit alone"), sel, &ins)?;
            }
        }
        // every input selected: distinct values (input i has bit i % W)
        let ins: Vec<u128> = (0..n).map(|i| 1u128 << (i as u32 % w)).collect();
        self.check("every input selected", ones(n), &ins)
    }

    fn random(&mut self, seed: u64, cases: usize) -> Result<(), Fail> {
        let (n, w) = (self.n, self.w);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for c in 0..cases {
            let p = [0.1, 0.5, 0.9][rng.gen_range(0..3)];
            let ins: Vec<u128> = (0..n)
                .map(|_| (0..w).fold(0u128, |v, b| v | u128::from(rng.gen_bool(p)) << b))
                .collect();
            let sel = match rng.gen_range(0..10) {
                0..=6 => 1 << rng.gen_range(0..n),
                7 => 0,
                _ => rng.gen::<u32>() & ones(n),
            };
            self.check(&format!("seed {seed}, random case {c}"), sel, &ins)?;
        }
        Ok(())
    }
}

/// The directed cases, then `cases` random ones from `seed`, of
/// configuration `model`.
pub fn run(model: &'static str, seed: u64, cases: usize) -> Result<OhmReport, Fail> {
    let m = Model::new(model, 1).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::OnehotMux, "{} is not a onehot_mux", c.name);
    let (n, w) = (c.param("N") as usize, c.param("W"));
    // what the port structs carry: sel in one word, the inputs in s_data,
    // the output in m_data (read as up to 128 bits)
    assert!(
        (1..=32).contains(&n) && (1..=128).contains(&w) && n * w as usize <= 32 * 24,
        "{model}: N {n}, W {w} do not fit the port structs"
    );
    let mut b = Bench {
        m,
        model,
        n,
        w,
        r: OhmReport::default(),
    };
    b.directed()?;
    b.random(seed, cases)?;
    Ok(b.r)
}
