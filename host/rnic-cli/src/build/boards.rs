//! The board table (`boards/boards.json`): which targets `rnic build` knows,
//! their part, flow, top module, clock targets and device totals.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::BuildError;

/// The table as it was when this binary was built: `rnic info` uses it to
/// name the board_id a running build reports, without needing a checkout.
pub const EMBEDDED: &str = include_str!("../../../../boards/boards.json");

/// How a board is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flow {
    /// The Verilator model, built by cargo (sim/rnic-sim).
    Sim,
    /// yosys synth_ecp5, nextpnr-ecp5, ecppack.
    Ecp5,
    /// yosys synth_xilinx resource estimate (the bitstream is built with
    /// openXC7 elsewhere).
    XilinxEstimate,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nextpnr {
    /// nextpnr-ecp5 device flag without dashes (`85k` gives `--85k`).
    pub device: String,
    pub package: String,
    pub speed: u32,
    /// Let nextpnr place pins the .lpf does not name (I/O-free baselines).
    #[serde(default)]
    pub unconstrained_io: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockTarget {
    pub name: String,
    pub target_mhz: f64,
}

/// Device totals from the data sheet.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    pub luts: u64,
    pub ffs: u64,
    pub brams: u64,
    pub dsps: u64,
    pub lut_kind: String,
    pub bram_kind: String,
    pub dsp_kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub name: String,
    /// Value of the ID block's board_id register in this board's builds.
    pub board_id: u32,
    pub description: String,
    pub family: String,
    pub part: Option<String>,
    pub flow: Flow,
    /// Directory (from the repository root) with the top, constraints, README.
    pub dir: String,
    pub top: String,
    #[serde(default)]
    pub nextpnr: Option<Nextpnr>,
    pub clocks: Vec<ClockTarget>,
    /// DATA_W values this board can be built with.
    pub data_w: Vec<u32>,
    pub flash_bytes: Option<u64>,
    pub resources: Option<Resources>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardTable {
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
    pub boards: Vec<Board>,
}

impl BoardTable {
    /// Parse and check a table: unique names and ids, each flow's fields.
    pub fn parse(text: &str) -> Result<Self, BuildError> {
        let t: BoardTable =
            serde_json::from_str(text).map_err(|e| BuildError::BoardTable(e.to_string()))?;
        let mut names = BTreeSet::new();
        let mut ids = BTreeSet::new();
        for b in &t.boards {
            let bad = |why: &str| BuildError::BoardTable(format!("board {}: {why}", b.name));
            if !names.insert(b.name.as_str()) {
                return Err(bad("name used twice"));
            }
            if !ids.insert(b.board_id) {
                return Err(bad("board_id used twice"));
            }
            if b.data_w.is_empty() || b.data_w.iter().any(|w| ![64, 128, 256, 512].contains(w)) {
                return Err(bad("data_w must list values out of 64, 128, 256, 512"));
            }
            if b.flow != Flow::Sim && (b.part.is_none() || b.resources.is_none()) {
                return Err(bad("an FPGA board needs part and resources"));
            }
            if b.flow == Flow::Ecp5 && (b.nextpnr.is_none() || b.clocks.is_empty()) {
                return Err(bad("an ecp5 board needs nextpnr and clocks"));
            }
            if b.clocks
                .iter()
                .any(|c| c.target_mhz.is_nan() || c.target_mhz <= 0.0)
            {
                return Err(bad("clock targets must be positive"));
            }
        }
        Ok(t)
    }

    pub fn embedded() -> Self {
        Self::parse(EMBEDDED).expect("boards/boards.json compiled into rnic is valid")
    }

    pub fn names(&self) -> Vec<&str> {
        self.boards.iter().map(|b| b.name.as_str()).collect()
    }

    pub fn get(&self, name: &str) -> Result<&Board, BuildError> {
        self.boards
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| BuildError::UnknownBoard {
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    pub fn by_id(&self, id: u32) -> Option<&Board> {
        self.boards.iter().find(|b| b.board_id == id)
    }
}

/// Name of the board a running build reports in its ID block, for `rnic info`.
pub fn board_name(board_id: u32) -> String {
    match BoardTable::embedded().by_id(board_id) {
        Some(b) => b.name.clone(),
        None => format!("unknown ({board_id:#x})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_table_is_valid_and_has_the_three_kinds() {
        let t = BoardTable::embedded();
        assert_eq!(t.get("sim").unwrap().board_id, 0);
        assert_eq!(t.get("ecp5-85f").unwrap().flow, Flow::Ecp5);
        assert_eq!(t.get("artix7-pcie").unwrap().flow, Flow::XilinxEstimate);
        assert_eq!(board_name(0), "sim");
        assert_eq!(board_name(0xdead), "unknown (0xdead)");
    }

    #[test]
    fn unknown_board_lists_the_known_ones() {
        let e = BoardTable::embedded().get("ice40").unwrap_err().to_string();
        assert!(e.contains("unknown board ice40"), "{e}");
        assert!(e.contains("sim, ecp5-85f, artix7-pcie"), "{e}");
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let one = r#"{"name":"a","board_id":0,"description":"","family":"sim","part":null,
            "flow":"sim","dir":"d","top":"t","clocks":[],"data_w":[64],"flash_bytes":null,
            "resources":null}"#;
        let two = one.replace("\"a\"", "\"b\"");
        let e = BoardTable::parse(&format!(r#"{{"boards":[{one},{two}]}}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("board b: board_id used twice"), "{e}");
    }
}
