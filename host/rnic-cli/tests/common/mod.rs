//! What the `rnic` command-line tests share: running the built binary and
//! reading what it printed.

// every test binary compiles this module and uses part of it
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs this build's `rnic` with `args`, to its end.
pub fn rnic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(args)
        .output()
        .expect("run rnic")
}

/// Output bytes as text (lossy: a test prints what it got).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
