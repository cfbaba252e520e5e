//! The rules every other engine file builds on, with no dependency inside the engine: the move directions, the
//! tile limits of a 4x4 board, the spawn probabilities, the milestone tiles, and the line slide (tiles slide toward the wall, equal neighbours merge once).
//! Bottom up: `rules` -> `tables` (row lookup tables built from the slide) -> `board` / `tiles` -> `format`.

use crate::names::named_enum;

named_enum! {
    /// A move direction. The order of [`Direction::ALL`] (up, down, left, right) is the order used everywhere:
    /// in responses, and to break ties between equally good moves.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Direction: "a direction" {
        Up = "up",
        Down = "down",
        Left = "left",
        Right = "right",
    }
}

impl Direction {
    /// Position in [`Direction::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Largest exponent a 4x4 board can hold: 2^17 = 131072 (16 cells can never sum to more than 2^18 - 4).
pub const MAX_EXPONENT: u8 = 17;
/// Largest tile value a 4x4 board can hold.
pub const MAX_TILE: u32 = 1 << MAX_EXPONENT;

/// The largest tile sum a 4x4 game can reach: 131072 + 65536 + ... + 8 + 4 + 4 = 2^18 - 4. Rejecting larger sums
/// keeps every move of a parsed board within 131072 (a 262144 tile would need a sum of 2^18).
pub const MAX_SUM: u64 = (1 << 18) - 4;

/// A spawned tile is a 4 one time in this many, else a 2 (the original game's `Math.random() < 0.9 ? 2 : 4`).
pub const FOUR_ONE_IN: u64 = 10;
/// The probability that a spawned tile is a 4: exactly the `f64` nearest 0.1.
pub const FOUR_PROBABILITY: f64 = 1.0 / FOUR_ONE_IN as f64;
/// The probability that a spawned tile is a 2: exactly the `f64` nearest 0.9.
pub const TWO_PROBABILITY: f64 = 1.0 - FOUR_PROBABILITY;

/// The milestone tiles: 2048 (the game's goal) and each doubling up to 65536. Self-play records when a game first
/// reached each and reports their reach rates; training tracks them up to 32768.
pub const MILESTONES: [u32; 6] = [2048, 4096, 8192, 16384, 32768, 65536];

/// Moves a line of exponents toward index 0: tiles slide over empties, equal neighbours merge once, nearest the wall
/// first. Returns the new line and the reward (the values of the merged tiles).
pub(crate) fn slide_line(cells: [u8; 4]) -> ([u8; 4], u64) {
    let mut out = [0u8; 4];
    let mut n = 0;
    let mut reward = 0u64;
    // `open`: the last placed tile may still take a merge.
    let mut open = false;
    for e in cells.into_iter().filter(|&e| e != 0) {
        if open && out[n - 1] == e {
            out[n - 1] = e + 1;
            reward += 1u64 << (e + 1);
            open = false;
        } else {
            out[n] = e;
            n += 1;
            open = true;
        }
    }
    (out, reward)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spawn_odds_are_the_original_game_s_exactly() {
        // The searches' values (and the golden files) were computed with the literals 0.9 and 0.1.
        assert_eq!(TWO_PROBABILITY.to_bits(), 0.9f64.to_bits());
        assert_eq!(FOUR_PROBABILITY.to_bits(), 0.1f64.to_bits());
    }
}
