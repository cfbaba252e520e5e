//! The network this build ships: a 4x6 network trained by `advisor2048 train` (see `docs/training.md`), embedded
//! in the binary at build time from `nets/`, so `cargo run --release` and the container image use it with no extra
//! step. `--weights FILE` / `ADVISOR_WEIGHTS` replace it; `--weights none` runs without a network.
//!
//! The file is named by its checksum and the checksum is written here: a build that embeds any other bytes fails
//! [`load`] with a checksum error instead of silently advising with an unknown network.

use super::file::{self, NetFileError};
use super::Network;

/// The one place the shipped network is named: shipping another network is this line (and the file in `nets/`).
macro_rules! shipped_checksum {
    () => {
        "6ede512830f0a44c"
    };
}

/// The first 16 hex digits of the SHA-256 of the shipped weight file (`advisor2048 net info` prints the same).
pub const CHECKSUM: &str = shipped_checksum!();
/// The shipped file, relative to the package root.
pub const PATH: &str = concat!("nets/4x6-", shipped_checksum!(), ".a2n");

static BYTES: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/nets/4x6-",
    shipped_checksum!(),
    ".a2n"
));

/// The shipped weight file as embedded in this binary.
pub fn bytes() -> &'static [u8] {
    BYTES
}

/// Decodes and checks the shipped network (inflating 134 MB of f16 weights, kept as f16 in memory).
pub fn load() -> Result<Network, NetFileError> {
    let (net, info, _) = file::decode(BYTES)?;
    if info.checksum() != CHECKSUM {
        return Err(NetFileError::Checksum {
            stored: CHECKSUM.to_owned(),
            computed: info.checksum().to_owned(),
        });
    }
    Ok(net)
}
