//! Row lookup tables: for each of the 65,536 possible rows (four 4-bit exponents), the row after a move to the left
//! and to the right, and the reward of that move. Built once, on first use.
//!
//! A row is a `u16` whose most significant nibble is the leftmost cell, the same order as [`Board`](super::Board).

use std::sync::OnceLock;

/// Set in a reward entry when the move would merge two 32768 tiles: the 65536 it creates has no 4-bit nibble.
pub(crate) const OVERFLOW: u32 = 1 << 31;

pub(crate) struct RowTables {
    pub left: Vec<u16>,
    pub right: Vec<u16>,
    /// Reward of the move (the same for left and right only by symmetry of the merge rule is NOT guaranteed, so both).
    pub left_reward: Vec<u32>,
    pub right_reward: Vec<u32>,
}

static TABLES: OnceLock<RowTables> = OnceLock::new();

#[inline]
pub(crate) fn tables() -> &'static RowTables {
    TABLES.get_or_init(build)
}

fn build() -> RowTables {
    let mut t = RowTables {
        left: vec![0; 65536],
        right: vec![0; 65536],
        left_reward: vec![0; 65536],
        right_reward: vec![0; 65536],
    };
    for row in 0..=u16::MAX {
        let (l, lr) = slide_left(unpack(row));
        t.left[row as usize] = pack(l);
        t.left_reward[row as usize] = lr;
        let (r, rr) = slide_left(reverse(unpack(row)));
        t.right[row as usize] = pack(reverse(r));
        t.right_reward[row as usize] = rr;
    }
    t
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
    let (out, reward) = super::tiles::slide_line(cells);
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

/// The row after moving left, computed by the plain reference model (tile values, not exponents).
/// `None` when the result holds a tile that has no 4-bit nibble (65536).
pub fn row_left_reference(row: u16) -> Option<(u16, u64)> {
    row_reference(row, super::Direction::Left)
}

/// The row after moving right, computed by the plain reference model. `None` as for [`row_left_reference`].
pub fn row_right_reference(row: u16) -> Option<(u16, u64)> {
    row_reference(row, super::Direction::Right)
}

fn row_reference(row: u16, dir: super::Direction) -> Option<(u16, u64)> {
    let values: Vec<u32> = unpack(row)
        .iter()
        .map(|&e| if e == 0 { 0 } else { 1u32 << e })
        .collect();
    let (moved, reward) = super::reference::move_line(&values, dir == super::Direction::Left);
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
            for (table, rewards, reference) in [
                (&t.left, &t.left_reward, row_left_reference(row)),
                (&t.right, &t.right_reward, row_right_reference(row)),
            ] {
                match reference {
                    Some((moved, reward)) => {
                        assert_eq!(table[row as usize], moved, "row {row:04x}");
                        assert_eq!(rewards[row as usize] as u64, reward, "row {row:04x}");
                    }
                    None => assert_ne!(rewards[row as usize] & OVERFLOW, 0, "row {row:04x}"),
                }
            }
        }
    }
}
