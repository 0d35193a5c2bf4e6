//! Verilates rtl/tb_gtp7.v: the PHY of boards/artix7-pcie (rnic_gtp7_pipe,
//! rnic_gtp7_lane, rnic_gtp7_reset) with the behavioural GTPE2_COMMON /
//! GTPE2_CHANNEL models of rtl/, and links the model, the Verilator runtime
//! and the thin C ABI (csrc/tb.cpp) into this crate. Seconds.
//!
//! Without Verilator (or without the PHY sources) the crate builds with no
//! model: `gtp7_pipe_sim::MODEL_AVAILABLE` is false and the tests say they
//! were skipped. Knobs: `VERILATOR` (binary, default `verilator` on PATH);
//! `GTP7_PIPE_MUTATION=<name>` builds a deliberately broken PHY instead (see
//! MUTATIONS below and the board README): the tests must then fail.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

const PHY: [&str; 3] = ["rnic_gtp7_pipe.v", "rnic_gtp7_lane.v", "rnic_gtp7_reset.v"];

/// Planted bugs: (name, file, text, replacement). Each must make at least
/// one test fail.
const MUTATIONS: &[(&str, &str, &str, &str)] = &[
    (
        "phystatus_not_held_in_reset",
        "rnic_gtp7_lane.v",
        "pipe_rx_phystatus <= !phy_ready || gt_phystatus;",
        "pipe_rx_phystatus <= gt_phystatus;",
    ),
    (
        "gt_reset_released_before_lock",
        "rnic_gtp7_reset.v",
        "gt_txreset <= state == S_PLL_RESET || state == S_PLL_WAIT || state == S_GT_RESET;",
        "gt_txreset <= state == S_PLL_RESET;",
    ),
    (
        "rxstatus_bit0_lost",
        "rnic_gtp7_lane.v",
        "pipe_rx_status <= phy_ready ? gt_rxstatus : 3'd0;",
        "pipe_rx_status <= phy_ready ? gt_rxstatus & 3'b110 : 3'd0;",
    ),
    (
        "charisk_bytes_swapped",
        "rnic_gtp7_lane.v",
        "pipe_rx_charisk <= gt_rxcharisk[1:0];",
        "pipe_rx_charisk <= {gt_rxcharisk[0], gt_rxcharisk[1]};",
    ),
    (
        "compliance_not_mapped",
        "rnic_gtp7_lane.v",
        ".TXCHARDISPMODE({3'b000, tx_compliance_q}),",
        ".TXCHARDISPMODE(4'b0000),",
    ),
    (
        "rx_powerdown_not_driven",
        "rnic_gtp7_lane.v",
        ".RXPD(tx_powerdown_q),",
        ".RXPD(2'b00),",
    ),
    (
        "rx_elecidle_stuck_low",
        "rnic_gtp7_lane.v",
        "pipe_rx_elecidle <= elecidle_sync[1];",
        "pipe_rx_elecidle <= 1'b0;",
    ),
    (
        "skp_sequence_wrong",
        "rnic_gtp7_lane.v",
        ".CLK_COR_SEQ_1_1(10'b0100011100),",
        ".CLK_COR_SEQ_1_1(10'b0110111100),",
    ),
    (
        "comma_value_wrong",
        "rnic_gtp7_lane.v",
        ".ALIGN_PCOMMA_VALUE(10'b0101111100),",
        ".ALIGN_PCOMMA_VALUE(10'b0101111101),",
    ),
    (
        "rxvalid_not_masked",
        "rnic_gtp7_lane.v",
        "pipe_rx_valid <= phy_ready && gt_rxvalid && valid_cnt == RXVALID_FILTER[3:0];",
        "pipe_rx_valid <= gt_rxvalid;",
    ),
];

fn main() {
    println!("cargo:rustc-check-cfg=cfg(gtp7_model)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/tb.cpp");
    println!("cargo:rerun-if-changed=rtl");
    println!("cargo:rerun-if-changed=../../boards/artix7-pcie/lint");
    println!("cargo:rerun-if-changed=../csrc/vl_shim_common.hpp");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo:rerun-if-env-changed=GTP7_PIPE_MUTATION");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let board = manifest.join("../../boards/artix7-pcie");
    let mut sources = Vec::new();
    for f in PHY {
        let p = board.join(f);
        println!("cargo:rerun-if-changed={}", p.display());
        if !p.exists() {
            println!(
                "cargo:warning=gtp7-pipe-sim: {} not found; building without the model",
                p.display()
            );
            return;
        }
        sources.push(p);
    }
    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".to_string());
    let root = match vl_build::verilator_root(&verilator) {
        Ok(r) => r,
        Err(e) => {
            println!(
                "cargo:warning=gtp7-pipe-sim: {e}; building without the model (the tests report \
                 themselves skipped). Run .ci/setup."
            );
            return;
        }
    };
    let include = root.join("include");

    // a planted bug, if asked for: patched copies of the PHY sources
    let mutation = env::var("GTP7_PIPE_MUTATION").unwrap_or_default();
    if !mutation.is_empty() {
        let Some(&(_, file, from, to)) = MUTATIONS.iter().find(|m| m.0 == mutation) else {
            let names: Vec<&str> = MUTATIONS.iter().map(|m| m.0).collect();
            panic!("GTP7_PIPE_MUTATION={mutation}: unknown; known: {names:?}");
        };
        let mdir = out.join("mutated");
        fs::create_dir_all(&mdir).unwrap();
        for s in sources.iter_mut() {
            let name = s.file_name().unwrap().to_str().unwrap().to_string();
            let mut text = fs::read_to_string(&*s).unwrap();
            if name == file {
                assert_eq!(
                    text.matches(from).count(),
                    1,
                    "mutation {mutation}: text not found once in {file}"
                );
                text = text.replace(from, to);
            }
            let d = mdir.join(&name);
            fs::write(&d, text).unwrap();
            *s = d;
        }
        println!("cargo:warning=gtp7-pipe-sim: built with the planted bug {mutation}");
    }

    // the same library as pcie7-shim-sim's: compiled once (vl_build's cache)
    vl_build::runtime(&out, &include, false, "2", "vl_runtime_o2");

    let mdir = out.join("vtb");
    let _ = fs::remove_dir_all(&mdir);
    fs::create_dir_all(&mdir).unwrap();
    let rtl = manifest.join("rtl");
    let o = Command::new(&verilator)
        .args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "unique"])
        .args(["-Wall", "-Wno-fatal", "-Wno-lint", "-Wno-style"])
        .args(["--top-module", "tb_gtp7", "--prefix", "Vtb_gtp7"])
        .arg(format!("-I{}", rtl.display()))
        // the primitives' parameter and port lists, shared with the board's lint declarations
        .arg(format!("-I{}", board.join("lint").display()))
        .arg("--Mdir")
        .arg(&mdir)
        .arg(rtl.join("tb_gtp7.v"))
        .arg(rtl.join("GTPE2_COMMON.v"))
        .arg(rtl.join("GTPE2_CHANNEL.v"))
        .args(&sources)
        .output();
    let o = match o {
        Ok(o) => o,
        Err(e) => panic!("could not run {verilator}: {e}"),
    };
    if !o.status.success() {
        panic!(
            "verilator failed on tb_gtp7:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let mut files: Vec<PathBuf> = fs::read_dir(&mdir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    files.sort();
    let tb = manifest.join("csrc/tb.cpp");
    let unit = vl_build::unity_source(
        &out.join("gtp7_tb_all.cpp"),
        &files,
        &format!("#include \"{}\"\n", tb.display()),
    );
    let deps = [tb, manifest.join("../csrc/vl_shim_common.hpp")];
    let key = vl_build::cache_key("2", &files, &deps, std::slice::from_ref(&mdir));
    vl_build::compile_cached(&out, "gtp7_tb", &key, || {
        let mut b = vl_build::cc_build(&out, &[unit], &include, std::slice::from_ref(&mdir), false);
        b.opt_level(2);
        b
    });
    vl_build::link_runtime();
    println!("cargo:rustc-cfg=gtp7_model");
}
