//! A plain recursive expectimax over the reference model (`engine::reference`, any n x n grid), written straight
//! from the semantics in the module docs: no tables, no transposition, no sampling. The tests' oracle, and the way
//! the seed document's 2x2 example is searched.

use crate::engine::reference::{empty_cells, move_grid, Grid};
use crate::engine::Direction;

/// The parameters the reference search honours.
#[derive(Clone, Copy, Debug)]
pub struct ReferenceParams {
    pub reward_weight: f64,
    /// `true`: a board with no legal move is worth h(board); `false`: 0.
    pub terminal_heuristic: bool,
    pub prob_cutoff: f64,
}

/// The value of each direction (order of [`Direction::ALL`]) at `depth` plies; `None` for illegal directions.
pub fn root_values_reference(
    grid: &Grid,
    depth: u32,
    h: &dyn Fn(&Grid) -> f64,
    params: &ReferenceParams,
) -> [Option<f64>; 4] {
    Direction::ALL.map(|d| {
        let (after, reward) = move_grid(grid, d);
        (after != *grid).then(|| params.reward_weight * reward as f64 + chance(&after, depth - 1, 1.0, h, params))
    })
}

fn max_node(grid: &Grid, plies: u32, prob: f64, h: &dyn Fn(&Grid) -> f64, params: &ReferenceParams) -> f64 {
    if plies == 0 {
        return h(grid);
    }
    let mut best: Option<f64> = None;
    for d in Direction::ALL {
        let (after, reward) = move_grid(grid, d);
        if after != *grid {
            let v = params.reward_weight * reward as f64 + chance(&after, plies - 1, prob, h, params);
            best = Some(best.map_or(v, |b: f64| b.max(v)));
        }
    }
    best.unwrap_or_else(|| if params.terminal_heuristic { h(grid) } else { 0.0 })
}

fn chance(grid: &Grid, plies: u32, prob: f64, h: &dyn Fn(&Grid) -> f64, params: &ReferenceParams) -> f64 {
    if plies == 0 || prob < params.prob_cutoff {
        return h(grid);
    }
    let cells = empty_cells(grid);
    if cells.is_empty() {
        return h(grid);
    }
    let e = cells.len() as f64;
    let mut total = 0.0;
    for (r, c) in cells {
        for (value, p) in [(2, 0.9), (4, 0.1)] {
            let mut child = grid.clone();
            child[r][c] = value;
            total += p * max_node(&child, plies - 1, prob * p / e, h, params);
        }
    }
    total / e
}
