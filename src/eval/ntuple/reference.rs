//! The value of a board computed the plain way, for tests: the oracle the fast lookups are checked against.

use super::Shape;
use crate::engine::Tiles;

/// The value of a board computed the plain way, for tests: every symmetry written as a map of (row, column), every
/// index built digit by digit from [`Tiles`] exponents (capped at 15), summed in `f64`.
#[doc(hidden)]
pub fn value_reference(shape: &Shape, weights: &[f32], tiles: &Tiles) -> f64 {
    let max = tiles.exponents().iter().map(|&x| x.min(15)).max().unwrap_or(0);
    value_reference_in(shape, weights, tiles, max)
}

/// [`value_reference`] in the stage of a board whose largest exponent is `decision_max` (the stage a decision on
/// that board values every board in), the plain way: the last stage whose start is at most it.
#[doc(hidden)]
pub fn value_reference_in(shape: &Shape, weights: &[f32], tiles: &Tiles, decision_max: u8) -> f64 {
    let e: Vec<u8> = tiles.exponents().iter().map(|&x| x.min(15)).collect();
    let stage = shape
        .stages
        .iter()
        .rposition(|&s| s <= decision_max.min(15))
        .unwrap_or(0);
    let per_stage: usize = shape.tuples.iter().map(|t| 16usize.pow(t.len() as u32)).sum();
    type CellMap = fn(usize, usize) -> (usize, usize);
    let maps: [CellMap; 8] = [
        |r, c| (r, c),
        |r, c| (r, 3 - c),
        |r, c| (3 - r, c),
        |r, c| (3 - r, 3 - c),
        |r, c| (c, r),
        |r, c| (c, 3 - r),
        |r, c| (3 - c, r),
        |r, c| (3 - c, 3 - r),
    ];
    let mut total = 0.0;
    let mut offset = stage * per_stage;
    for cells in &shape.tuples {
        for map in maps {
            let mut idx = 0usize;
            for &cell in cells {
                let (r, c) = map(usize::from(cell) / 4, usize::from(cell) % 4);
                idx = idx * 16 + usize::from(e[r * 4 + c]);
            }
            total += f64::from(weights[offset + idx]);
        }
        offset += 16usize.pow(cells.len() as u32);
    }
    total
}
