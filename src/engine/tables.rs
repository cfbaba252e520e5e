//! Row lookup tables: for each of the 65,536 possible rows (four 4-bit exponents), the row after a move to the left
//! and to the right, and the reward of that move. Built once, on first use.
//!
//! A row is a `u16` whose most significant nibble is the leftmost cell, the same order as [`Board`](super::Board).

use std::sync::OnceLock;

/// Set in a reward when the move would merge two 32768 tiles: the 65536 it creates has no 4-bit nibble.
pub(crate) const OVERFLOW: u32 = 1 << 31;

/// One table entry per row and direction, packed in a `u32` so a move costs one lookup per row in a 256 KiB table:
/// bits 0-15 the row after the move, bits 16-30 the reward / 4 (rewards are multiples of 4 and at most 49152 on a
/// row that does not overflow), bit 31 [`OVERFLOW`].
pub(crate) struct RowTables {
    pub left: Box<RowTable<u32>>,
    pub right: Box<RowTable<u32>>,
}

/// The row after the move.
#[inline(always)]
pub(crate) fn entry_row(entry: u32) -> u64 {
    u64::from(entry as u16)
}

/// The reward of the move, with the [`OVERFLOW`] bit kept in place.
#[inline(always)]
pub(crate) fn entry_reward(entry: u32) -> u32 {
    ((entry >> 14) & 0x1_FFFC) | (entry & OVERFLOW)
}

/// A table with one entry per 16-bit row. A fixed-size array (not a slice), so indexing with a `u16` needs no
/// bounds check in the hot path.
pub type RowTable<T> = [T; 65536];

/// A zeroed table on the heap (too large for the stack).
pub fn zeroed<T: Copy + Default>() -> Box<RowTable<T>> {
    vec![T::default(); 65536]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("65536 entries"))
}

static TABLES: OnceLock<RowTables> = OnceLock::new();

#[inline]
pub(crate) fn tables() -> &'static RowTables {
    TABLES.get_or_init(build)
}

fn build() -> RowTables {
    let mut t = RowTables {
        left: zeroed(),
        right: zeroed(),
    };
    for row in 0..=u16::MAX {
        let (l, lr) = slide_left(unpack(row));
        t.left[row as usize] = entry(pack(l), lr);
        let (r, rr) = slide_left(reverse(unpack(row)));
        t.right[row as usize] = entry(pack(reverse(r)), rr);
    }
    t
}

fn entry(row: u16, reward: u32) -> u32 {
    let plain = reward & !OVERFLOW;
    // An overflowing row's entry must not be used (the flag says so), so its reward may not fit: keep 15 bits.
    debug_assert!(plain % 4 == 0 && (reward & OVERFLOW != 0 || plain / 4 < 1 << 15));
    u32::from(row) | (((plain / 4) & 0x7FFF) << 16) | (reward & OVERFLOW)
}

/// Exponents of a row, leftmost first.
#[inline]
pub(crate) fn unpack(row: u16) -> [u8; 4] {
    [
        (row >> 12) as u8 & 15,
        (row >> 8) as u8 & 15,
        (row >> 4) as u8 & 15,
        row as u8 & 15,
    ]
}

/// Packs exponents (each must be <= 15) into a row.
#[inline]
pub(crate) fn pack(cells: [u8; 4]) -> u16 {
    ((cells[0] as u16) << 12) | ((cells[1] as u16) << 8) | ((cells[2] as u16) << 4) | cells[3] as u16
}

fn reverse(c: [u8; 4]) -> [u8; 4] {
    [c[3], c[2], c[1], c[0]]
}

/// Moves one line of exponents toward index 0 with the original game's rule; returns the reward, with
/// [`OVERFLOW`] set when a merge would create a tile above 2^15. Exponents of the result are then clamped at 15
/// (the entry must not be used; the flag says so).
fn slide_left(cells: [u8; 4]) -> ([u8; 4], u32) {
    let (out, reward) = super::rules::slide_line(cells);
    let mut packed = [0u8; 4];
    let mut flag = 0;
    for (p, &e) in packed.iter_mut().zip(out.iter()) {
        if e > 15 {
            flag = OVERFLOW;
        }
        *p = e.min(15);
    }
    (packed, (reward as u32) | flag)
}

#[cfg(any(test, feature = "reference"))]
/// The row after moving left, computed by the plain reference model (tile values, not exponents).
/// `None` when the result holds a tile that has no 4-bit nibble (65536).
pub fn row_left_reference(row: u16) -> Option<(u16, u64)> {
    row_reference(row, super::rules::Direction::Left)
}

#[cfg(any(test, feature = "reference"))]
/// The row after moving right, computed by the plain reference model. `None` as for [`row_left_reference`].
pub fn row_right_reference(row: u16) -> Option<(u16, u64)> {
    row_reference(row, super::rules::Direction::Right)
}

#[cfg(any(test, feature = "reference"))]
fn row_reference(row: u16, dir: super::rules::Direction) -> Option<(u16, u64)> {
    let values: Vec<u32> = unpack(row)
        .iter()
        .map(|&e| if e == 0 { 0 } else { 1u32 << e })
        .collect();
    let (moved, reward) = super::reference::move_line(&values, dir == super::rules::Direction::Left);
    let mut cells = [0u8; 4];
    for (c, v) in cells.iter_mut().zip(moved) {
        let e = if v == 0 { 0 } else { v.trailing_zeros() as u8 };
        if e > 15 {
            return None;
        }
        *c = e;
    }
    Some((pack(cells), reward))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every one of the 65,536 rows, both directions, against the reference model.
    #[test]
    fn every_row_matches_reference() {
        let t = tables();
        for row in 0..=u16::MAX {
            for (table, reference) in [(&t.left, row_left_reference(row)), (&t.right, row_right_reference(row))] {
                let e = table[row as usize];
                match reference {
                    Some((moved, reward)) => {
                        assert_eq!(entry_row(e), u64::from(moved), "row {row:04x}");
                        assert_eq!(u64::from(entry_reward(e)), reward, "row {row:04x}");
                    }
                    None => assert_ne!(entry_reward(e) & OVERFLOW, 0, "row {row:04x}"),
                }
            }
        }
    }
}
