//! The debug switches of `dma.debug`: each breaks one safety property on
//! purpose, so that the test that guards the property can show it sees the
//! break. This is the only writer of that register: every switch is set by
//! read-modify-write, so setting one never clears another.

use std::fmt;
use std::str::FromStr;

use rnic_device::Device;

use crate::{DriverError, Nic, Result};

/// One debug switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Break {
    /// CQE writes carry Relaxed Ordering and may pass their payload (and
    /// skip the flush read in flush mode).
    CqeRo,
    /// The responder asks for a WRITE_WITH_IMM's CQE before its payload and
    /// that of earlier PSNs.
    EarlyCqe,
    /// CQEs take a path that bypasses the payload write queue.
    Bypass,
    /// The responder skips every memory-region check (rkey, PD, access,
    /// bounds, and the write guard).
    NoMrCheck,
    /// The requester completes an RDMA READ when its last response
    /// arrives, before that response's data is written.
    EarlyReadCqe,
    /// A retransmission's payload reads no longer hold the CQE of the WQE
    /// they read: a resend may read a buffer after the host saw its CQE.
    ResendAfterCqe,
    /// The context table moves a slot's records whatever work its QP has
    /// in flight (the pin is not asked).
    UnpinnedMove,
}

impl Break {
    pub const ALL: [Break; 7] = [
        Break::CqeRo,
        Break::EarlyCqe,
        Break::Bypass,
        Break::NoMrCheck,
        Break::EarlyReadCqe,
        Break::ResendAfterCqe,
        Break::UnpinnedMove,
    ];

    /// The switches that break the completion ordering of WRITE_WITH_IMM
    /// (what the torture test must catch); `NoMrCheck` breaks memory
    /// protection instead (what the fuzz campaign must catch), and
    /// `EarlyReadCqe` the ordering of an RDMA READ's CQE behind its data
    /// (what `tests/read_requester.rs` catches). `ResendAfterCqe` breaks
    /// the promise that the NIC reads no buffer after its CQE, which only
    /// the wire shows (`tests/mp_wire.rs` compares every resend with its
    /// first send). `UnpinnedMove` breaks the context table's promise
    /// to move no QP with work in flight (`tests/qp_record.rs`).
    pub const ORDERING: [Break; 3] = [Break::CqeRo, Break::EarlyCqe, Break::Bypass];

    /// The name `--break` takes.
    pub fn name(self) -> &'static str {
        match self {
            Break::CqeRo => "cqe-ro",
            Break::EarlyCqe => "early-cqe",
            Break::Bypass => "bypass",
            Break::NoMrCheck => "no-mr-check",
            Break::EarlyReadCqe => "early-read-cqe",
            Break::ResendAfterCqe => "resend-after-cqe",
            Break::UnpinnedMove => "unpinned-move",
        }
    }

    /// For a switch that neither the torture test nor the fuzz campaign
    /// can see: why, and which tests catch it (their refusal's reason).
    pub fn caught_elsewhere(self) -> Option<&'static str> {
        match self {
            Break::ResendAfterCqe => Some(
                "lets a resend read its buffer after the WQE's CQE; the responder drops such a resend as a duplicate, so no torture or fuzz check can see it: the capture checks of tests/mp_wire.rs and tests/reliability.rs (every resend equals its first send) catch it",
            ),
            Break::UnpinnedMove => Some(
                "lets the context table move a QP with work in flight; neither the torture nor the fuzz campaign moves QP contexts: tests/qp_record.rs (moves tried during traffic) catches it",
            ),
            _ => None,
        }
    }

    /// Breaks the completion ordering (one of [`Break::ORDERING`]).
    pub fn is_ordering(self) -> bool {
        Break::ORDERING.contains(&self)
    }

    /// The `id.caps` bit that says the NIC has this switch (none for
    /// `NoMrCheck`, `ResendAfterCqe` and `UnpinnedMove`, which every build
    /// has; the last does something only with a context table).
    fn caps_bit(self) -> Option<u32> {
        match self {
            Break::CqeRo => Some(1),
            Break::EarlyCqe => Some(2),
            Break::Bypass => Some(3),
            Break::NoMrCheck => None,
            Break::EarlyReadCqe => Some(8),
            Break::ResendAfterCqe | Break::UnpinnedMove => None,
        }
    }

    fn bit(self) -> u32 {
        match self {
            Break::CqeRo => 0,
            Break::EarlyCqe => 1,
            Break::Bypass => 2,
            Break::NoMrCheck => 3,
            Break::EarlyReadCqe => 4,
            Break::ResendAfterCqe => 5,
            Break::UnpinnedMove => 6,
        }
    }
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown switch name; lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown break switch {0:?} (cqe-ro, early-cqe, bypass, no-mr-check, early-read-cqe, resend-after-cqe, unpinned-move)")]
pub struct UnknownBreak(pub String);

impl FromStr for Break {
    type Err = UnknownBreak;
    fn from_str(s: &str) -> std::result::Result<Self, UnknownBreak> {
        Break::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| UnknownBreak(s.to_string()))
    }
}

/// A set of switches, as the register holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BreakSet(u32);

impl BreakSet {
    pub fn contains(self, b: Break) -> bool {
        self.0 & (1 << b.bit()) != 0
    }

    pub fn with(self, b: Break, on: bool) -> Self {
        if on {
            Self(self.0 | (1 << b.bit()))
        } else {
            Self(self.0 & !(1 << b.bit()))
        }
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The switches that are on, in [`Break::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Break> {
        Break::ALL.into_iter().filter(move |b| self.contains(*b))
    }
}

impl FromIterator<Break> for BreakSet {
    fn from_iter<I: IntoIterator<Item = Break>>(it: I) -> Self {
        it.into_iter().fold(Self::default(), |s, b| s.with(b, true))
    }
}

/// The debug switches of one NIC ([`Nic::debug_switches`]).
pub struct DebugSwitches<'a, D: Device> {
    nic: &'a Nic<D>,
}

impl<D: Device> DebugSwitches<'_, D> {
    /// The switches that are on.
    pub fn get(&self) -> Result<BreakSet> {
        let r = self.nic.io().csr().dma().debug().try_read()?;
        Ok(BreakSet::default()
            .with(Break::CqeRo, r.cqe_ro())
            .with(Break::EarlyCqe, r.early_cqe())
            .with(Break::Bypass, r.bypass())
            .with(Break::NoMrCheck, r.no_mr_check())
            .with(Break::EarlyReadCqe, r.early_read_cqe())
            .with(Break::ResendAfterCqe, r.resend_after_cqe())
            .with(Break::UnpinnedMove, r.unpinned_move()))
    }

    /// Turns `b` on or off and leaves every other switch as it was. Reads
    /// the register back: a NIC that did not take the switch would silently
    /// test nothing.
    pub fn set(&self, b: Break, on: bool) -> Result<()> {
        if on {
            if let Some(bit) = b.caps_bit() {
                if self.nic.id().caps & (1 << bit) == 0 {
                    return Err(DriverError::InvalidArg(format!(
                        "this NIC has no {b} debug switch (id.caps bit {bit} is 0)"
                    )));
                }
            }
        }
        self.nic.io().csr().dma().debug().try_modify(|r| {
            match b {
                Break::CqeRo => r.set_cqe_ro(on),
                Break::EarlyCqe => r.set_early_cqe(on),
                Break::Bypass => r.set_bypass(on),
                Break::NoMrCheck => r.set_no_mr_check(on),
                Break::EarlyReadCqe => r.set_early_read_cqe(on),
                Break::ResendAfterCqe => r.set_resend_after_cqe(on),
                Break::UnpinnedMove => r.set_unpinned_move(on),
            };
        })?;
        if self.get()?.contains(b) != on {
            return Err(DriverError::InvalidArg(format!(
                "the NIC did not take the {b} debug switch"
            )));
        }
        Ok(())
    }

    /// Turns every switch off.
    pub fn clear(&self) -> Result<()> {
        for b in self.get()?.iter() {
            self.set(b, false)?;
        }
        Ok(())
    }
}

impl<D: Device> Nic<D> {
    /// The NIC's debug switches (`dma.debug`).
    pub fn debug_switches(&self) -> DebugSwitches<'_, D> {
        DebugSwitches { nic: self }
    }
}
