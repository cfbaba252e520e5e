//! [`Tiles`]: the exact 4x4 board for every legal tile, including 65536 and 131072.

use super::board::Board;
use super::rng::Rng;
use super::rules::{slide_line, Direction, MAX_EXPONENT, MAX_SUM};

/// A 4x4 board as 16 exponents in row-major order (top-left first; 0 = empty, k = tile 2^k, k <= 17).
///
/// This is the exact representation for every legal board. It is what parsing returns and what a game record
/// holds. Its moves are plain code over a `[u8; 16]` (tens of nanoseconds; the [`Board`] tables take a few), so the
/// search converts to [`Board`] whenever the result is provably the same (see [`Tiles::to_board`]) and uses this
/// type only for the rare boards whose tiles reach 65536.
///
/// # Examples
/// ```
/// use advisor2048::engine::{Direction, Tiles};
/// let tiles = Tiles::from_rows(&[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [65536, 65536, 2, 2]]).unwrap();
/// let (after, reward) = tiles.play(Direction::Left).unwrap();
/// assert_eq!(after.to_rows()[3], [131072, 4, 0, 0]);
/// assert_eq!(reward, 131072 + 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Tiles(pub(crate) [u8; 16]);

impl Tiles {
    /// From 16 exponents (row-major); `None` if one is above [`MAX_EXPONENT`] or the tiles sum to more than a
    /// 4x4 game can hold ([`MAX_SUM`]), which guarantees no move creates a tile above 131072.
    pub fn from_exponents(exponents: [u8; 16]) -> Option<Tiles> {
        let t = Tiles(exponents);
        (exponents.iter().all(|&e| e <= MAX_EXPONENT) && t.tile_sum() <= MAX_SUM).then_some(t)
    }

    /// The 16 exponents, row-major.
    pub fn exponents(&self) -> [u8; 16] {
        self.0
    }

    /// Tile values as rows, top row first (0 = empty).
    pub fn to_rows(&self) -> [[u32; 4]; 4] {
        std::array::from_fn(|r| std::array::from_fn(|c| value(self.0[r * 4 + c])))
    }

    /// The fast [`Board`] when every exponent fits a nibble (every tile is at most 32768).
    pub fn to_board(&self) -> Option<Board> {
        Board::from_exponents(self.0)
    }

    /// Number of empty cells.
    pub fn empty_count(&self) -> u32 {
        self.0.iter().filter(|&&e| e == 0).count() as u32
    }

    /// Largest tile value (0 when empty).
    pub fn max_tile(&self) -> u32 {
        value(self.0.iter().copied().max().unwrap_or(0))
    }

    /// Sum of the tile values.
    pub fn tile_sum(&self) -> u64 {
        self.0.iter().map(|&e| value(e) as u64).sum()
    }

    /// Plays `dir`; `None` when the move changes nothing (illegal). Returns the board and the reward.
    pub fn play(&self, dir: Direction) -> Option<(Tiles, u64)> {
        let mut out = [0u8; 16];
        let mut reward = 0u64;
        for line in 0..4 {
            let idx = line_indices(dir, line);
            let (moved, r) = slide_line(idx.map(|i| self.0[i]));
            reward += r;
            for (k, &i) in idx.iter().enumerate() {
                out[i] = moved[k];
            }
        }
        (out != self.0).then_some((Tiles(out), reward))
    }

    /// Whether `dir` changes the board.
    pub fn is_legal(&self, dir: Direction) -> bool {
        self.play(dir).is_some()
    }

    /// True when no move changes the board.
    pub fn is_game_over(&self) -> bool {
        Direction::ALL.iter().all(|&d| !self.is_legal(d))
    }

    /// Places a 2 (p = 0.9) or a 4 (p = 0.1) in a uniformly chosen empty cell, drawing from `rng` exactly as
    /// [`Board::spawn`] does, so both types play the same game from the same seed. `None` when full.
    pub fn spawn(&self, rng: &mut Rng) -> Option<Tiles> {
        let empty = self.empty_count();
        if empty == 0 {
            return None;
        }
        let k = rng.below(empty as u64) as usize;
        let e = if rng.chance_of_four() { 2 } else { 1 };
        let cell = (0..16).filter(|&i| self.0[i] == 0).nth(k)?;
        let mut out = self.0;
        out[cell] = e;
        Some(Tiles(out))
    }

    /// The board with cell `i` (row-major) set to exponent `e`.
    pub fn with_exponent_at(&self, i: usize, e: u8) -> Tiles {
        let mut out = self.0;
        out[i] = e;
        Tiles(out)
    }
}

impl From<Board> for Tiles {
    fn from(b: Board) -> Tiles {
        Tiles(b.exponents())
    }
}

#[inline]
fn value(e: u8) -> u32 {
    if e == 0 {
        0
    } else {
        1 << e
    }
}

/// Cell indices of line `line` for a move in `dir`, ordered from the wall the tiles move toward.
fn line_indices(dir: Direction, line: usize) -> [usize; 4] {
    match dir {
        Direction::Left => [line * 4, line * 4 + 1, line * 4 + 2, line * 4 + 3],
        Direction::Right => [line * 4 + 3, line * 4 + 2, line * 4 + 1, line * 4],
        Direction::Up => [line, line + 4, line + 8, line + 12],
        Direction::Down => [line + 12, line + 8, line + 4, line],
    }
}
