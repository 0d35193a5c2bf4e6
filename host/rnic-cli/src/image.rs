//! `rnic image pack` and `rnic image inspect`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use rnic_firmware::{BuildInfo, Image};

#[derive(Subcommand)]
pub enum ImageCmd {
    /// Make an image from a bitstream: header (board, part, build info,
    /// CRC-32, SHA-256) + bitstream.
    Pack(PackArgs),
    /// Show an image's header and check it (CRC-32, SHA-256, length).
    Inspect(InspectArgs),
    /// List the boards: kind, FPGA part, flash, slot layout.
    Boards(BoardsArgs),
}

#[derive(Args)]
pub struct BoardsArgs {
    /// One JSON object per board.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PackArgs {
    /// Board the bitstream is for (`rnic image boards` lists them).
    #[arg(long)]
    pub board: String,
    /// The bitstream (any bytes for `sim`).
    #[arg(long)]
    pub bitstream: PathBuf,
    /// Output image file.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Build version MAJOR.MINOR.PATCH.
    #[arg(long, default_value = "0.1.0")]
    pub version: String,
    /// Git commit of the build (hex); default: `git rev-parse HEAD` here, or empty.
    #[arg(long)]
    pub git_hash: Option<String>,
    /// Build knob KEY=VALUE (repeatable), e.g. --knob DATA_W=64.
    #[arg(long = "knob")]
    pub knobs: Vec<String>,
}

#[derive(Args)]
pub struct InspectArgs {
    pub file: PathBuf,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: &ImageCmd) -> Result<ExitCode> {
    match c {
        ImageCmd::Pack(a) => pack(a),
        ImageCmd::Inspect(a) => inspect(a),
        ImageCmd::Boards(a) => boards(a),
    }
}

fn git_head() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

pub fn read_file(p: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(p).with_context(|| format!("cannot read {what} {}", p.display()))
}

fn pack(a: &PackArgs) -> Result<ExitCode> {
    // before reading anything: an estimate-only target never has a bitstream
    rnic_firmware::board(&a.board)?.image_target()?;
    let bits = read_file(&a.bitstream, "bitstream")?;
    let version = BuildInfo::parse_version(&a.version).map_err(anyhow::Error::msg)?;
    let mut knobs = Vec::new();
    for k in &a.knobs {
        let Some((key, val)) = k.split_once('=') else {
            bail!("--knob {k:?}: expected KEY=VALUE");
        };
        knobs.push((key.to_string(), val.to_string()));
    }
    let build = BuildInfo {
        version,
        git_hash: a.git_hash.clone().unwrap_or_else(git_head).to_lowercase(),
        knobs,
    };
    let img = Image::pack(&a.board, build, bits)
        .with_context(|| format!("cannot pack {}", a.bitstream.display()))?;
    let bytes = img.to_bytes()?;
    std::fs::write(&a.output, &bytes)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    println!(
        "{}: {} bytes for board {} ({}), bitstream {} bytes, sha256 {}",
        a.output.display(),
        bytes.len(),
        img.header.board,
        img.header.part,
        img.header.bitstream_len,
        img.header.bitstream_sha256
    );
    Ok(ExitCode::SUCCESS)
}

/// Read and fully check an image file; errors name the file.
pub fn load(p: &Path) -> Result<Image> {
    let f = read_file(p, "image")?;
    Image::parse(&f).with_context(|| format!("{} is not a usable image", p.display()))
}

pub fn describe(h: &rnic_firmware::Header) -> String {
    let knobs: Vec<String> = h
        .build
        .knobs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "board {} part {} version {} git {} knobs [{}] bitstream {} bytes crc32 {:08x} sha256 {}",
        h.board,
        h.part,
        h.build.version_string(),
        if h.build.git_hash.is_empty() {
            "-"
        } else {
            &h.build.git_hash
        },
        knobs.join(" "),
        h.bitstream_len,
        h.bitstream_crc32,
        h.bitstream_sha256
    )
}

fn inspect(a: &InspectArgs) -> Result<ExitCode> {
    let img = load(&a.file)?;
    if a.json {
        println!(
            "{}",
            serde_json::json!({"file": a.file, "valid": true, "header": img.header})
        );
    } else {
        println!(
            "{}: valid rnic image (format {})",
            a.file.display(),
            img.header.format_version
        );
        println!("  {}", describe(&img.header));
    }
    Ok(ExitCode::SUCCESS)
}

fn boards(a: &BoardsArgs) -> Result<ExitCode> {
    for b in rnic_firmware::boards() {
        if a.json {
            println!("{}", serde_json::to_string(b)?);
            continue;
        }
        let Some(t) = &b.image else {
            println!(
                "{:<16} id {}  part {:<17} estimate-only: no bitstream, no image, no flash",
                b.name, b.id, b.part
            );
            println!("{:<16} {}", "", b.description);
            continue;
        };
        let l = &t.layout;
        println!(
            "{:<16} id {}  part {:<17} flash {} MiB (JEDEC {:02x?})  golden {:#09x}+{} MiB  update {:#09x}+{} MiB  boot record {:#09x}",
            b.name,
            b.id,
            b.part,
            t.flash.size >> 20,
            t.flash.jedec_id,
            l.golden.base,
            l.golden.size >> 20,
            l.update.base,
            l.update.size >> 20,
            l.boot_record
        );
        println!("{:<16} {}", "", b.description);
        if let Some(n) = &t.note {
            println!("{:<16} flash: {n}", "");
        }
    }
    Ok(ExitCode::SUCCESS)
}
