//! Bench of `onehot_decoder`: every index (all 2^IN_W of them, also those
//! at or beyond OUT_N) with the enable low and high, checked against
//! `out == en << in` cut to OUT_N bits: exactly the named line, or none.
//! The block is combinational, so each case is one peek.

use crate::{fail, Fail, Kind, Model, PortsIn};

/// What a run checked.
#[derive(Debug, Clone, Default)]
pub struct OnehotReport {
    /// cases peeked (indices times the two enables)
    pub cases: usize,
    /// of which an output line was set
    pub hot: usize,
}

/// Every case of configuration `model`.
pub fn run(model: &'static str) -> Result<OnehotReport, Fail> {
    let mut m = Model::new(model, 1).map_err(Fail)?;
    let c = *m.config();
    assert_eq!(c.kind, Kind::Onehot, "{} is not an onehot_decoder", c.name);
    let in_w = c.param("IN_W");
    let out_n = c.param("OUT_N") as usize;
    let mut r = OnehotReport::default();
    for en in [false, true] {
        for v in 0..(1u32 << in_w) {
            let i = PortsIn {
                s_valid: u32::from(en),
                s_last: v,
                ..PortsIn::default()
            };
            let o = m.peek(&i);
            if o.sim_flags != 0 {
                fail!(
                    "{model}: in {v}, en {en}: the model stopped ({:#x})",
                    o.sim_flags
                );
            }
            for bit in 0..out_n {
                let got = o.m_data[bit / 32] >> (bit % 32) & 1 == 1;
                let want = en && bit == v as usize;
                if got != want {
                    fail!("{model}: in {v}, en {en}: out[{bit}] is {got}, want {want}");
                }
            }
            // nothing above OUT_N (the port is OUT_N bits wide)
            let words = out_n.div_ceil(32);
            if out_n % 32 != 0 && o.m_data[words - 1] >> (out_n % 32) != 0 {
                fail!("{model}: in {v}: bits above OUT_N set");
            }
            r.cases += 1;
            r.hot += usize::from(en && (v as usize) < out_n);
        }
    }
    Ok(r)
}
