//! The game engine: pure, synchronous 2048 rules.
//!
//! - [`Board`]: the fast 4x4 bitboard (one `u64`, a 4-bit exponent per cell) moved through row lookup tables;
//! - [`Tiles`]: the exact 4x4 board for every legal tile up to 131072 (2^17), moved by plain code;
//! - [`Direction`], formats (rows, hex, the original game's saved state) and their errors;
//! - [`rng`]: the seeded generator every random choice goes through;
//! - `reference` (cargo feature `reference`, on for the tests and benches only): the plain n x n model the tests use
//!   as the oracle.
//!
//! Nothing in here knows about search, HTTP or logging.

//!
//! Layers, bottom up, each importing only those below it: `rules` (directions, tile limits, spawn probabilities,
//! milestones, the line slide) -> [`rng`] (its spawn draw follows the rules' odds) -> `tables` (row tables built from the slide) -> `board` ([`Board`]) -> `tiles` ([`Tiles`]) -> `format`
//! (text and JSON forms). `reference` stands apart: it imports only `rules`.

mod board;
mod format;
#[cfg(any(test, feature = "reference"))]
pub mod reference;
pub mod rng;
mod rules;
mod tables;
mod tiles;

pub use board::{Board, Moved, TileOverflow};
pub use format::{exponent_of, BoardError, BoardErrorKind, SavedCell};
pub use rules::{
    Direction, FOUR_ONE_IN, FOUR_PROBABILITY, MAX_EXPONENT, MAX_SUM, MAX_TILE, MILESTONES, TWO_PROBABILITY,
};
pub(crate) use tables::OVERFLOW as OVERFLOW_FLAG;
#[cfg(any(test, feature = "reference"))]
pub use tables::{row_left_reference, row_right_reference};
pub use tables::{zeroed, RowTable};
pub use tiles::Tiles;
