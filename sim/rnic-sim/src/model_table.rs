// The Verilated builds of rnic_core, in one table that build.rs
// (`include!`) verilates and links and src/verilated.rs binds: adding a
// model is adding a line here.

/// One Verilated build: its tag (the shim exports `rnic_<tag>_*`), data
/// width and knobs.
#[derive(Debug, Clone, Copy)]
pub struct ModelSpec {
    pub tag: &'static str,
    pub data_w: u32,
    pub knobs: ModelKnobs,
}

/// Every model built. The knob builds are the ones `rnic build --verbs
/// write` and `--transports mp --verbs write` make for an FPGA, simulated
/// so that they are run and not only linted.
pub const MODELS: [ModelSpec; 5] = [
    ModelSpec {
        tag: "w64",
        data_w: 64,
        knobs: ModelKnobs::Full,
    },
    ModelSpec {
        tag: "w256",
        data_w: 256,
        knobs: ModelKnobs::Full,
    },
    ModelSpec {
        tag: "w64_write",
        data_w: 64,
        knobs: ModelKnobs::WriteOnly,
    },
    ModelSpec {
        tag: "w64_mp",
        data_w: 64,
        knobs: ModelKnobs::MpOnly,
    },
    ModelSpec {
        tag: "w64_q1024",
        data_w: 64,
        knobs: ModelKnobs::ManyQps,
    },
];

/// Data widths this build has models for (of the default knobs).
pub const MODEL_WIDTHS: &[u32] = &[64, 256];

/// Which build of `rnic_core` a simulated NIC is: its knobs, as
/// `rnic build` sets them for an FPGA.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ModelKnobs {
    /// Every verb and both transports, RDMA READ served and issued, and
    /// atomics executed as a responder (`SEND_EN=1 RC_EN=1 READ_EN=1
    /// ATOMIC_EN=1`).
    #[default]
    Full,
    /// RDMA WRITE and WRITE_WITH_IMM only (`rnic build --verbs write`:
    /// `SEND_EN=0`).
    WriteOnly,
    /// The mp transport only, WRITE and WRITE_WITH_IMM (`rnic build
    /// --transports mp --verbs write`: `RC_EN=0 SEND_EN=0`).
    MpOnly,
    /// Every verb and both transports with 1,024 QPs (`rnic build
    /// --num-q 1024`; the other models have 64), for tortures with many
    /// hundreds of QPs.
    ManyQps,
}

impl ModelKnobs {
    pub const ALL: [ModelKnobs; 4] = [Self::Full, Self::WriteOnly, Self::MpOnly, Self::ManyQps];

    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::WriteOnly => "write-only",
            Self::MpOnly => "mp-only",
            Self::ManyQps => "many-qps",
        }
    }

    /// The rnic_core parameters this build sets.
    pub fn params(self) -> &'static str {
        match self {
            Self::Full => "SEND_EN=1 RC_EN=1 READ_EN=1 ATOMIC_EN=1",
            Self::WriteOnly => "SEND_EN=0 RC_EN=1",
            Self::MpOnly => "SEND_EN=0 RC_EN=0",
            Self::ManyQps => "SEND_EN=1 RC_EN=1 READ_EN=1 ATOMIC_EN=1",
        }
    }

    /// The QPs (send queues = completion queues) this build has.
    pub fn num_q(self) -> u32 {
        match self {
            Self::ManyQps => 1024,
            _ => 64,
        }
    }

    /// The widths built with these knobs.
    pub fn widths(self) -> Vec<u32> {
        MODELS
            .iter()
            .filter(|m| m.knobs == self)
            .map(|m| m.data_w)
            .collect()
    }
}

impl std::fmt::Display for ModelKnobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ModelKnobs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown model {s:?}: full, write-only, mp-only or many-qps"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_set_has_a_model_and_the_widths_agree() {
        for k in ModelKnobs::ALL {
            assert!(!k.widths().is_empty(), "{k}: no model");
        }
        assert_eq!(ModelKnobs::Full.widths(), MODEL_WIDTHS);
        let mut tags: Vec<&str> = MODELS.iter().map(|m| m.tag).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), MODELS.len(), "a tag twice");
    }
}
