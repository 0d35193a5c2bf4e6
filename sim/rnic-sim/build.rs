//! Verilates `rnic_core` once per entry of `MODELS` in src/model_table.rs
//! (DATA_W = 64 and 256 with the default knobs; the write-only and the
//! mp-only builds at DATA_W 64) and links the models, the Verilator runtime
//! and the C shim (csrc/shim.cpp) into this crate.
//!
//! Inputs: every `hw/rtl/*.v` and `hw/rtl/generated/*.sv` (or the directory
//! named by `RNIC_SIM_RTL_DIR`, for harness development against another top).
//! When `rnic_core.v` does not exist yet, the crate builds without models
//! (`rnic_sim::RTL_AVAILABLE == false`) and says so with a cargo warning.
//!
//! Knobs (environment):
//! - `VERILATOR`: the verilator binary (default: `verilator` on PATH)
//! - `RNIC_SIM_RTL_DIR`: RTL directory (default: `<workspace>/hw/rtl`)
//! - `RNIC_SIM_CXX_OPT`: optimisation level for the model's fast path
//!   (default `2`; see the comment at `MODEL_OPT` for measurements)
//!
//! Compiled libraries are cached in OUT_DIR by a hash of their sources and
//! flags, so re-running the build script after an unrelated change (for
//! example of one of the two widths only) does not recompile everything;
//! and in `target/<profile>/vl-cache`, so that `cargo clippy` and `cargo
//! build`, which run this script in two OUT_DIRs, compile each model once.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

// MODELS (tag, DATA_W, knobs), ModelKnobs: the table src/verilated.rs
// binds. The shim exports `rnic_<tag>_*` for each; OUT_DIR/models.rs,
// written below, declares them to Rust.
#[allow(dead_code)] // the library uses the rest
mod model_table {
    include!("src/model_table.rs");
}
use model_table::MODELS;

/// Default optimisation of the model's per-cycle code. Measured on the
/// development machine (see README.md of this crate): -O2 gives the fastest
/// simulation for a moderate compile time; -O1 compiles a little faster.
const MODEL_OPT: &str = "2";
/// Optimisation of the waves' code (FST tracing), which runs only while a
/// trace is written: -O1, see `main`.
const TRACE_OPT: &str = "1";

fn main() {
    println!("cargo:rustc-check-cfg=cfg(rnic_sim_rtl)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/shim.cpp");
    println!("cargo:rerun-if-changed=src/model_table.rs");
    println!("cargo:rerun-if-changed=../csrc/vl_shim_common.hpp");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo:rerun-if-env-changed=RNIC_SIM_RTL_DIR");
    println!("cargo:rerun-if-env-changed=RNIC_SIM_CXX_OPT");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let rtl_dir = match env::var_os("RNIC_SIM_RTL_DIR") {
        Some(d) => PathBuf::from(d),
        None => manifest.join("../../hw/rtl"),
    };
    let generated = rtl_dir.join("generated");
    // A directory: cargo rescans it (recursively) for any change.
    println!("cargo:rerun-if-changed={}", rtl_dir.display());

    let mut sources = list(&rtl_dir, "v");
    sources.extend(list(&generated, "sv"));
    sources.extend(list(&generated, "v"));
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    if !rtl_dir.join("rnic_core.v").exists() {
        println!(
            "cargo:warning=rnic-sim: {} not found; building without the RTL model \
             (SimDevice::new will fail, RTL tests are skipped)",
            rtl_dir.join("rnic_core.v").display()
        );
        return;
    }

    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".to_string());
    let root = verilator_root(&verilator);
    let include = root.join("include");
    let opt = env::var("RNIC_SIM_CXX_OPT").unwrap_or_else(|_| MODEL_OPT.to_string());

    // Verilator's runtime, shared by the models.
    vl_build::runtime(&out, &include, true, "s", "rnic_vl_runtime");

    for m in MODELS {
        let tag = m.tag;
        let prefix = format!("Vrnic_core_{tag}");
        let mdir = out.join(tag);
        verilate(&verilator, &out, &rtl_dir, &sources, &mdir, &prefix, m);
        let (fast, slow) = model_files(&mdir, &prefix);
        // The waves' per-cycle code runs only while a trace is being
        // written, and at -O2 it was 40 % of a model's compile time (the
        // 1,024-QP model: 16 MB of it); -O1 compiles it in half the time.
        let (trace, fast): (Vec<PathBuf>, Vec<PathBuf>) = fast
            .into_iter()
            .partition(|f| f.to_string_lossy().contains("__Trace__"));
        let incs = [mdir.clone()];
        compile_cached(
            &out,
            &format!("rnic_{tag}_fast"),
            &fast,
            &include,
            &incs,
            &opt,
            &[],
        );
        if !trace.is_empty() {
            compile_cached(
                &out,
                &format!("rnic_{tag}_trace"),
                &trace,
                &include,
                &incs,
                TRACE_OPT,
                &[],
            );
        }
        compile_cached(
            &out,
            &format!("rnic_{tag}_slow"),
            &slow,
            &include,
            &incs,
            "0",
            &[],
        );

        let wrapper = out.join(format!("shim_{tag}.cpp"));
        let text = format!(
            "#define RNIC_MODEL {prefix}\n#define RNIC_HEADER \"{prefix}.h\"\n\
             #define RNIC_PFX(name) rnic_{tag}_##name\n#include \"{}\"\n",
            manifest.join("csrc/shim.cpp").display()
        );
        write_if_changed(&wrapper, &text);
        let shim_dep = manifest.join("csrc/shim.cpp");
        compile_cached(
            &out,
            &format!("rnic_{tag}_shim"),
            &[wrapper],
            &include,
            &incs,
            &opt,
            &[
                shim_dep,
                manifest.join("../csrc/vl_shim_common.hpp"),
                mdir.join(format!("{prefix}.h")),
            ],
        );
    }

    write_if_changed(&out.join("models.rs"), &models_rs());
    vl_build::link_runtime();
    println!("cargo:rustc-link-lib=z"); // FST waves
    println!("cargo:rustc-cfg=rnic_sim_rtl");
}

/// The Rust side of MODELS: one `vl_model!` each (src/verilated.rs) and
/// the lookup by width and knobs.
fn models_rs() -> String {
    let mut t = String::from("// Written by build.rs from src/model_table.rs.\n");
    for m in MODELS {
        t += &format!("vl_model!({0}, \"{0}\", {1});\n", m.tag, m.data_w);
    }
    t += "fn fns_for(data_w: u32, knobs: ModelKnobs) -> Option<&'static VlFns> {\n";
    t += "    match (data_w, knobs) {\n";
    for m in MODELS {
        t += &format!(
            "        ({}, ModelKnobs::{:?}) => Some(&{}::FNS),\n",
            m.data_w, m.knobs, m.tag
        );
    }
    t += "        _ => None,\n    }\n}\n";
    t
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: {msg}\n");
    panic!("{msg}");
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

fn verilator_root(verilator: &str) -> PathBuf {
    vl_build::verilator_root(verilator).unwrap_or_else(|e| {
        fail(&format!(
            "{e}. rnic-sim needs Verilator 5.006 or newer (and zlib). Run the project setup \
             first: .ci/setup"
        ))
    })
}

fn verilate(
    verilator: &str,
    out: &Path,
    rtl_dir: &Path,
    sources: &[PathBuf],
    mdir: &Path,
    prefix: &str,
    m: model_table::ModelSpec,
) {
    let (w, num_q) = (m.data_w, m.knobs.num_q());
    let knobs: Vec<&str> = m.knobs.params().split_whitespace().collect();
    let mut args: Vec<String> = [
        "--cc",
        "-O3",
        "--x-assign",
        "fast",
        "--x-initial",
        "unique",
        "--trace-fst",
        "--trace-structs",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
        "--top-module",
        "rnic_core",
        "--prefix",
        prefix,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("-GDATA_W={w}"));
    // the simulated NIC carries 64 queue pairs (the FPGA default is 16),
    // the many-QP model 1,024
    args.push(format!("-GNUM_Q={num_q}"));
    args.extend(knobs.iter().map(|k| format!("-G{k}")));
    // every simulated NIC has the record port (BAR0's record window; the
    // QP context cache's path), which FPGA builds leave out so far
    args.push("-GREC_PORT=1".into());
    // and the QP directory: QP numbers of 16 bits bound to its slots, so
    // every test runs with QP numbers that are not slot numbers
    args.push("-GQPN_W=16".into());
    args.push(format!("-I{}", rtl_dir.display()));
    args.push(format!("-I{}", rtl_dir.join("generated").display()));
    args.extend(sources.iter().map(|s| s.display().to_string()));
    // what the RTL may include, besides the sources
    let mut inputs = sources.to_vec();
    for d in [rtl_dir.to_path_buf(), rtl_dir.join("generated")] {
        inputs.extend(list(&d, "vh").into_iter().chain(list(&d, "svh")));
    }
    let key = vl_build::verilate_key(verilator, &args, &inputs);
    vl_build::verilate_cached(out, &format!("rnic_{}", m.tag), &key, mdir, || {
        let _ = fs::remove_dir_all(mdir);
        fs::create_dir_all(mdir).unwrap();
        let o = match Command::new(verilator)
            .args(&args)
            .arg("--Mdir")
            .arg(mdir)
            .output()
        {
            Ok(o) => o,
            Err(e) => fail(&format!(
                "could not run {verilator}: {e}. Run the project setup: .ci/setup"
            )),
        };
        if !o.status.success() {
            fail(&format!(
                "verilator failed on the RTL (DATA_W={w} NUM_Q={num_q} {knobs:?}):\n{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    });
}

/// Fast and slow C++ files of a Verilated model, from `<prefix>_classes.mk`.
fn model_files(mdir: &Path, prefix: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mk = fs::read_to_string(mdir.join(format!("{prefix}_classes.mk"))).unwrap();
    let (mut fast, mut slow) = (Vec::new(), Vec::new());
    let mut cur: Option<bool> = None;
    for line in mk.lines() {
        let t = line.trim();
        if let Some((var, _)) = t.split_once("+=") {
            let var = var.trim();
            cur = match var {
                "VM_CLASSES_FAST" | "VM_SUPPORT_FAST" => Some(true),
                "VM_CLASSES_SLOW" | "VM_SUPPORT_SLOW" => Some(false),
                _ => None,
            };
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            cur = None;
            continue;
        }
        if let Some(fast_list) = cur {
            let name = t.trim_end_matches('\\').trim();
            if name.is_empty() {
                continue;
            }
            let f = mdir.join(format!("{name}.cpp"));
            if fast_list {
                fast.push(f)
            } else {
                slow.push(f)
            }
        }
    }
    // Anything the .mk did not name (newer Verilator versions) goes to fast.
    for f in list(mdir, "cpp") {
        if !fast.contains(&f) && !slow.contains(&f) {
            fast.push(f);
        }
    }
    (fast, slow)
}

fn write_if_changed(p: &Path, text: &str) {
    if fs::read_to_string(p).ok().as_deref() != Some(text) {
        fs::write(p, text).unwrap();
    }
}

/// Compile `files` into static library `name` through vl_build's cache
/// (OUT_DIR, then `target/<profile>/vl-cache`), keyed by the sources, the
/// headers in the include dirs and the flags.
fn compile_cached(
    out: &Path,
    name: &str,
    files: &[PathBuf],
    vl_include: &Path,
    includes: &[PathBuf],
    opt: &str,
    extra_deps: &[PathBuf],
) {
    let key = vl_build::cache_key(opt, files, extra_deps, includes);
    vl_build::compile_cached(out, name, &key, || {
        let mut b = vl_build::cc_build(out, files, vl_include, includes, true);
        b.opt_level_str(opt)
            .flag("-fcf-protection=none")
            .flag("-Wno-uninitialized")
            .flag("-Wno-unused-but-set-variable");
        b
    });
}
