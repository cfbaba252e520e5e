//! `classic`: the explainable five-term heuristic of seed document 002 (section 5, eq. 4-9), on tile values v
//! (0 = empty), adjacent pairs being horizontal and vertical neighbours:
//!
//! - `empty` E: the number of empty cells (weight +2.7);
//! - `smoothness` S: over adjacent pairs with both cells non-empty, |v_i - v_j| / (log2 v_i + log2 v_j) (-0.1);
//! - `monotonicity` M_line: for each row (left to right) and column (top to bottom) x, with
//!   L(x) = sum_{i>=2} max(0, x_i - x_{i-1}), the penalty min(L(x), L(reversed x)); summed over all lines (-1.0);
//! - `corner` C: v_max x 1.2 if a cell holding the maximum is a corner, else x 0.9 on an edge, else x 0.5 (+1.0);
//! - `merges` M: over adjacent pairs with v_i = v_j != 0, v_i (+0.15).
//!
//! h = 2.7 E - 0.1 S - 1.0 M_line + 1.0 C + 0.15 M. Smoothness, monotonicity and merges add up line by line, so the
//! fast path looks up one table for the 4 rows and the 4 columns (weights folded in) and adds the empty count and the
//! corner term. `terms_reference` (feature `reference`) computes the same terms on any n x n grid with plain code.

use std::sync::{Arc, OnceLock};

use super::{Breakdown, Evaluator};
#[cfg(any(test, feature = "reference"))]
use crate::engine::reference::Grid;
use crate::engine::{zeroed, Board, RowTable, Tiles};

weight_table! {
    /// Weights of the `classic` heuristic, signs included (contribution = weight x raw).
    pub struct ClassicWeights: "classic" {
        empty = 2.7,
        smoothness = -0.1,
        monotonicity = -1.0,
        corner = 1.0,
        merges = 0.15,
    }
}

impl ClassicWeights {
    /// The weighted sum of raw terms.
    pub fn total(&self, t: &ClassicTerms) -> f64 {
        self.empty * t.empty
            + self.smoothness * t.smoothness
            + self.monotonicity * t.monotonicity
            + self.corner * t.corner
            + self.merges * t.merges
    }
}

/// The five raw terms of a board.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClassicTerms {
    pub empty: f64,
    pub smoothness: f64,
    pub monotonicity: f64,
    pub corner: f64,
    pub merges: f64,
}

/// Smoothness, monotonicity and merges of one line of values (the terms that add up line by line).
fn line_terms(x: &[u64]) -> (f64, f64, f64) {
    let (mut smooth, mut merges) = (0.0, 0.0);
    let (mut rise, mut fall) = (0u64, 0u64);
    for w in x.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a != 0 && b != 0 {
            smooth += a.abs_diff(b) as f64 / (f64::from(a.trailing_zeros()) + f64::from(b.trailing_zeros()));
            if a == b {
                merges += a as f64;
            }
        }
        // L(x) sums the rises; L(reversed x) sums the falls.
        if b > a {
            rise += b - a;
        } else {
            fall += a - b;
        }
    }
    (smooth, rise.min(fall) as f64, merges)
}

/// Corner factor of a cell of an n x n grid: 1.2 corner, 0.9 edge, 0.5 inside.
fn placement(r: usize, c: usize, n: usize) -> f64 {
    let edge_r = r == 0 || r == n - 1;
    let edge_c = c == 0 || c == n - 1;
    match (edge_r, edge_c) {
        (true, true) => 1.2,
        (true, false) | (false, true) => 0.9,
        (false, false) => 0.5,
    }
}

/// The five terms of a 4x4 board of values, computed line by line (any tile up to 131072).
fn terms_4x4(v: &[u64; 16]) -> ClassicTerms {
    let mut t = ClassicTerms {
        empty: v.iter().filter(|&&x| x == 0).count() as f64,
        ..Default::default()
    };
    for k in 0..4 {
        for line in [
            [v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]],
            [v[k], v[k + 4], v[k + 8], v[k + 12]],
        ] {
            let (s, m, g) = line_terms(&line);
            t.smoothness += s;
            t.monotonicity += m;
            t.merges += g;
        }
    }
    t.corner = corner_4x4(v);
    t
}

fn corner_4x4(v: &[u64; 16]) -> f64 {
    let max = v.iter().copied().max().unwrap_or(0);
    let best = (0..16)
        .filter(|&i| v[i] == max)
        .map(|i| placement(i / 4, i % 4, 4))
        .fold(0.0, f64::max);
    max as f64 * best
}

/// The five terms of any n x n grid of values, written plainly from the seed's formulas (the oracle).
#[allow(clippy::needless_range_loop)] // (row, column) indices mirror the formulas
#[cfg(any(test, feature = "reference"))]
pub fn terms_reference(grid: &Grid) -> ClassicTerms {
    let n = grid.len();
    let mut t = ClassicTerms::default();
    let mut max = 0u32;
    for r in 0..n {
        for c in 0..n {
            let v = grid[r][c];
            if v == 0 {
                t.empty += 1.0;
            }
            max = max.max(v);
            // Each adjacent pair once: right and down neighbours.
            for (rr, cc) in [(r, c + 1), (r + 1, c)] {
                if rr < n && cc < n {
                    let w = grid[rr][cc];
                    if v != 0 && w != 0 {
                        t.smoothness += f64::from(v.abs_diff(w)) / (f64::from(v).log2() + f64::from(w).log2());
                    }
                    if v != 0 && v == w {
                        t.merges += f64::from(v);
                    }
                }
            }
        }
    }
    let penalty = |x: &[u32]| -> f64 {
        let l = |x: &[u32]| -> f64 { (1..x.len()).map(|i| f64::from(x[i].saturating_sub(x[i - 1]))).sum() };
        let reversed: Vec<u32> = x.iter().rev().copied().collect();
        l(x).min(l(&reversed))
    };
    for k in 0..n {
        let row: Vec<u32> = grid[k].clone();
        let column: Vec<u32> = (0..n).map(|r| grid[r][k]).collect();
        t.monotonicity += penalty(&row) + penalty(&column);
    }
    let mut best: f64 = 0.0;
    for r in 0..n {
        for c in 0..n {
            if grid[r][c] == max {
                best = best.max(placement(r, c, n));
            }
        }
    }
    t.corner = f64::from(max) * best;
    t
}

/// The breakdown of any n x n grid with the given weights (the seed's 2x2 examples go through this).
#[cfg(any(test, feature = "reference"))]
pub fn breakdown_reference(grid: &Grid, weights: &ClassicWeights) -> Breakdown {
    components(&terms_reference(grid), weights)
}

fn components(t: &ClassicTerms, w: &ClassicWeights) -> Breakdown {
    w.breakdown([t.empty, t.smoothness, t.monotonicity, t.corner, t.merges])
}

/// The `classic` evaluator: its weights and a per-line table of the weighted line terms.
#[derive(Clone, Debug)]
pub struct ClassicEvaluator {
    weights: ClassicWeights,
    /// For each 16-bit line: smoothness x w_s + monotonicity x w_m + merges x w_g.
    table: Arc<RowTable<f64>>,
}

impl Default for ClassicEvaluator {
    fn default() -> Self {
        static DEFAULT: OnceLock<Arc<RowTable<f64>>> = OnceLock::new();
        let weights = ClassicWeights::default();
        let table = DEFAULT.get_or_init(|| build_table(&weights)).clone();
        ClassicEvaluator { weights, table }
    }
}

fn build_table(w: &ClassicWeights) -> Arc<RowTable<f64>> {
    let mut table = zeroed::<f64>();
    for (row, entry) in (0..=u16::MAX).zip(table.iter_mut()) {
        let line = [row >> 12, (row >> 8) & 15, (row >> 4) & 15, row & 15].map(value);
        let (s, m, g) = line_terms(&line);
        *entry = w.smoothness * s + w.monotonicity * m + w.merges * g;
    }
    Arc::from(table)
}

#[inline]
fn value(e: u16) -> u64 {
    if e == 0 {
        0
    } else {
        1 << e
    }
}

impl ClassicEvaluator {
    /// An evaluator with these weights (builds its table: a few milliseconds).
    pub fn new(weights: ClassicWeights) -> ClassicEvaluator {
        if weights == ClassicWeights::default() {
            return ClassicEvaluator::default();
        }
        ClassicEvaluator {
            table: build_table(&weights),
            weights,
        }
    }

    pub fn weights(&self) -> &ClassicWeights {
        &self.weights
    }

    /// The five raw terms of a board.
    pub fn terms(tiles: &Tiles) -> ClassicTerms {
        terms_4x4(&tiles.exponents().map(|e| value(u16::from(e))))
    }
}

impl Evaluator for ClassicEvaluator {
    fn name(&self) -> &'static str {
        "classic"
    }

    #[inline]
    fn evaluate_with_transpose(&self, board: Board, transposed: Board) -> f64 {
        let t = &self.table;
        let b = board.0;
        let c = transposed.0;
        let lines = t[(b >> 48) as usize]
            + t[(b >> 32) as u16 as usize]
            + t[(b >> 16) as u16 as usize]
            + t[b as u16 as usize]
            + t[(c >> 48) as usize]
            + t[(c >> 32) as u16 as usize]
            + t[(c >> 16) as u16 as usize]
            + t[c as u16 as usize];
        let e = board.exponents();
        let max = e.iter().copied().max().unwrap_or(0);
        let best = (0..16)
            .filter(|&i| e[i] == max)
            .map(|i| placement(i / 4, i % 4, 4))
            .fold(0.0, f64::max);
        lines
            + self.weights.empty * f64::from(board.empty_count())
            + self.weights.corner * value(max.into()) as f64 * best
    }

    fn evaluate_tiles(&self, tiles: &Tiles) -> f64 {
        self.weights.total(&Self::terms(tiles))
    }

    fn breakdown(&self, tiles: &Tiles) -> Breakdown {
        components(&Self::terms(tiles), &self.weights)
    }
}
