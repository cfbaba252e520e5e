//! A game's time budget: the mean time per move held to the budget over the game, spent where the board is
//! dangerous.
//!
//! A self-play game asked to search with a time budget `B` gives each move an allowance instead of `B` itself:
//! `B` weighted by the board's danger ([`danger_weight`]: fewer empty cells, more time; more on the run to 32768
//! by the search's `late_weight`), plus a share of the time earlier moves left unused (or minus what they
//! overspent). A search stops deepening early when its next iteration cannot end within its allowance or its move
//! is forced (see `search`), so most moves leave time over; the bank hands it to the crowded boards, where a deeper
//! search is both cheaper (few empty cells, few spawns) and most needed. Over a game the moves' mean time stays
//! close to `B` (the `simulate` summary's `ms_per_move` shows it, and its depth histogram what the time bought).

use std::time::Duration;

use crate::engine::Tiles;
use crate::search::danger_weight;

/// The share of the bank a move may draw on (or must repay) at once.
const BANK_SHARE: f64 = 1.0 / 8.0;
/// The bank holds at most this many budgets either way (a long run of forced moves does not buy one huge search).
const BANK_LIMIT: f64 = 50.0;
/// A move's allowance stays within these multiples of the budget.
const ALLOWANCE_RANGE: (f64, f64) = (0.125, 8.0);

/// The per-move allowances of one game searched under a mean time budget.
#[derive(Clone, Debug)]
pub struct GameBudget {
    budget: Duration,
    /// [`danger_weight`]'s weight on boards on the run to 32768.
    late_weight: f64,
    /// Time left unused by earlier moves (negative: overspent), in budgets.
    bank: f64,
}

impl GameBudget {
    pub fn new(budget: Duration, late_weight: f64) -> GameBudget {
        GameBudget {
            budget,
            late_weight,
            bank: 0.0,
        }
    }

    /// The time the next move's search may take on `board`.
    pub fn allowance(&self, board: &Tiles) -> Duration {
        let share = danger_weight(board, self.late_weight) + BANK_SHARE * self.bank;
        self.budget.mul_f64(share.clamp(ALLOWANCE_RANGE.0, ALLOWANCE_RANGE.1))
    }

    /// Records what a move's search took.
    pub fn spent(&mut self, took: Duration) {
        let budget = self.budget.as_secs_f64().max(1e-9);
        self.bank = (self.bank + 1.0 - took.as_secs_f64() / budget).clamp(-BANK_LIMIT, BANK_LIMIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unused_time_is_lent_to_later_moves_and_overspent_time_taken_back() {
        let crowded = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let open = Tiles::from_rows(&[[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 4, 0], [0, 0, 0, 0]]).unwrap();
        let b = Duration::from_millis(1);
        let mut game = GameBudget::new(b, 1.0);
        assert_eq!(game.allowance(&crowded), b * 2);
        assert_eq!(game.allowance(&open), b / 2);
        // Eight moves that took nothing leave eight budgets in the bank: the next move may draw one more budget.
        for _ in 0..8 {
            game.spent(Duration::ZERO);
        }
        assert_eq!(game.allowance(&open), b.mul_f64(1.5));
        // Overspending empties the bank and then shrinks the allowances, never below an eighth of the budget.
        for _ in 0..100 {
            game.spent(b * 10);
        }
        assert_eq!(game.allowance(&crowded), b / 8);
    }

    #[test]
    fn a_late_weight_gives_the_run_to_32768_more_of_the_time() {
        let late = Tiles::from_rows(&[[16384, 4, 8, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let crowded = Tiles::from_rows(&[[2, 4, 8, 16], [32, 64, 128, 256], [2, 4, 8, 16], [0, 0, 2, 4]]).unwrap();
        let b = Duration::from_millis(1);
        let game = GameBudget::new(b, 1.5);
        assert_eq!(game.allowance(&late), b * 3);
        assert_eq!(game.allowance(&crowded), b * 2);
        assert_eq!(GameBudget::new(b, 1.0).allowance(&late), b * 2);
    }
}
