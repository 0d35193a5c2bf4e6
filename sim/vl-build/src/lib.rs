//! Build-script helpers shared by the crates that link a Verilator model
//! (`rnic-sim`, `pcie7-shim-sim`, `gtp7-pipe-sim`): where Verilator keeps
//! its runtime, the one set of compiler flags verilated C++ is built with,
//! and the libraries it links against. Used as a build-dependency.

pub use cc;
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

/// A key for [`compile_cached`]: the optimisation level, the compiler, the
/// target, and the names and contents of `files`, of `deps` and of every
/// header in `header_dirs`. Names, not paths: `cargo clippy` and `cargo
/// build` run a build script in two OUT_DIRs, and what they compile is the
/// same.
pub fn cache_key(
    opt: &str,
    files: &[PathBuf],
    deps: &[PathBuf],
    header_dirs: &[PathBuf],
) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    opt.hash(&mut h);
    std::env::var("CXX").ok().hash(&mut h);
    std::env::var("TARGET").ok().hash(&mut h);
    for f in files.iter().chain(deps) {
        f.file_name().hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    for d in header_dirs {
        let mut hs: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "h"))
            .collect();
        hs.sort();
        for f in hs {
            f.file_name().hash(&mut h);
            std::fs::read(&f).unwrap_or_default().hash(&mut h);
        }
    }
    format!("{:016x}", h.finish())
}

/// Compiles static library `name` into `out` with `build` unless an
/// identical one (same `key`, from [`cache_key`]) is in `out` already or in
/// `target/<profile>/vl-cache`, which every OUT_DIR of the profile shares:
/// so `cargo clippy` and `cargo build`, and the crates that link the same
/// Verilator runtime, compile each library once. Emits the link lines.
pub fn compile_cached(out: &Path, name: &str, key: &str, build: impl FnOnce() -> cc::Build) {
    let lib = out.join(format!("lib{name}.a"));
    let stamp = out.join(format!("{name}.key"));
    let link = || {
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static={name}");
    };
    if lib.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(key) {
        link();
        return;
    }
    let cached = shared_cache(out).map(|d| d.join(format!("lib{name}-{key}.a")));
    if let Some(c) = cached.as_ref().filter(|c| c.exists()) {
        if std::fs::copy(c, &lib).is_ok() {
            std::fs::write(&stamp, key).unwrap();
            link();
            return;
        }
    }
    build().out_dir(out).cargo_metadata(false).compile(name);
    link();
    std::fs::write(&stamp, key).unwrap();
    if let Some(c) = cached {
        // written under a temporary name, then renamed: a build running
        // beside this one never links half a library
        let tmp = c.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::copy(&lib, &tmp).is_ok() {
            let _ = std::fs::rename(&tmp, &c);
        }
        keep_only(&c, &format!("lib{name}-"));
    }
}

/// `target/<profile>/vl-cache` (made if missing), which every OUT_DIR of
/// the profile shares; None if it cannot be made.
fn shared_cache(out: &Path) -> Option<PathBuf> {
    out.ancestors()
        .nth(3)
        .map(|p| p.join("vl-cache"))
        .filter(|p| std::fs::create_dir_all(p).is_ok())
}

/// Removes every other entry of `keep`'s directory whose name starts with
/// `prefix` (older keys of the same library or model), but the temporary
/// ones a build running beside this one is still writing: only the newest
/// key of each is kept.
fn keep_only(keep: &Path, prefix: &str) {
    for old in std::fs::read_dir(keep.parent().unwrap())
        .into_iter()
        .flatten()
        .flatten()
    {
        let n = old.file_name().to_string_lossy().into_owned();
        if n.starts_with(prefix) && !n.contains(".tmp") && old.path() != keep {
            let p = old.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// Verilator's runtime (`verilated.cpp`, `verilated_threads.cpp`, and
/// with `fst_trace` `verilated_fst_c.cpp`) as static library `name`, at
/// optimisation `opt`, through [`compile_cached`].
pub fn runtime(out: &Path, vl_include: &Path, fst_trace: bool, opt: &str, name: &str) {
    let mut files = vec![
        vl_include.join("verilated.cpp"),
        vl_include.join("verilated_threads.cpp"),
    ];
    if fst_trace {
        files.push(vl_include.join("verilated_fst_c.cpp"));
    }
    let key = cache_key(
        &format!("{opt} fst={fst_trace}"),
        &files,
        &[],
        &[vl_include.to_path_buf()],
    );
    compile_cached(out, name, &key, || {
        let mut b = cc_build(out, &files, vl_include, &[], fst_trace);
        b.opt_level_str(opt);
        b
    });
}

/// One translation unit that includes every file of `files`, as
/// Verilator's own makefile builds with VM_PARALLEL_BUILDS=0 (its
/// `__ALL.cpp`), followed by `tail`; written to `path`. A small model is a
/// few small files, and compiled apart each parses verilated.h again.
pub fn unity_source(path: &Path, files: &[PathBuf], tail: &str) -> PathBuf {
    let mut unit = String::new();
    for f in files {
        unit += &format!("#include \"{}\"\n", f.display());
    }
    unit += tail;
    if std::fs::read_to_string(path).ok().as_deref() != Some(unit.as_str()) {
        std::fs::write(path, unit).unwrap();
    }
    path.to_path_buf()
}

/// A key for [`verilate_cached`]: the Verilator binary's version, its
/// arguments, and the names and contents of every file in `inputs` (the
/// RTL and whatever it includes).
pub fn verilate_key(verilator: &str, args: &[String], inputs: &[PathBuf]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let version = Command::new(verilator)
        .arg("--version")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    version.hash(&mut h);
    args.hash(&mut h);
    for f in inputs {
        f.file_name().hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Fills `mdir` with Verilator's output for `key` (from [`verilate_key`]):
/// copied from `target/<profile>/vl-cache` when an earlier run of any
/// OUT_DIR of the profile left it there, else made by `verilate` (which
/// writes into `mdir`) and left there. `cargo clippy` and `cargo build`
/// run a build script in two OUT_DIRs; the second then copies a model's
/// C++ instead of verilating it again (about 5 s of one core per rnic
/// model, on the build's critical path).
pub fn verilate_cached(out: &Path, name: &str, key: &str, mdir: &Path, verilate: impl FnOnce()) {
    let entry = shared_cache(out).map(|d| d.join(format!("vl-{name}-{key}")));
    if let Some(e) = entry.as_ref().filter(|e| e.join("done").exists()) {
        let _ = std::fs::remove_dir_all(mdir);
        if copy_dir(e, mdir).is_ok() {
            let _ = std::fs::remove_file(mdir.join("done"));
            return;
        }
    }
    verilate();
    if let Some(e) = entry {
        // copied under a temporary name, then renamed: a build running
        // beside this one never copies half a model
        let tmp = e.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        if copy_dir(mdir, &tmp).is_ok() && std::fs::write(tmp.join("done"), key).is_ok() {
            if std::fs::rename(&tmp, &e).is_err() {
                let _ = std::fs::remove_dir_all(&tmp);
            }
        } else {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        keep_only(&e, &format!("vl-{name}-"));
    }
}

/// The files of directory `from` (not its subdirectories) into a new
/// directory `to`.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}
