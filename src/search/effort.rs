//! Where a budgeted search spends its effort: the board's danger.
//!
//! A search with a node budget ([`SearchSettings::node_budget`](super::SearchSettings::node_budget)) or a self-play
//! game with a time budget (`sim::budget`) weights its allowance by [`danger_weight`]: the fewer the empty cells,
//! the closer the game is to its end, the more a wrong move costs, and the cheaper each ply is (fewer spawns to
//! try), so a crowded board gets more and an open one less.

use crate::engine::Tiles;

/// How much of a budget a board deserves before its search: 2 with at most two empty cells, 1 with three to five,
/// 0.5 with more.
pub fn danger_weight(board: &Tiles) -> f64 {
    match board.exponents().iter().filter(|&&e| e == 0).count() {
        0..=2 => 2.0,
        3..=5 => 1.0,
        _ => 0.5,
    }
}

/// The nodes a search with a node budget of `budget` may plan for on `board` when each of its nodes costs
/// `node_cost` ([`Evaluator::node_cost`](crate::eval::Evaluator::node_cost)): the budget weighted by the board's
/// [`danger_weight`], divided by the cost.
pub fn node_allowance(budget: u64, board: &Tiles, node_cost: f64) -> u64 {
    (budget as f64 * danger_weight(board) / node_cost) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_boards_get_more_of_the_budget_than_open_ones() {
        let crowded = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let middle = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [0, 0, 0, 16], [0, 0, 2, 4]]).unwrap();
        let open = Tiles::from_rows(&[[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 0]]).unwrap();
        assert_eq!(node_allowance(1000, &crowded, 1.0), 2000);
        assert_eq!(node_allowance(1000, &middle, 1.0), 1000);
        assert_eq!(node_allowance(1000, &open, 1.0), 500);
        // A node that costs twice (a stage reading twice the tuples) halves the nodes.
        assert_eq!(node_allowance(1000, &crowded, 2.0), 1000);
    }
}
