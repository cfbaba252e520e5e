//! A move's grade: the values of every direction of its position, the played direction's loss against the best
//! one, and the grade its relative loss earns ([`GRADE_LIMITS`]).

use serde::{Serialize, Serializer};

use super::odds::MilestoneOdds;
use super::RecordedMove;
use crate::engine::Direction;
use crate::names::named_enum;
use crate::request::Rows;
use crate::search::SearchOutcome;

/// The upper relative loss of each grade below `best`, in order: `good` up to 1%, `inaccuracy` up to 5%, `mistake`
/// up to 20%; a larger loss is a `blunder`.
pub const GRADE_LIMITS: [(Grade, f64); 3] = [(Grade::Good, 0.01), (Grade::Inaccuracy, 0.05), (Grade::Mistake, 0.20)];

/// Values whose relative difference is below this are a tie (loss 0, grade `best`): mirror images of one board are
/// worth the same, but their values can differ in the last bits (the transposition table keeps f32, and sums are
/// taken in another order), e.g. 135545.65882 against 135545.65922 on a board with two 2s.
pub const TIE_RELATIVE: f64 = 1e-6;

named_enum! {
    /// How good a move was, from its relative loss ([`GRADE_LIMITS`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Grade: "a grade" {
        Best = "best",
        Good = "good",
        Inaccuracy = "inaccuracy",
        Mistake = "mistake",
        Blunder = "blunder",
    }
}

impl Grade {
    /// The grade of a move whose relative loss is `relative` (the played direction is not the best one).
    pub fn of_relative_loss(relative: f64) -> Grade {
        GRADE_LIMITS
            .iter()
            .find(|(_, limit)| relative <= *limit)
            .map_or(Grade::Blunder, |(grade, _)| *grade)
    }
}

impl Serialize for Grade {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The value of each direction of a position; null when the direction is illegal.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct DirectionValues {
    pub up: Option<f64>,
    pub down: Option<f64>,
    pub left: Option<f64>,
    pub right: Option<f64>,
}

impl DirectionValues {
    pub(super) fn new(values: &[Option<f64>; 4]) -> DirectionValues {
        DirectionValues {
            up: values[Direction::Up.index()],
            down: values[Direction::Down.index()],
            left: values[Direction::Left.index()],
            right: values[Direction::Right.index()],
        }
    }
}

/// One graded move.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct MoveReview {
    /// Position in the record (0-based).
    pub index: u64,
    /// The board before the move.
    pub board: Rows,
    pub played: &'static str,
    /// The direction the search chose (on a tie, the first of up, down, left, right).
    pub best: &'static str,
    pub values: DirectionValues,
    /// The best value minus the played direction's value (0 for a best move).
    pub loss: f64,
    /// The loss over the larger magnitude of the two values (0 for a best move).
    pub relative_loss: f64,
    pub grade: Grade,
    /// Only one direction was legal.
    pub forced: bool,
    /// Plies of the search's deepest completed iteration.
    pub depth: u32,
    /// With `"odds": true`: the chances of the board's next milestones before the move, after the move played and
    /// after the best move, and what the move cost ([`MilestoneOdds`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<Vec<MilestoneOdds>>,
}

impl MoveReview {
    /// Grades move `index`, `m`, from the search of its board (which completed an iteration).
    pub fn new(index: u64, m: &RecordedMove, outcome: &SearchOutcome) -> MoveReview {
        let best = outcome.best.unwrap_or(m.direction);
        let value = |d: Direction| outcome.values[d.index()].unwrap_or(f64::NAN);
        let (best_value, played_value) = (value(best), value(m.direction));
        let legal = outcome.values.iter().filter(|v| v.is_some()).count();
        let loss = match best_value - played_value {
            l if l > 0.0 => l,
            // Ties, and values that are not numbers (cannot happen after a completed iteration), lose nothing.
            _ => 0.0,
        };
        let scale = best_value.abs().max(played_value.abs());
        let relative_loss = if loss > 0.0 && scale > 0.0 { loss / scale } else { 0.0 };
        let (loss, relative_loss) = if relative_loss < TIE_RELATIVE {
            (0.0, 0.0)
        } else {
            (loss, relative_loss)
        };
        let grade = if loss > 0.0 {
            Grade::of_relative_loss(relative_loss)
        } else {
            Grade::Best
        };
        MoveReview {
            index,
            board: m.board.to_rows(),
            played: m.direction.as_str(),
            best: best.as_str(),
            values: DirectionValues::new(&outcome.values),
            loss,
            relative_loss,
            grade,
            forced: legal == 1,
            depth: outcome.stats.depth,
            odds: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grade_limits_cut_where_the_docs_say() {
        assert_eq!(Grade::of_relative_loss(0.0), Grade::Good);
        assert_eq!(Grade::of_relative_loss(0.01), Grade::Good);
        assert_eq!(Grade::of_relative_loss(0.0100001), Grade::Inaccuracy);
        assert_eq!(Grade::of_relative_loss(0.05), Grade::Inaccuracy);
        assert_eq!(Grade::of_relative_loss(0.2), Grade::Mistake);
        assert_eq!(Grade::of_relative_loss(0.21), Grade::Blunder);
        assert_eq!(Grade::of_relative_loss(f64::INFINITY), Grade::Blunder);
    }
}
