//! The image file: a fixed 512-byte header, then the bitstream.
//!
//! All integers little-endian. Offsets in the header:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0x000 | 8 | magic `RNICFWIM` |
//! | 0x008 | 2 | format version (1) |
//! | 0x00A | 2 | header length (512) |
//! | 0x00C | 4 | flags (0) |
//! | 0x010 | 16 | board name, ASCII, NUL padded |
//! | 0x020 | 32 | FPGA part, ASCII, NUL padded |
//! | 0x040 | 4 | build version: major[31:24] minor[23:16] patch[15:0] |
//! | 0x044 | 40 | git commit, lower-case hex, NUL padded |
//! | 0x06C | 4 | reserved (0) |
//! | 0x070 | 8 | bitstream length in bytes |
//! | 0x078 | 4 | CRC-32 (IEEE) of the bitstream |
//! | 0x07C | 4 | reserved (0) |
//! | 0x080 | 32 | SHA-256 of the bitstream |
//! | 0x0A0 | 2 | length of the knobs text |
//! | 0x0A2 | 346 | build knobs, UTF-8 `KEY=VALUE` lines, NUL padded |
//! | 0x1FC | 4 | CRC-32 of header bytes 0x000..0x1FC |
//!
//! The same 512 bytes are what a flash slot keeps in its last sector.

use serde::Serialize;
use sha2::{Digest, Sha256};

pub const MAGIC: &[u8; 8] = b"RNICFWIM";
pub const FORMAT_VERSION: u16 = 1;
pub const HEADER_LEN: usize = 512;

const OFF_BOARD: usize = 0x10;
const OFF_PART: usize = 0x20;
const OFF_VERSION: usize = 0x40;
const OFF_GIT: usize = 0x44;
const OFF_LEN: usize = 0x70;
const OFF_CRC: usize = 0x78;
const OFF_SHA: usize = 0x80;
const OFF_KNOBS_LEN: usize = 0xA0;
const OFF_KNOBS: usize = 0xA2;
const OFF_HCRC: usize = 0x1FC;
pub(crate) const BOARD_MAX: usize = 16;
pub(crate) const PART_MAX: usize = 32;
const GIT_MAX: usize = 40;
pub const KNOBS_MAX: usize = OFF_HCRC - OFF_KNOBS;

/// Why an image (or a slot's header) is not usable. Every variant is
/// detected before anything is erased.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not an rnic firmware image: it starts with {found}, expected \"RNICFWIM\"")]
    NotAnImage { found: String },
    #[error("truncated: {have} bytes, the header alone is {HEADER_LEN}")]
    ShortHeader { have: usize },
    #[error(
        "image format version {0} is not supported (this tool reads version {FORMAT_VERSION})"
    )]
    Version(u16),
    #[error("header length {0} (expected {HEADER_LEN})")]
    HeaderLen(u16),
    #[error(
        "header CRC-32 mismatch: stored {stored:08x}, computed {computed:08x} (header corrupted)"
    )]
    HeaderCrc { stored: u32, computed: u32 },
    #[error("bad header field {field}: {why}")]
    Field { field: &'static str, why: String },
    #[error("truncated: the header announces a {want}-byte bitstream, the file holds {have}")]
    Truncated { have: u64, want: u64 },
    #[error("{extra} unexpected bytes after the {len}-byte bitstream")]
    Trailing { extra: u64, len: u64 },
    #[error("bitstream CRC-32 mismatch: header says {stored:08x}, bitstream has {computed:08x}")]
    BitstreamCrc { stored: u32, computed: u32 },
    #[error("bitstream SHA-256 mismatch: header says {stored}, bitstream has {computed}")]
    BitstreamSha { stored: String, computed: String },
    #[error(transparent)]
    UnknownBoard(#[from] crate::board::UnknownBoard),
    #[error("board {0} is estimate-only (a resource estimate, no bitstream): it has no image and no flash")]
    EstimateOnly(String),
    #[error("image is for board {image} ({image_part}), this device is {device} ({device_part})")]
    WrongBoard {
        image: String,
        image_part: String,
        device: String,
        device_part: String,
    },
    #[error("image names part {image} but board {board} has part {part}")]
    WrongPart {
        image: String,
        board: String,
        part: String,
    },
    #[error("bitstream of {len} bytes is too large for the {slot} slot ({max} bytes at most)")]
    TooLarge { len: u64, max: u64, slot: String },
    #[error("not a bitstream for {board}: {why}")]
    BadBitstream { board: String, why: String },
}

/// Build information carried in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct BuildInfo {
    /// (major, minor, patch).
    pub version: (u8, u8, u16),
    /// Git commit (hex, up to 40 digits).
    pub git_hash: String,
    /// Build knobs, e.g. `DATA_W=64`.
    pub knobs: Vec<(String, String)>,
}

impl BuildInfo {
    pub fn version_string(&self) -> String {
        format!("{}.{}.{}", self.version.0, self.version.1, self.version.2)
    }

    /// Parse `MAJOR.MINOR.PATCH`.
    pub fn parse_version(s: &str) -> Result<(u8, u8, u16), String> {
        let p: Vec<&str> = s.split('.').collect();
        let bad = || format!("version {s:?}: expected MAJOR.MINOR.PATCH (0..255.0..255.0..65535)");
        if p.len() != 3 {
            return Err(bad());
        }
        Ok((
            p[0].parse().map_err(|_| bad())?,
            p[1].parse().map_err(|_| bad())?,
            p[2].parse().map_err(|_| bad())?,
        ))
    }

    fn version_word(&self) -> u32 {
        (u32::from(self.version.0) << 24)
            | (u32::from(self.version.1) << 16)
            | u32::from(self.version.2)
    }
}

/// A parsed, self-consistent header (its own CRC checked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    pub format_version: u16,
    pub board: String,
    pub part: String,
    pub build: BuildInfo,
    pub bitstream_len: u64,
    pub bitstream_crc32: u32,
    /// Lower-case hex.
    pub bitstream_sha256: String,
    pub header_crc32: u32,
}

fn put_str(
    h: &mut [u8],
    off: usize,
    max: usize,
    s: &str,
    field: &'static str,
) -> Result<(), ImageError> {
    if s.len() > max || s.bytes().any(|b| !(0x21..0x7F).contains(&b)) {
        return Err(ImageError::Field {
            field,
            why: format!("{s:?}: 1..{max} printable ASCII characters without spaces"),
        });
    }
    h[off..off + s.len()].copy_from_slice(s.as_bytes());
    Ok(())
}

fn get_str(h: &[u8], off: usize, max: usize, field: &'static str) -> Result<String, ImageError> {
    let raw = &h[off..off + max];
    let end = raw.iter().position(|&b| b == 0).unwrap_or(max);
    if raw[end..].iter().any(|&b| b != 0) || raw[..end].iter().any(|b| !(0x21..0x7F).contains(b)) {
        return Err(ImageError::Field {
            field,
            why: "not NUL-padded printable ASCII".into(),
        });
    }
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

fn le32(h: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(h[off..off + 4].try_into().unwrap())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn knobs_text(knobs: &[(String, String)]) -> Result<String, ImageError> {
    let mut t = String::new();
    for (k, v) in knobs {
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(ImageError::Field {
                field: "knobs",
                why: format!("knob name {k:?}: letters, digits and _ only"),
            });
        }
        if v.contains(['\n', '\0']) {
            return Err(ImageError::Field {
                field: "knobs",
                why: format!("knob {k}: value contains a newline or NUL"),
            });
        }
        t.push_str(k);
        t.push('=');
        t.push_str(v);
        t.push('\n');
    }
    if t.len() > KNOBS_MAX {
        return Err(ImageError::Field {
            field: "knobs",
            why: format!("{} bytes of knobs, at most {KNOBS_MAX}", t.len()),
        });
    }
    Ok(t)
}

impl Header {
    /// A header describing `bitstream`.
    pub fn for_bitstream(board: &str, part: &str, build: BuildInfo, bitstream: &[u8]) -> Self {
        Header {
            format_version: FORMAT_VERSION,
            board: board.to_string(),
            part: part.to_string(),
            build,
            bitstream_len: bitstream.len() as u64,
            bitstream_crc32: crc32fast::hash(bitstream),
            bitstream_sha256: hex(&Sha256::digest(bitstream)),
            header_crc32: 0,
        }
    }

    /// The 512 header bytes (the header CRC computed here).
    pub fn to_bytes(&self) -> Result<[u8; HEADER_LEN], ImageError> {
        let mut h = [0u8; HEADER_LEN];
        h[..8].copy_from_slice(MAGIC);
        h[8..10].copy_from_slice(&self.format_version.to_le_bytes());
        h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        put_str(&mut h, OFF_BOARD, BOARD_MAX, &self.board, "board")?;
        put_str(&mut h, OFF_PART, PART_MAX, &self.part, "part")?;
        h[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&self.build.version_word().to_le_bytes());
        let g = &self.build.git_hash;
        if g.len() > GIT_MAX
            || !g
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(ImageError::Field {
                field: "git hash",
                why: format!("{g:?}: up to 40 lower-case hex digits"),
            });
        }
        h[OFF_GIT..OFF_GIT + g.len()].copy_from_slice(g.as_bytes());
        h[OFF_LEN..OFF_LEN + 8].copy_from_slice(&self.bitstream_len.to_le_bytes());
        h[OFF_CRC..OFF_CRC + 4].copy_from_slice(&self.bitstream_crc32.to_le_bytes());
        let sha = decode_sha(&self.bitstream_sha256)?;
        h[OFF_SHA..OFF_SHA + 32].copy_from_slice(&sha);
        let k = knobs_text(&self.build.knobs)?;
        h[OFF_KNOBS_LEN..OFF_KNOBS_LEN + 2].copy_from_slice(&(k.len() as u16).to_le_bytes());
        h[OFF_KNOBS..OFF_KNOBS + k.len()].copy_from_slice(k.as_bytes());
        let c = crc32fast::hash(&h[..OFF_HCRC]);
        h[OFF_HCRC..].copy_from_slice(&c.to_le_bytes());
        Ok(h)
    }

    /// Parse and check a header on its own (magic, version, header CRC,
    /// fields). The first thing looked at is the magic, so any file that is
    /// not an image says so.
    pub fn parse(b: &[u8]) -> Result<Self, ImageError> {
        let m = &b[..b.len().min(8)];
        if m != &MAGIC[..m.len()] || b.is_empty() {
            return Err(ImageError::NotAnImage {
                found: describe_magic(m),
            });
        }
        if b.len() < HEADER_LEN {
            return Err(ImageError::ShortHeader { have: b.len() });
        }
        let h = &b[..HEADER_LEN];
        let stored = le32(h, OFF_HCRC);
        let computed = crc32fast::hash(&h[..OFF_HCRC]);
        if stored != computed {
            return Err(ImageError::HeaderCrc { stored, computed });
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != FORMAT_VERSION {
            return Err(ImageError::Version(version));
        }
        let hl = u16::from_le_bytes([h[10], h[11]]);
        if hl as usize != HEADER_LEN {
            return Err(ImageError::HeaderLen(hl));
        }
        let vw = le32(h, OFF_VERSION);
        let kl = u16::from_le_bytes([h[OFF_KNOBS_LEN], h[OFF_KNOBS_LEN + 1]]) as usize;
        if kl > KNOBS_MAX {
            return Err(ImageError::Field {
                field: "knobs",
                why: format!("length {kl} > {KNOBS_MAX}"),
            });
        }
        let text =
            std::str::from_utf8(&h[OFF_KNOBS..OFF_KNOBS + kl]).map_err(|_| ImageError::Field {
                field: "knobs",
                why: "not UTF-8".into(),
            })?;
        let mut knobs = Vec::new();
        for line in text.lines() {
            let (k, v) = line.split_once('=').ok_or_else(|| ImageError::Field {
                field: "knobs",
                why: format!("line {line:?} is not KEY=VALUE"),
            })?;
            knobs.push((k.to_string(), v.to_string()));
        }
        let git = get_str(h, OFF_GIT, GIT_MAX, "git hash")?;
        Ok(Header {
            format_version: version,
            board: get_str(h, OFF_BOARD, BOARD_MAX, "board")?,
            part: get_str(h, OFF_PART, PART_MAX, "part")?,
            build: BuildInfo {
                version: ((vw >> 24) as u8, (vw >> 16) as u8, vw as u16),
                git_hash: git,
                knobs,
            },
            bitstream_len: u64::from_le_bytes(h[OFF_LEN..OFF_LEN + 8].try_into().unwrap()),
            bitstream_crc32: le32(h, OFF_CRC),
            bitstream_sha256: hex(&h[OFF_SHA..OFF_SHA + 32]),
            header_crc32: stored,
        })
    }

    /// Check `bits` against the length, CRC-32 and SHA-256 in this header.
    pub fn check_bitstream(&self, bits: &[u8]) -> Result<(), ImageError> {
        let have = bits.len() as u64;
        if have < self.bitstream_len {
            return Err(ImageError::Truncated {
                have,
                want: self.bitstream_len,
            });
        }
        if have > self.bitstream_len {
            return Err(ImageError::Trailing {
                extra: have - self.bitstream_len,
                len: self.bitstream_len,
            });
        }
        let computed = crc32fast::hash(bits);
        if computed != self.bitstream_crc32 {
            return Err(ImageError::BitstreamCrc {
                stored: self.bitstream_crc32,
                computed,
            });
        }
        let sha = hex(&Sha256::digest(bits));
        if sha != self.bitstream_sha256 {
            return Err(ImageError::BitstreamSha {
                stored: self.bitstream_sha256.clone(),
                computed: sha,
            });
        }
        Ok(())
    }

    /// Check that this image may go to `board`: board name, part, size for
    /// the slot that holds at most `slot_max` bytes, bitstream kind.
    pub fn check_for(
        &self,
        board: &crate::Board,
        slot: &str,
        slot_max: u64,
        bits: &[u8],
    ) -> Result<(), ImageError> {
        let image_board = crate::board::board(&self.board)?;
        if image_board.part != self.part {
            return Err(ImageError::WrongPart {
                image: self.part.clone(),
                board: self.board.clone(),
                part: image_board.part.to_string(),
            });
        }
        if self.board != board.name {
            return Err(ImageError::WrongBoard {
                image: self.board.clone(),
                image_part: self.part.clone(),
                device: board.name.to_string(),
                device_part: board.part.to_string(),
            });
        }
        if self.bitstream_len > slot_max {
            return Err(ImageError::TooLarge {
                len: self.bitstream_len,
                max: slot_max,
                slot: slot.to_string(),
            });
        }
        board
            .image_target()?
            .bitstream
            .check(bits)
            .map_err(|why| ImageError::BadBitstream {
                board: board.name.to_string(),
                why,
            })
    }
}

fn decode_sha(s: &str) -> Result<[u8; 32], ImageError> {
    let bad = || ImageError::Field {
        field: "sha256",
        why: format!("{s:?} is not 64 hex digits"),
    };
    if s.len() != 64 {
        return Err(bad());
    }
    let mut o = [0u8; 32];
    for (i, b) in o.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(o)
}

fn describe_magic(m: &[u8]) -> String {
    if m.is_empty() {
        return "nothing (empty file)".into();
    }
    let printable = m.iter().all(|b| (0x20..0x7F).contains(b));
    if printable {
        format!("{:?}", String::from_utf8_lossy(m))
    } else {
        m.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A complete, checked image: header and bitstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub header: Header,
    pub bitstream: Vec<u8>,
}

impl Image {
    /// Make an image for `board` (a known board name) from a bitstream.
    pub fn pack(board: &str, build: BuildInfo, bitstream: Vec<u8>) -> Result<Self, ImageError> {
        let b = crate::board::board(board)?;
        let max = b.image_target()?.max_bitstream();
        let header = Header::for_bitstream(&b.name, &b.part, build, &bitstream);
        header.check_for(b, "largest", max, &bitstream)?;
        let bytes = header.to_bytes()?;
        Ok(Image {
            header: Header::parse(&bytes)?,
            bitstream,
        })
    }

    /// Parse and fully check an image file (header CRC, length, CRC-32 and
    /// SHA-256 of the bitstream).
    pub fn parse(file: &[u8]) -> Result<Self, ImageError> {
        let header = Header::parse(file)?;
        let bits = &file[HEADER_LEN..];
        header.check_bitstream(bits)?;
        Ok(Image {
            header,
            bitstream: bits.to_vec(),
        })
    }

    /// The image file bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ImageError> {
        let mut v = self.header.to_bytes()?.to_vec();
        v.extend_from_slice(&self.bitstream);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    fn build() -> BuildInfo {
        BuildInfo {
            version: (1, 2, 3),
            git_hash: "0123456789abcdef0123456789abcdef01234567".into(),
            knobs: vec![
                ("DATA_W".into(), "64".into()),
                ("NUM_Q".into(), "64".into()),
            ],
        }
    }

    fn bits(n: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; n];
        rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    #[test]
    fn round_trip() {
        let img = Image::pack("sim", build(), bits(10_000, 1)).unwrap();
        let f = img.to_bytes().unwrap();
        assert_eq!(f.len(), HEADER_LEN + 10_000);
        let back = Image::parse(&f).unwrap();
        assert_eq!(back, img);
        assert_eq!(back.header.part, "sim");
        assert_eq!(back.header.build.version_string(), "1.2.3");
        assert_eq!(back.header.build.knobs[1].1, "64");
    }

    #[test]
    fn every_corruption_is_refused() {
        let f = Image::pack("sim", build(), bits(5000, 2))
            .unwrap()
            .to_bytes()
            .unwrap();
        // Any flipped bit anywhere is caught.
        for i in (0..f.len()).step_by(37) {
            let mut g = f.clone();
            g[i] ^= 1 << (i % 8);
            assert!(Image::parse(&g).is_err(), "flip at {i}");
        }
        assert!(matches!(
            Image::parse(&f[..f.len() - 1]),
            Err(ImageError::Truncated { .. })
        ));
        assert!(matches!(
            Image::parse(&f[..100]),
            Err(ImageError::ShortHeader { have: 100 })
        ));
        assert!(matches!(
            Image::parse(b""),
            Err(ImageError::NotAnImage { .. })
        ));
        assert!(matches!(
            Image::parse(b"\x7fELF\x02\x01"),
            Err(ImageError::NotAnImage { .. })
        ));
        let mut g = f.clone();
        g.push(0);
        assert!(matches!(
            Image::parse(&g),
            Err(ImageError::Trailing { extra: 1, .. })
        ));
        let mut g = f.clone();
        g[HEADER_LEN + 7] ^= 0x80;
        assert!(matches!(
            Image::parse(&g),
            Err(ImageError::BitstreamCrc { .. })
        ));
    }

    #[test]
    fn sha_is_checked_on_its_own() {
        // A changed bitstream with a matching CRC and header CRC: only the
        // SHA-256 catches it.
        let img = Image::pack("sim", build(), bits(3000, 3)).unwrap();
        let mut other = img.bitstream.clone();
        other[0] ^= 0xFF;
        let mut h = img.header.clone();
        h.bitstream_crc32 = crc32fast::hash(&other);
        let mut f = h.to_bytes().unwrap().to_vec();
        f.extend_from_slice(&other);
        assert!(matches!(
            Image::parse(&f),
            Err(ImageError::BitstreamSha { .. })
        ));
    }

    #[test]
    fn board_checks() {
        let sim = crate::board_by_name("sim").unwrap();
        let ecp5 = crate::board_by_name("ecp5-85f").unwrap();
        let mut b = vec![0xFFu8, 0x00, 0xFF, 0xFF, 0xBD, 0xB3];
        b.extend(bits(100, 4));
        let img = Image::pack("ecp5-85f", build(), b.clone()).unwrap();
        let e = img
            .header
            .check_for(sim, "update", 1 << 20, &img.bitstream)
            .unwrap_err();
        assert!(
            e.to_string().contains(
                "image is for board ecp5-85f (LFE5U-85F-8BG381C), this device is sim (sim)"
            ),
            "{e}"
        );
        assert!(img
            .header
            .check_for(ecp5, "update", 1 << 20, &img.bitstream)
            .is_ok());
        let e = img
            .header
            .check_for(ecp5, "update", 50, &img.bitstream)
            .unwrap_err();
        assert!(matches!(
            e,
            ImageError::TooLarge {
                len: 106,
                max: 50,
                ..
            }
        ));
        // A header claiming board sim with another part.
        let mut h = img.header.clone();
        h.board = "sim".into();
        let e = h
            .check_for(sim, "update", 1 << 20, &img.bitstream)
            .unwrap_err();
        assert!(matches!(e, ImageError::WrongPart { .. }), "{e}");
        // An ECP5 image must look like one.
        assert!(matches!(
            Image::pack("ecp5-85f", build(), bits(100, 5)),
            Err(ImageError::BadBitstream { .. })
        ));
        assert!(matches!(
            Image::pack("nope", build(), vec![]),
            Err(ImageError::UnknownBoard(_))
        ));
        // an estimate-only target has no bitstream to pack
        assert_eq!(
            Image::pack("xc7a200t-core", build(), bits(100, 6))
                .unwrap_err()
                .to_string(),
            "board xc7a200t-core is estimate-only (a resource estimate, no bitstream): it has \
             no image and no flash"
        );
    }

    #[test]
    fn bad_fields_are_refused() {
        let mut b = build();
        b.git_hash = "XYZ".into();
        assert!(Image::pack("sim", b, vec![1]).is_err());
        let mut b = build();
        b.knobs.push(("A B".into(), "1".into()));
        assert!(Image::pack("sim", b, vec![1]).is_err());
        assert!(BuildInfo::parse_version("1.2").is_err());
        assert_eq!(BuildInfo::parse_version("1.2.300").unwrap(), (1, 2, 300));
    }
}
