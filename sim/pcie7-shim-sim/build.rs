//! Verilates `boards/artix7-pcie/rnic_pcie7_shim.v` at DATA_W 64 and 128 and
//! links both models, the Verilator runtime and the thin C ABI
//! (csrc/shim.cpp) into this crate. The shim alone verilates and compiles in
//! seconds, so it is not wrapped with rnic_core.
//!
//! It also verilates the card's datapath, the module the card top
//! instantiates (boards/artix7-pcie/rnic_artix7_datapath.v: the shim at
//! DATA_W 64, then either hw/rtl/pcie_clock_crossing.v and rnic_core at
//! DATA_W 128, or rnic_core at DATA_W 64 wired straight to the shim; NUM_Q
//! from src/card_params.rs) into two more models, `Vcard_x` (CLK_MHZ 62)
//! and `Vcard_d` (CLK_MHZ 125), each with the C ABI of csrc/card.cpp. Those
//! take longer (verilating a few seconds, compiling each one translation
//! unit at -O2 about 20 s; the two are built on two threads), and are cached
//! like the others (vl_build: OUT_DIR, then `target/<profile>/vl-cache`).
//!
//! Without Verilator (or without the shim source) the crate builds with no
//! model: `pcie7_shim_sim::MODEL_AVAILABLE` is false, and the tests say they
//! were skipped; without hw/rtl/rnic_core.v it builds without the card model
//! (`card::CARD_MODEL_AVAILABLE` false). Knobs: `VERILATOR` (binary,
//! default `verilator` on PATH).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod card_params {
    include!("src/card_params.rs");
}

const WIDTHS: [u32; 2] = [64, 128];

/// The card datapath's variants: (symbol tag, CLK_MHZ). "x": the crossing
/// (the card's default), "d": the core at 64 bits on the user clock.
const CARD_VARIANTS: [(&str, u32); 2] = [("x", 62), ("d", 125)];

fn main() {
    println!("cargo:rustc-check-cfg=cfg(pcie7_model)");
    println!("cargo:rustc-check-cfg=cfg(pcie7_card_model)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/shim.cpp");
    println!("cargo:rerun-if-changed=csrc/card.cpp");
    println!("cargo:rerun-if-changed=src/card_params.rs");
    println!("cargo:rerun-if-changed=../csrc/vl_shim_common.hpp");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let src = manifest.join("../../boards/artix7-pcie/rnic_pcie7_shim.v");
    println!("cargo:rerun-if-changed={}", src.display());
    if !src.exists() {
        println!(
            "cargo:warning=pcie7-shim-sim: {} not found; building without the model",
            src.display()
        );
        return;
    }
    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".to_string());
    let root = match vl_build::verilator_root(&verilator) {
        Ok(r) => r,
        Err(e) => {
            println!(
                "cargo:warning=pcie7-shim-sim: {e}; building without the model (the tests report \
                 themselves skipped). Run .ci/setup."
            );
            return;
        }
    };
    let include = root.join("include");

    // the same library as gtp7-pipe-sim's: compiled once (vl_build's cache)
    vl_build::runtime(&out, &include, false, "2", "vl_runtime_o2");

    for w in WIDTHS {
        let prefix = format!("Vpcie7_w{w}");
        let mdir = out.join(format!("w{w}"));
        let _ = fs::remove_dir_all(&mdir);
        fs::create_dir_all(&mdir).unwrap();
        let o = Command::new(&verilator)
            .args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "unique"])
            .args(["-Wall", "-Wno-fatal"])
            .args(["--top-module", "rnic_pcie7_shim"])
            .arg("--prefix")
            .arg(&prefix)
            .arg(format!("-GDATA_W={w}"))
            .arg("--Mdir")
            .arg(&mdir)
            .arg(&src)
            .output();
        let o = match o {
            Ok(o) => o,
            Err(e) => panic!("could not run {verilator}: {e}"),
        };
        if !o.status.success() {
            panic!(
                "verilator failed on rnic_pcie7_shim.v (DATA_W={w}):\n{}{}",
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
        let tail = format!(
            "#define SHIM_MODEL {prefix}\n#define SHIM_HEADER \"{prefix}.h\"\n\
             #define SHIM_PFX(name) pcie7_w{w}_##name\n#include \"{}\"\n",
            manifest.join("csrc/shim.cpp").display()
        );
        let unit = vl_build::unity_source(&out.join(format!("pcie7_w{w}_all.cpp")), &files, &tail);
        let deps = [
            manifest.join("csrc/shim.cpp"),
            manifest.join("../csrc/vl_shim_common.hpp"),
        ];
        let key = vl_build::cache_key("2", &files, &deps, std::slice::from_ref(&mdir));
        vl_build::compile_cached(&out, &format!("pcie7_w{w}"), &key, || {
            let mut b =
                vl_build::cc_build(&out, &[unit], &include, std::slice::from_ref(&mdir), false);
            b.opt_level(2);
            b
        });
    }
    if card(&verilator, &manifest, &out, &include, &src) {
        println!("cargo:rustc-cfg=pcie7_card_model");
    }
    vl_build::link_runtime();
    println!("cargo:rustc-cfg=pcie7_model");
}

/// Verilates and compiles the card datapath (rnic_artix7_datapath over
/// hw/rtl); false (with a warning) when the core's sources are missing.
fn card(verilator: &str, manifest: &Path, out: &Path, include: &Path, shim: &Path) -> bool {
    let rtl = manifest.join("../../hw/rtl");
    let generated = rtl.join("generated");
    // directories: cargo rescans them for any change
    println!("cargo:rerun-if-changed={}", rtl.display());
    println!("cargo:rerun-if-changed={}", generated.display());
    if !rtl.join("rnic_core.v").exists() {
        println!(
            "cargo:warning=pcie7-shim-sim: {} not found; building without the card datapath model",
            rtl.join("rnic_core.v").display()
        );
        return false;
    }
    let datapath = manifest.join("../../boards/artix7-pcie/rnic_artix7_datapath.v");
    println!("cargo:rerun-if-changed={}", datapath.display());
    let mut sources = vec![datapath, shim.to_path_buf()];
    sources.extend(list(&rtl, "v"));
    sources.extend(list(&generated, "sv"));
    // both variants at once: each is one translation unit for one core
    std::thread::scope(|sc| {
        let jobs: Vec<_> = CARD_VARIANTS
            .iter()
            .map(|&(tag, clk_mhz)| {
                let sources = &sources;
                sc.spawn(move || {
                    card_variant(verilator, manifest, out, include, sources, tag, clk_mhz)
                })
            })
            .collect();
        for j in jobs {
            j.join().expect("card model build panicked");
        }
    });
    true
}

/// One variant of the card datapath: `Vcard_{tag}` verilated with
/// `-GCLK_MHZ={clk_mhz}` into `card_{tag}/`, its C ABI exported as
/// `card_{tag}_*`, compiled into library `pcie7_card_{tag}`.
fn card_variant(
    verilator: &str,
    manifest: &Path,
    out: &Path,
    include: &Path,
    sources: &[PathBuf],
    tag: &str,
    clk_mhz: u32,
) {
    let prefix = format!("Vcard_{tag}");
    let mdir = out.join(format!("card_{tag}"));
    let _ = fs::remove_dir_all(&mdir);
    fs::create_dir_all(&mdir).unwrap();
    let rtl = manifest.join("../../hw/rtl");
    let generated = rtl.join("generated");
    let o = Command::new(verilator)
        .args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "unique"])
        .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"])
        .args(["--top-module", "rnic_artix7_datapath"])
        .arg("-GDATA_W=64")
        .arg("--prefix")
        .arg(&prefix)
        .arg(format!("-GNUM_Q={}", card_params::CARD_NUM_Q))
        .arg(format!("-GCLK_MHZ={clk_mhz}"))
        .arg("--Mdir")
        .arg(&mdir)
        .arg(format!("-I{}", rtl.display()))
        .arg(format!("-I{}", generated.display()))
        .args(sources)
        .output();
    let o = match o {
        Ok(o) => o,
        Err(e) => panic!("could not run {verilator}: {e}"),
    };
    if !o.status.success() {
        panic!(
            "verilator failed on rnic_artix7_datapath (CLK_MHZ={clk_mhz}):\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let files = list(&mdir, "cpp");
    let tail = format!(
        "#define CARD_MODEL {prefix}\n#define CARD_HEADER \"{prefix}.h\"\n\
         #define CARD_PFX(name) card_{tag}_##name\n#include \"{}\"\n",
        manifest.join("csrc/card.cpp").display()
    );
    let unit = vl_build::unity_source(&out.join(format!("card_{tag}_all.cpp")), &files, &tail);
    let deps = [
        manifest.join("csrc/card.cpp"),
        manifest.join("../csrc/vl_shim_common.hpp"),
    ];
    let key = vl_build::cache_key("2", &files, &deps, std::slice::from_ref(&mdir));
    vl_build::compile_cached(out, &format!("pcie7_card_{tag}"), &key, || {
        let mut b = vl_build::cc_build(out, &[unit], include, std::slice::from_ref(&mdir), false);
        b.opt_level(2).flag("-Wno-uninitialized");
        b
    });
}

fn list(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}
