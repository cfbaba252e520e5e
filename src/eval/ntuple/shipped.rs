//! The network this build ships, embedded in the binary at build time from `nets/`, so `cargo run --release` and the
//! container image use it with no extra step. `--weights FILE` / `ADVISOR_WEIGHTS` replace it; `--weights none`
//! runs without a network.
//!
//! It is a network of two stages kept as two files (see [`staged`]): a stage list,
//! `nets/4x6-stages-<checksum>.json`, names the weight file of each stage and its checksum. The list is named by its
//! own checksum, written here: a build that embeds any other list fails [`load`] with a checksum error instead of
//! silently advising with an unknown network, and the list in turn names its parts' checksums.
//!
//! The stages: from a new board, the second network trained here (`9610fc26ea7e3d8b`, 10.1 billion moves: the
//! strongest middle game, 16384 in 88.9% of 1000 games at 3 plies); from the first 16384 on, the seventh
//! (`6ede512830f0a44c`, 35.4 billion moves with halving restarts: the strongest late game). docs/strength.md has
//! their measurements side by side.

use std::path::{Path, PathBuf};

use super::file::NetFileError;
use super::staged::{self, PartBytes, StageList, StagedError};
use super::Network;

/// The one place the shipped network is named: shipping another network is this line, [`PARTS`] and the files in
/// `nets/`.
macro_rules! shipped_checksum {
    () => {
        "90d6b7a5db066a49"
    };
}

/// The first 16 hex digits of the SHA-256 of the shipped stage list (`advisor2048 net info` and `/healthz` print the
/// same).
pub const CHECKSUM: &str = shipped_checksum!();
/// The shipped stage list, relative to the package root.
pub const PATH: &str = concat!("nets/4x6-stages-", shipped_checksum!(), ".json");

static LIST: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/nets/4x6-stages-",
    shipped_checksum!(),
    ".json"
));

/// The parts the stage list names, by file name (relative to `nets/`), embedded.
pub static PARTS: &[(&str, &[u8])] = &[
    (
        "4x6-9610fc26ea7e3d8b.a2n",
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/nets/4x6-9610fc26ea7e3d8b.a2n")),
    ),
    (
        "4x6-6ede512830f0a44c.a2n",
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/nets/4x6-6ede512830f0a44c.a2n")),
    ),
];

/// The shipped stage list as embedded in this binary.
pub fn bytes() -> &'static [u8] {
    LIST
}

/// Decodes and checks the shipped network: the list against [`CHECKSUM`], each part against the list (inflating
/// 2 x 134 MB of f16 weights, kept as f16 in memory: 256 MiB). Each part's compressed bytes are handed back to the
/// kernel once decoded ([`staged::release_embedded`]): they are not read again unless the network is loaded again.
pub fn load() -> Result<Network, StagedError> {
    let list = StageList::parse(LIST).map_err(|reason| StagedError::List {
        path: PATH.into(),
        reason,
    })?;
    let mut parts = Vec::with_capacity(list.stages.len());
    for (stage, file, _) in list.files() {
        let bytes = PARTS
            .iter()
            .find(|(name, _)| *name == file)
            .map(|(_, b)| *b)
            .ok_or_else(|| StagedError::Part {
                stage,
                path: Path::new("nets").join(file),
                source: NetFileError::Io(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not embedded in this binary",
                )),
            })?;
        parts.push((PathBuf::from(file), PartBytes::Embedded(bytes)));
    }
    let net = staged::assemble(&list, LIST, parts)?;
    let checksum = net.info.as_ref().map(|i| i.checksum().to_owned()).unwrap_or_default();
    if checksum != CHECKSUM {
        return Err(StagedError::File(NetFileError::Checksum {
            stored: CHECKSUM.to_owned(),
            computed: checksum,
        }));
    }
    Ok(net)
}
