//! Build-script helpers shared by the crates that link a Verilator model
//! (`rnic-sim`, `pcie7-shim-sim`, `gtp7-pipe-sim`): where Verilator keeps
//! its runtime, the one set of compiler flags verilated C++ is built with,
//! and the libraries it links against. Used as a build-dependency.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Verilator's root (`verilator --getenv VERILATOR_ROOT`), checked to hold
/// the runtime sources; the error says what is missing.
pub fn verilator_root(verilator: &str) -> Result<PathBuf, String> {
    let o = Command::new(verilator)
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
        .map_err(|e| format!("`{verilator}` was not found or does not run ({e})"))?;
    if !o.status.success() {
        return Err(format!(
            "`{verilator} --getenv VERILATOR_ROOT` failed ({})",
            o.status
        ));
    }
    let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    if p.join("include/verilated.cpp").exists() {
        Ok(p)
    } else {
        Err(format!(
            "Verilator's runtime sources were not found under {} (is the verilator package complete?)",
            p.display()
        ))
    }
}

/// A C++17 build of `files` into `out` with Verilator's include
/// directories under `vl_include` (its `include`), the project's
/// `includes`, and the warnings verilated code trips switched off. Tracing
/// is off unless `fst_trace` (then FST, as rnic-sim records waves). The
/// caller sets the optimisation level and compiles.
pub fn cc_build(
    out: &Path,
    files: &[PathBuf],
    vl_include: &Path,
    includes: &[PathBuf],
    fst_trace: bool,
) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        .out_dir(out)
        .files(files)
        .include(vl_include)
        .include(vl_include.join("vltstd"))
        .debug(false)
        .warnings(false)
        .extra_warnings(false)
        .cpp_link_stdlib(None)
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", if fst_trace { "1" } else { "0" })
        .flag("-faligned-new")
        .flag("-Wno-bool-operation")
        .flag("-Wno-sign-compare")
        .flag("-Wno-unused-parameter")
        .flag("-Wno-unused-variable")
        .flag("-Wno-shadow");
    if fst_trace {
        b.define("VM_TRACE_FST", "1").define("VM_TRACE_VCD", "0");
    }
    for i in includes {
        b.include(i);
    }
    b
}

/// The libraries a verilated model and its runtime need at link time.
pub fn link_runtime() {
    println!("cargo:rustc-link-lib=stdc++");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:rustc-link-lib=atomic");
}
