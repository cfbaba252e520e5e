//! Where a budgeted search spends its effort: the board's danger.
//!
//! A search with a node budget ([`SearchSettings::node_budget`](super::SearchSettings::node_budget)) or a self-play
//! game with a time budget (`sim::budget`) weights its allowance by [`danger_weight`]: the fewer the empty cells,
//! the closer the game is to its end, the more a wrong move costs, and the cheaper each ply is (fewer spawns to
//! try), so a crowded board gets more and an open one less. And a board on the run to 32768 (its largest tile
//! 16384), where most games that make 16384 are won or lost, gets `late_weight` times that
//! ([`SearchSettings::late_weight`](super::SearchSettings::late_weight)).

use crate::engine::Tiles;

/// The largest tile of a board on the run to 32768: the stretch [`danger_weight`]'s `late_weight` is for.
pub const LATE_RUN_TILE: u32 = 16384;

/// How much of a budget a board deserves before its search: 2 with at most two empty cells, 1 with three to five,
/// 0.5 with more; times `late_weight` when the board's largest tile is [`LATE_RUN_TILE`].
pub fn danger_weight(board: &Tiles, late_weight: f64) -> f64 {
    let crowding = match board.exponents().iter().filter(|&&e| e == 0).count() {
        0..=2 => 2.0,
        3..=5 => 1.0,
        _ => 0.5,
    };
    if board.max_tile() == LATE_RUN_TILE {
        crowding * late_weight
    } else {
        crowding
    }
}

/// The nodes a search with a node budget of `budget` may plan for on `board` when each of its nodes costs
/// `node_cost` ([`Evaluator::node_cost`](crate::eval::Evaluator::node_cost)): the budget weighted by the board's
/// [`danger_weight`] (with `late_weight`), divided by the cost.
pub fn node_allowance(budget: u64, board: &Tiles, late_weight: f64, node_cost: f64) -> u64 {
    (budget as f64 * danger_weight(board, late_weight) / node_cost) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_boards_get_more_of_the_budget_than_open_ones() {
        let crowded = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let middle = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [0, 0, 0, 16], [0, 0, 2, 4]]).unwrap();
        let open = Tiles::from_rows(&[[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 0]]).unwrap();
        assert_eq!(node_allowance(1000, &crowded, 1.0, 1.0), 2000);
        assert_eq!(node_allowance(1000, &middle, 1.0, 1.0), 1000);
        assert_eq!(node_allowance(1000, &open, 1.0, 1.0), 500);
        // A node that costs twice (a stage reading twice the tuples) halves the nodes.
        assert_eq!(node_allowance(1000, &crowded, 1.0, 2.0), 1000);
        // The late weight is for boards whose largest tile is 16384 only.
        assert_eq!(node_allowance(1000, &crowded, 2.0, 1.0), 2000);
    }

    #[test]
    fn boards_on_the_run_to_32768_get_the_late_weight_and_no_others() {
        let late_crowded =
            Tiles::from_rows(&[[16384, 8192, 4096, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let late_open = Tiles::from_rows(&[[16384, 0, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 2]]).unwrap();
        let won = Tiles::from_rows(&[[32768, 16384, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 2]]).unwrap();
        let before = Tiles::from_rows(&[[8192, 4096, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 2]]).unwrap();
        assert_eq!(danger_weight(&late_crowded, 2.0), 4.0);
        assert_eq!(danger_weight(&late_open, 2.0), 1.0);
        assert_eq!(danger_weight(&late_open, 1.0), 0.5);
        assert_eq!(danger_weight(&won, 2.0), 0.5);
        assert_eq!(danger_weight(&before, 2.0), 0.5);
        assert_eq!(node_allowance(40_000, &late_crowded, 2.0, 1.0), 160_000);
    }
}
