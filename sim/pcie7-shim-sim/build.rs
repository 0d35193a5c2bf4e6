//! Verilates `boards/artix7-pcie/rnic_pcie7_shim.v` at DATA_W 64 and 128 and
//! links both models, the Verilator runtime and the thin C ABI
//! (csrc/shim.cpp) into this crate. The shim alone verilates and compiles in
//! seconds, so it is not wrapped with rnic_core.
//!
//! Without Verilator (or without the shim source) the crate builds with no
//! model: `pcie7_shim_sim::MODEL_AVAILABLE` is false, and the tests say they
//! were skipped. Knobs: `VERILATOR` (binary, default `verilator` on PATH).

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

const WIDTHS: [u32; 2] = [64, 128];

fn main() {
    println!("cargo:rustc-check-cfg=cfg(pcie7_model)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/shim.cpp");
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
    vl_build::link_runtime();
    println!("cargo:rustc-cfg=pcie7_model");
}
