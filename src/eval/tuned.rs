//! `tuned`: the row heuristic of the best-known public heuristic expectimax engine for 2048, whose weights were
//! tuned by self-play optimisation (CMA-ES). Every row (left to right) and every column (top to bottom) of exponents
//! r_1..r_4 (0 = empty, tile 2^r) scores
//!
//! `lost_penalty + empty x #(r_i = 0) + merges x runs + monotonicity x min(left, right) + sum x sum(r_i^3.5)`
//!
//! with weights 200000, 270, 700, -47, -11 by default. `runs` adds k for every maximal run of k >= 2 equal values
//! among the non-zero entries (zeros skipped); `left`/`right` add the drops r_{i-1}^4 - r_i^4 and the rises
//! r_i^4 - r_{i-1}^4 between neighbours. The board's value is the sum over its 8 lines, so the fast path is 8 table
//! lookups (rows, then the rows of the transpose). Tables hold `f64` (512 KiB) so totals are exact to far more than
//! the 4 decimals the tests check.

use std::sync::{Arc, OnceLock};

use super::{Breakdown, Evaluator};
use crate::engine::{zeroed, Board, RowTable, Tiles};

weight_table! {
    /// Weights of the `tuned` heuristic (per line; the board sums 8 lines).
    pub struct TunedWeights: "tuned" {
        /// The constant every line adds (8 lines: 1,600,000 per board).
        lost_penalty = 200_000.0,
        empty = 270.0,
        merges = 700.0,
        monotonicity = -47.0,
        sum = -11.0,
    }
}

impl TunedWeights {
    fn score(&self, t: &LineTerms) -> f64 {
        self.lost_penalty
            + self.empty * t.empty
            + self.merges * t.merges
            + self.monotonicity * t.monotonicity
            + self.sum * t.sum
    }
}

/// The raw terms of one line (or summed over lines).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LineTerms {
    pub empty: f64,
    pub merges: f64,
    pub monotonicity: f64,
    pub sum: f64,
}

impl LineTerms {
    fn add(&mut self, o: &LineTerms) {
        self.empty += o.empty;
        self.merges += o.merges;
        self.monotonicity += o.monotonicity;
        self.sum += o.sum;
    }
}

/// The raw terms of a line of exponents (any exponent up to 17).
pub fn line_terms(line: [u8; 4]) -> LineTerms {
    let mut t = LineTerms::default();
    let mut prev = 0u8;
    let mut run = 0u32;
    for &r in &line {
        if r == 0 {
            t.empty += 1.0;
            continue;
        }
        t.sum += f64::from(r).powf(3.5);
        if r == prev {
            run += 1;
        } else {
            if run > 0 {
                t.merges += f64::from(run + 1);
            }
            run = 0;
        }
        prev = r;
    }
    if run > 0 {
        t.merges += f64::from(run + 1);
    }
    let (mut left, mut right) = (0.0, 0.0);
    for i in 1..4 {
        let (a, b) = (f64::from(line[i - 1]).powi(4), f64::from(line[i]).powi(4));
        if line[i - 1] > line[i] {
            left += a - b;
        } else {
            right += b - a;
        }
    }
    t.monotonicity = f64::min(left, right);
    t
}

/// The `tuned` evaluator: its weights and the per-row score table built from them.
#[derive(Clone, Debug)]
pub struct TunedEvaluator {
    weights: TunedWeights,
    table: Arc<RowTable<f64>>,
}

impl Default for TunedEvaluator {
    /// Default weights; the table is built once per process.
    fn default() -> Self {
        static DEFAULT: OnceLock<Arc<RowTable<f64>>> = OnceLock::new();
        let weights = TunedWeights::default();
        let table = DEFAULT.get_or_init(|| build_table(&weights)).clone();
        TunedEvaluator { weights, table }
    }
}

fn build_table(w: &TunedWeights) -> Arc<RowTable<f64>> {
    let mut table = zeroed::<f64>();
    for (row, entry) in (0..=u16::MAX).zip(table.iter_mut()) {
        let line = [
            (row >> 12) as u8 & 15,
            (row >> 8) as u8 & 15,
            (row >> 4) as u8 & 15,
            row as u8 & 15,
        ];
        *entry = w.score(&line_terms(line));
    }
    Arc::from(table)
}

impl TunedEvaluator {
    /// An evaluator with these weights (builds its table: a few milliseconds).
    pub fn new(weights: TunedWeights) -> TunedEvaluator {
        if weights == TunedWeights::default() {
            return TunedEvaluator::default();
        }
        TunedEvaluator {
            table: build_table(&weights),
            weights,
        }
    }

    pub fn weights(&self) -> &TunedWeights {
        &self.weights
    }

    /// The raw terms summed over the 8 lines of the board.
    pub fn terms(tiles: &Tiles) -> LineTerms {
        let e = tiles.exponents();
        let mut total = LineTerms::default();
        for k in 0..4 {
            total.add(&line_terms([e[4 * k], e[4 * k + 1], e[4 * k + 2], e[4 * k + 3]]));
            total.add(&line_terms([e[k], e[k + 4], e[k + 8], e[k + 12]]));
        }
        total
    }
}

impl Evaluator for TunedEvaluator {
    fn name(&self) -> &'static str {
        "tuned"
    }

    #[inline]
    fn evaluate_with_transpose(&self, board: Board, transposed: Board) -> f64 {
        let t = &self.table;
        let b = board.0;
        let c = transposed.0;
        t[(b >> 48) as usize]
            + t[(b >> 32) as u16 as usize]
            + t[(b >> 16) as u16 as usize]
            + t[b as u16 as usize]
            + t[(c >> 48) as usize]
            + t[(c >> 32) as u16 as usize]
            + t[(c >> 16) as u16 as usize]
            + t[c as u16 as usize]
    }

    fn evaluate_tiles(&self, tiles: &Tiles) -> f64 {
        let terms = Self::terms(tiles);
        let w = &self.weights;
        8.0 * w.lost_penalty
            + w.empty * terms.empty
            + w.merges * terms.merges
            + w.monotonicity * terms.monotonicity
            + w.sum * terms.sum
    }

    fn breakdown(&self, tiles: &Tiles) -> Breakdown {
        let t = Self::terms(tiles);
        self.weights.breakdown([8.0, t.empty, t.merges, t.monotonicity, t.sum])
    }
}

/// The raw terms of a 4x4 grid of tile values, written plainly from the definition (the oracle for the tables).
#[allow(clippy::needless_range_loop)] // (row, column) indices mirror the definition
#[cfg(any(test, feature = "reference"))]
pub fn terms_reference(grid: &crate::engine::reference::Grid) -> LineTerms {
    let rank = |v: u32| if v == 0 { 0.0 } else { f64::from(v).log2() };
    let n = grid.len();
    let mut lines: Vec<Vec<f64>> = Vec::new();
    for k in 0..n {
        lines.push(grid[k].iter().map(|&v| rank(v)).collect());
        lines.push((0..n).map(|r| rank(grid[r][k])).collect());
    }
    let mut t = LineTerms::default();
    for line in &lines {
        t.empty += line.iter().filter(|&&r| r == 0.0).count() as f64;
        t.sum += line.iter().map(|&r| r.powf(3.5)).sum::<f64>();
        // Runs of equal values among the non-zero entries.
        let tiles: Vec<f64> = line.iter().copied().filter(|&r| r != 0.0).collect();
        let mut i = 0;
        while i < tiles.len() {
            let mut j = i;
            while j + 1 < tiles.len() && tiles[j + 1] == tiles[i] {
                j += 1;
            }
            if j > i {
                t.merges += (j - i + 1) as f64;
            }
            i = j + 1;
        }
        let (mut left, mut right) = (0.0, 0.0);
        for i in 1..line.len() {
            if line[i - 1] > line[i] {
                left += line[i - 1].powi(4) - line[i].powi(4);
            } else {
                right += line[i].powi(4) - line[i - 1].powi(4);
            }
        }
        t.monotonicity += f64::min(left, right);
    }
    t
}

/// The breakdown of a grid of tile values through [`terms_reference`].
#[cfg(any(test, feature = "reference"))]
pub fn breakdown_reference(grid: &crate::engine::reference::Grid, w: &TunedWeights) -> Breakdown {
    let t = terms_reference(grid);
    let lines = 2.0 * grid.len() as f64;
    w.breakdown([lines, t.empty, t.merges, t.monotonicity, t.sum])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_runs_follow_the_issue_examples() {
        assert_eq!(line_terms([1, 1, 0, 1]).merges, 3.0);
        assert_eq!(line_terms([1, 1, 2, 2]).merges, 4.0);
        assert_eq!(line_terms([1, 0, 2, 1]).merges, 0.0);
    }

    /// Every one of the 65,536 table rows against the plain oracle [`terms_reference`], which works on tile values
    /// and shares no code with `line_terms`: the row on top of an otherwise empty board, whose 8 table lookups (this
    /// row, three empty rows, four columns of one tile each) must add up to the oracle's total.
    #[test]
    fn table_matches_the_reference_for_every_row() {
        let e = TunedEvaluator::default();
        let w = TunedWeights::default();
        for row in 0..=u16::MAX {
            let values: Vec<u32> = (0..4)
                .map(|i| match (row >> (12 - 4 * i)) & 15 {
                    0 => 0,
                    r => 1u32 << r,
                })
                .collect();
            let mut grid = vec![vec![0u32; 4]; 4];
            grid[0] = values;
            let expected = breakdown_reference(&grid, &w).total;
            let got = e.evaluate(Board(u64::from(row) << 48));
            assert!(
                (got - expected).abs() <= 1e-9 * expected.abs(),
                "row {row:04x}: table {got}, reference {expected}"
            );
        }
    }
}
