// Parameters of the card datapath model, shared by build.rs (`include!`)
// and the crate (src/card.rs).

/// rnic_core's NUM_Q in the card model (the card's default).
pub const CARD_NUM_Q: u32 = 16;
