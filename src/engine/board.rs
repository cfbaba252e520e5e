//! [`Board`], the fast bitboard, moved through the row tables.

use std::fmt;

use super::rules::Direction;
use super::tables::{entry_reward, entry_row, tables, RowTable, OVERFLOW};

/// A 4x4 board packed in a `u64`: one 4-bit exponent per cell (0 = empty, k = the tile 2^k, so at most 32768).
///
/// Cells are row-major and the **top-left cell is the most significant nibble**: cell (row r, column c), both
/// counted from 0 at the top-left, is bits `4 * (15 - (4r + c))` .. `+4`. So the top row is the high 16 bits,
/// and `format!("{:016x}", board.0)` is the hex format (top-left first).
///
/// Moves go through 65,536-entry row tables (see `tables.rs`); up and down transpose the board, move the
/// rows, and transpose back. Tiles of 65536 and 131072 do not fit a nibble: boards holding them are [`Tiles`],
/// moved exactly by plain code, and a move that would merge two 32768 tiles here is reported as
/// [`TileOverflow`] instead of wrapping.
///
/// # Examples
/// ```
/// use advisor2048::engine::{Board, Direction};
/// let board: Board = "0000000000000112".parse().unwrap(); // bottom row: 0 2 2 4
/// let moved = board.play(Direction::Left).unwrap().unwrap();
/// assert_eq!(moved.board.to_string(), "0000000000002200");
/// assert_eq!(moved.reward, 4);
/// ```
///
/// [`Tiles`]: super::Tiles
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Board(pub u64);

/// The result of a legal move: the board after it (before any spawn) and its reward, the sum of the values of the
/// tiles created by merges (the score the original game adds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moved {
    pub board: Board,
    pub reward: u32,
}

/// A move on a [`Board`] would create a 65536 tile, which has no 4-bit nibble: play it on [`Tiles`] instead.
///
/// [`Tiles`]: super::Tiles
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the move would create a 65536 tile, which this board type cannot hold")]
pub struct TileOverflow;

impl Board {
    /// The empty board.
    pub const EMPTY: Board = Board(0);

    /// Exponent at (row, col), both 0..4 from the top-left.
    #[inline]
    pub fn exponent(self, row: usize, col: usize) -> u8 {
        self.exponent_at(row * 4 + col)
    }

    /// Exponent of cell `i` in row-major order (0 = top-left).
    #[inline]
    pub fn exponent_at(self, i: usize) -> u8 {
        ((self.0 >> (4 * (15 - i))) & 15) as u8
    }

    /// The board with cell `i` (row-major) set to exponent `e` (0..=15).
    #[inline]
    pub fn with_exponent_at(self, i: usize, e: u8) -> Board {
        let shift = 4 * (15 - i);
        Board((self.0 & !(15u64 << shift)) | ((e as u64 & 15) << shift))
    }

    /// Row `r` (0 = top) as a 16-bit row, leftmost cell in the high nibble.
    #[inline]
    pub fn row(self, r: usize) -> u16 {
        (self.0 >> (48 - 16 * r)) as u16
    }

    /// The 16 exponents in row-major order.
    pub fn exponents(self) -> [u8; 16] {
        std::array::from_fn(|i| self.exponent_at(i))
    }

    /// Builds a board from 16 exponents in row-major order; `None` if one is above 15.
    pub fn from_exponents(exponents: [u8; 16]) -> Option<Board> {
        let mut bits = 0u64;
        for e in exponents {
            if e > 15 {
                return None;
            }
            bits = (bits << 4) | e as u64;
        }
        Some(Board(bits))
    }

    /// The transpose: cell (r, c) goes to (c, r).
    #[inline]
    pub fn transpose(self) -> Board {
        // Swap nibbles across the diagonal in two rounds (2x2 blocks of nibbles, then 2x2 blocks of bytes).
        let x = self.0;
        let a1 = x & 0xF0F0_0F0F_F0F0_0F0F;
        let a2 = x & 0x0000_F0F0_0000_F0F0;
        let a3 = x & 0x0F0F_0000_0F0F_0000;
        let a = a1 | (a2 << 12) | (a3 >> 12);
        let b1 = a & 0xFF00_FF00_00FF_00FF;
        let b2 = a & 0x00FF_00FF_0000_0000;
        let b3 = a & 0x0000_0000_FF00_FF00;
        Board(b1 | (b2 >> 24) | (b3 << 24))
    }

    /// Number of empty cells.
    #[inline]
    pub fn empty_count(self) -> u32 {
        self.empty_mask().count_ones()
    }

    /// Largest exponent on the board (0 for an empty board). On the hot path of the n-tuple networks with stages
    /// (the stage of every board looked up), so it walks the nibbles without building the exponent array.
    #[inline(always)]
    pub fn max_exponent(self) -> u8 {
        let mut m = 0u64;
        let mut x = self.0;
        while x != 0 {
            m = m.max(x & 15);
            x >>= 4;
        }
        m as u8
    }

    /// Whether some cell's exponent is above `exponent`: `max_exponent() > exponent` without finding the maximum
    /// (self-play asks it after every move, and the answer is nearly always no). Each nibble gets its own byte, where
    /// adding `15 - exponent` carries into bit 4 exactly when the nibble is above `exponent`, and no byte overflows.
    #[inline]
    pub fn any_exponent_above(self, exponent: u8) -> bool {
        const NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
        let add = u64::from(15 - exponent.min(15)) * 0x0101_0101_0101_0101;
        (((self.0 & NIBBLES) + add) | (((self.0 >> 4) & NIBBLES) + add)) & 0x1010_1010_1010_1010 != 0
    }

    /// Sum of the tile values.
    pub fn tile_sum(self) -> u64 {
        self.exponents().iter().filter(|&&e| e > 0).map(|&e| 1u64 << e).sum()
    }

    /// Plays `dir`: `Ok(None)` if the move does not change the board (illegal), `Ok(Some(moved))` otherwise, and
    /// `Err(TileOverflow)` if it would merge two 32768 tiles. No tile spawns here; see [`Board::spawn`].
    #[inline]
    pub fn play(self, dir: Direction) -> Result<Option<Moved>, TileOverflow> {
        let (board, reward) = self.slide(dir);
        if reward & OVERFLOW != 0 {
            return Err(TileOverflow);
        }
        Ok((board != self).then_some(Moved { board, reward }))
    }

    /// The board after sliding in `dir` and the raw reward, whose [`OVERFLOW`] bit is set when the result is not
    /// exact. Equal to `self` when the move is illegal. The hot path of the search.
    #[inline]
    pub(crate) fn slide(self, dir: Direction) -> (Board, u32) {
        let t = tables();
        match dir {
            Direction::Left => self.slide_rows(&t.left),
            Direction::Right => self.slide_rows(&t.right),
            Direction::Up => {
                let (b, r) = self.transpose().slide_rows(&t.left);
                (b.transpose(), r)
            }
            Direction::Down => {
                let (b, r) = self.transpose().slide_rows(&t.right);
                (b.transpose(), r)
            }
        }
    }

    /// All four slides in [`Direction::ALL`] order, sharing one transpose (the search's move generator).
    #[inline(always)]
    pub(crate) fn slide_all(self) -> [(Board, u32); 4] {
        let t = tables();
        let tr = self.transpose();
        let (u, ur) = tr.slide_rows(&t.left);
        let (d, dr) = tr.slide_rows(&t.right);
        [
            (u.transpose(), ur),
            (d.transpose(), dr),
            self.slide_rows(&t.left),
            self.slide_rows(&t.right),
        ]
    }

    /// The four children for the last move layer of a search, in [`Direction::ALL`] order: the board after the move,
    /// its transpose (both needed to evaluate it, and each move computes one of them anyway), and whether the move
    /// is legal (an illegal move leaves the board as it was). No rewards and no overflow flags: the caller
    /// guarantees no 65536 can appear.
    #[inline(always)]
    pub(crate) fn leaf_children(self) -> [(Board, Board, bool); 4] {
        let t = tables();
        let tr = self.transpose();
        let up_t = tr.slide_rows_only(&t.left);
        let down_t = tr.slide_rows_only(&t.right);
        let left = self.slide_rows_only(&t.left);
        let right = self.slide_rows_only(&t.right);
        [
            (up_t.transpose(), up_t, up_t != tr),
            (down_t.transpose(), down_t, down_t != tr),
            (left, left.transpose(), left != self),
            (right, right.transpose(), right != self),
        ]
    }

    /// [`Board::leaf_children`] with each move's reward (its [`OVERFLOW`] bit included, which the caller has ruled
    /// out): the last move layer of a search that adds rewards.
    #[inline(always)]
    pub(crate) fn leaf_children_rewarded(self) -> [(Board, Board, u32, bool); 4] {
        let t = tables();
        let tr = self.transpose();
        let (up_t, ur) = tr.slide_rows(&t.left);
        let (down_t, dr) = tr.slide_rows(&t.right);
        let (left, lr) = self.slide_rows(&t.left);
        let (right, rr) = self.slide_rows(&t.right);
        [
            (up_t.transpose(), up_t, ur, up_t != tr),
            (down_t.transpose(), down_t, dr, down_t != tr),
            (left, left.transpose(), lr, left != self),
            (right, right.transpose(), rr, right != self),
        ]
    }

    #[inline(always)]
    fn slide_rows_only(self, table: &RowTable<u32>) -> Board {
        Board(
            (entry_row(table[(self.0 >> 48) as usize]) << 48)
                | (entry_row(table[(self.0 >> 32) as u16 as usize]) << 32)
                | (entry_row(table[(self.0 >> 16) as u16 as usize]) << 16)
                | entry_row(table[self.0 as u16 as usize]),
        )
    }

    #[inline(always)]
    fn slide_rows(self, table: &RowTable<u32>) -> (Board, u32) {
        let e0 = table[(self.0 >> 48) as usize];
        let e1 = table[(self.0 >> 32) as u16 as usize];
        let e2 = table[(self.0 >> 16) as u16 as usize];
        let e3 = table[self.0 as u16 as usize];
        let board = (entry_row(e0) << 48) | (entry_row(e1) << 32) | (entry_row(e2) << 16) | entry_row(e3);
        // Rewards stay below 2^18 per row, so the sum never reaches the OVERFLOW bit; OR the flags in afterwards.
        let reward = (entry_reward(e0) & !OVERFLOW)
            + (entry_reward(e1) & !OVERFLOW)
            + (entry_reward(e2) & !OVERFLOW)
            + (entry_reward(e3) & !OVERFLOW);
        (Board(board), reward | ((e0 | e1 | e2 | e3) & OVERFLOW))
    }

    /// Whether `dir` changes the board.
    #[inline]
    pub fn is_legal(self, dir: Direction) -> bool {
        self.slide(dir).0 != self
    }

    /// True when no move changes the board. Without sliding: a board with an empty cell and a tile has a tile next
    /// to an empty cell, which can move into it, so only the empty board and full boards without two equal
    /// neighbours are over (self-play asks before every move).
    #[inline]
    pub fn is_game_over(self) -> bool {
        if self.empty_mask() != 0 {
            return self == Board::EMPTY;
        }
        // A zero nibble in `x ^ (x >> 4)` is a cell equal to its right-hand neighbour, in `x ^ (x >> 16)` one equal to
        // the cell below it; the nibbles that pair a cell with no such neighbour are set so that they never count.
        let x = self.0;
        let across = Board((x ^ (x >> 4)) | 0xF000_F000_F000_F000);
        let down = Board((x ^ (x >> 16)) | 0xFFFF_0000_0000_0000);
        across.empty_mask() == 0 && down.empty_mask() == 0
    }

    /// Places a tile in a uniformly chosen empty cell: exponent 1 (a 2) with probability 0.9, else 2 (a 4).
    /// Returns `None` (and draws nothing) when the board is full. The cell is the `k`-th empty one in row-major
    /// order, `k` uniform below the number of empty cells; it is found on a mask of the empty cells (no branch per
    /// cell: on the hot path of self-play and training).
    #[inline]
    pub fn spawn(self, rng: &mut super::rng::Rng) -> Option<Board> {
        self.spawn_tile(rng).map(|(board, _)| board)
    }

    /// [`Board::spawn`], also returning the tile placed (2 or 4): self-play keeps the tile sum this way.
    #[inline]
    pub fn spawn_tile(self, rng: &mut super::rng::Rng) -> Option<(Board, u32)> {
        let empty = self.empty_mask();
        let count = empty.count_ones();
        if count == 0 {
            return None;
        }
        let k = rng.below(u64::from(count)) as u32;
        let e: u64 = if rng.chance_of_four() { 2 } else { 1 };
        // Row-major cell i is nibble 15 - i, so the k-th empty cell is the (count - 1 - k)-th set bit from the
        // bottom of the mask: clear the lower ones.
        let mut m = empty;
        for _ in 0..count - 1 - k {
            m &= m - 1;
        }
        Some((Board(self.0 | (e << m.trailing_zeros())), 1 << e))
    }

    /// The empty cells: bit 4j set where nibble j is 0 (row-major cell 15 - j).
    #[inline(always)]
    pub(crate) fn empty_mask(self) -> u64 {
        // A nibble is empty when all its 4 bits are 0: fold each nibble's bits into its lowest bit.
        let mut x = self.0;
        x |= (x >> 2) & 0x3333_3333_3333_3333;
        x |= x >> 1;
        !x & 0x1111_1111_1111_1111
    }

    /// A new game: two spawns on the empty board.
    pub fn new_game(rng: &mut super::rng::Rng) -> Board {
        let first = Board::EMPTY.spawn(rng).unwrap_or(Board::EMPTY);
        first.spawn(rng).unwrap_or(first)
    }

    /// Tile values as rows, top row first (0 = empty).
    pub fn to_rows(self) -> [[u32; 4]; 4] {
        std::array::from_fn(|r| {
            std::array::from_fn(|c| match self.exponent(r, c) {
                0 => 0,
                e => 1u32 << e,
            })
        })
    }
}

impl fmt::Display for Board {
    /// The hex format: 16 hex digits of exponents, top-left first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({:016x})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_moves_every_cell_across_the_diagonal() {
        let b = Board(0x0123_4567_89ab_cdef);
        let t = b.transpose();
        for r in 0..4 {
            for c in 0..4 {
                assert_eq!(t.exponent(c, r), b.exponent(r, c));
            }
        }
        assert_eq!(t.transpose(), b);
    }

    /// The k-th empty cell in row-major order, cell by cell: what `spawn` must pick.
    fn spawn_reference(b: Board, rng: &mut crate::engine::rng::Rng) -> Option<Board> {
        let empty: Vec<usize> = (0..16).filter(|&i| b.exponent_at(i) == 0).collect();
        if empty.is_empty() {
            return None;
        }
        let k = rng.below(empty.len() as u64) as usize;
        let e = if rng.chance_of_four() { 2 } else { 1 };
        Some(b.with_exponent_at(empty[k], e))
    }

    #[test]
    fn spawn_picks_the_same_cell_and_tile_as_the_cell_by_cell_rule() {
        let mut boards = crate::engine::rng::Rng::new(7);
        for n in 0..20_000u64 {
            // Boards from full to empty: each nibble kept with a probability that varies with n.
            let keep = boards.next_u64() | if n % 3 == 0 { boards.next_u64() } else { 0 };
            let mut b = Board(boards.next_u64());
            for i in 0..16 {
                if keep >> (4 * i) & 1 == 0 {
                    b = b.with_exponent_at(i, 0);
                }
            }
            let mut r1 = crate::engine::rng::Rng::new(n);
            let mut r2 = crate::engine::rng::Rng::new(n);
            let spawned = b.spawn_tile(&mut r1);
            assert_eq!(
                spawned.map(|(s, _)| s),
                spawn_reference(b, &mut r2),
                "board {:016x}",
                b.0
            );
            assert_eq!(r1.next_u64(), r2.next_u64(), "both drew the same numbers");
            if let Some((s, tile)) = spawned {
                assert_eq!(s.tile_sum(), b.tile_sum() + u64::from(tile), "board {:016x}", b.0);
            }
        }
        let full = Board(0x1234_5678_9abc_def1);
        assert_eq!(full.spawn(&mut crate::engine::rng::Rng::new(1)), None);
    }

    #[test]
    fn is_game_over_agrees_with_trying_every_move() {
        let mut boards = crate::engine::rng::Rng::new(5);
        for n in 0..200_000u64 {
            // Few distinct exponents (and few empty cells) make boards without a move common; exponent 15 included,
            // whose pairs overflow rather than merge.
            let base = (n % 15) as u8;
            let spread = 1 + (n % 4);
            let b = (0..16).fold(Board::EMPTY, |b, i| {
                let e = if boards.below(40) == 0 {
                    0
                } else {
                    base + 1 + boards.below(spread) as u8
                };
                b.with_exponent_at(i, e.min(15))
            });
            let over = Direction::ALL.iter().all(|&d| b.slide(d).0 == b);
            assert_eq!(b.is_game_over(), over, "board {:016x}", b.0);
        }
        assert!(Board::EMPTY.is_game_over());
        assert!(!Board(0x1000_0000_0000_0000).is_game_over());
    }

    #[test]
    fn any_exponent_above_agrees_with_the_largest_exponent() {
        let mut boards = crate::engine::rng::Rng::new(11);
        for n in 0..20_000u64 {
            // Every exponent below a cap that varies with n, so that every answer comes up.
            let cap = (n % 16) as u8;
            let b = (0..16).fold(Board::EMPTY, |b, i| {
                b.with_exponent_at(i, (boards.below(u64::from(cap) + 1)) as u8)
            });
            for e in 0..=16 {
                assert_eq!(
                    b.any_exponent_above(e),
                    b.max_exponent() > e,
                    "board {:016x}, exponent {e}",
                    b.0
                );
            }
        }
    }

    #[test]
    fn empty_count_counts_zero_nibbles() {
        assert_eq!(Board(0).empty_count(), 16);
        assert_eq!(Board(0x0123_4567_89ab_cdef).empty_count(), 1);
        assert_eq!(Board(0x1000_0000_0000_0008).empty_count(), 14);
    }
}
