//! The reach-odds model this build ships: fitted by `advisor2048 odds-fit` for the shipped network
//! ([`crate::eval::ntuple::shipped`]) at the default settings, embedded from `nets/` at build time. A service
//! running another network, or a build whose default play changed, has no built-in odds until they are re-fitted
//! (one command, docs/odds.md); the tests fail until then.

use super::file::{self, OddsFileError};
use super::OddsModel;

/// The one place the shipped model is named: `nets/odds-<the network's checksum>.json`.
macro_rules! shipped_odds {
    () => {
        "nets/odds-90d6b7a5db066a49.json"
    };
}

/// The shipped file, relative to the package root.
pub const PATH: &str = shipped_odds!();

static BYTES: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/", shipped_odds!()));

/// The shipped odds file as embedded in this binary.
pub fn bytes() -> &'static [u8] {
    BYTES
}

/// Decodes and checks the shipped model (a few kilobytes of JSON).
pub fn load() -> Result<OddsModel, OddsFileError> {
    file::decode(BYTES)
}
