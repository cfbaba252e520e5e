//! The summary of a review: the running figures kept while moves are graded ([`Tally`]), the worst moves, the
//! count of each grade, and where the game's largest tile was made.

use std::time::Duration;

use serde::Serialize;

use super::odds::{OddsLoss, ReviewOdds, LARGEST_ODDS_LOSSES};
use super::{Grade, MoveReview, RecordedMove};
use crate::eval::odds::FittedFor;
use crate::eval::{AnyEvaluator, Evaluator};
use crate::request::Rows;
use crate::search::SearchSettings;

/// The worst moves a summary lists.
pub const WORST_MOVES: usize = 5;

/// A move among the worst of a game.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct WorstMove {
    pub index: u64,
    pub board: Rows,
    pub played: &'static str,
    pub best: &'static str,
    pub loss: f64,
    pub relative_loss: f64,
    pub grade: Grade,
}

/// How many graded moves got each grade.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GradeCounts {
    pub best: u64,
    pub good: u64,
    pub inaccuracy: u64,
    pub mistake: u64,
    pub blunder: u64,
}

impl GradeCounts {
    fn add(&mut self, grade: Grade) {
        let slot = match grade {
            Grade::Best => &mut self.best,
            Grade::Good => &mut self.good,
            Grade::Inaccuracy => &mut self.inaccuracy,
            Grade::Mistake => &mut self.mistake,
            Grade::Blunder => &mut self.blunder,
        };
        *slot += 1;
    }
}

/// Where the game's largest tile was made.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct LargestTile {
    pub tile: u32,
    /// The move whose merge first made it; null when the first board already held it.
    #[serde(rename = "move")]
    pub made_by: Option<u64>,
}

/// The review's summary.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct AnalyzeSummary {
    /// Moves in the record.
    pub moves: u64,
    /// Moves graded (all of them unless the review was cut short).
    pub graded: u64,
    /// Every move was graded (false: the wall-clock limit or a stop cut the review short).
    pub complete: bool,
    /// Graded moves with one legal direction.
    pub forced: u64,
    pub grades: GradeCounts,
    /// Share of graded moves that were best; null when none was graded.
    pub accuracy: Option<f64>,
    /// 1 minus the mean relative loss (each capped at 1) over the graded moves; null when none was graded.
    pub weighted_accuracy: Option<f64>,
    pub total_loss: f64,
    /// Null when no move was graded.
    pub mean_loss: Option<f64>,
    /// The graded moves with the largest loss (at most [`WORST_MOVES`], largest first; moves without loss left out).
    pub worst: Vec<WorstMove>,
    /// Over the whole record (graded or not).
    pub largest_tile: LargestTile,
    pub profile: &'static str,
    pub evaluator: &'static str,
    /// Plies asked for (`auto` resolved on the first board).
    pub target_depth: u32,
    /// The searches' node budget (`None`: every search to `target_depth`, or as deep as its time budget allowed).
    pub node_budget: Option<u64>,
    /// The node budget's weight on boards on the run to 32768.
    pub late_weight: f64,
    /// Moves tried at move nodes, over every search of the review.
    pub nodes: u64,
    pub elapsed_ms: f64,
    /// With `"odds": true`: the play the chances predict and the game's largest odds losses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<ReviewOdds>,
}

/// The running figures of a review.
#[derive(Default)]
pub(super) struct Tally {
    graded: u64,
    forced: u64,
    grades: GradeCounts,
    total_loss: f64,
    capped_relative: f64,
    worst: Vec<WorstMove>,
    odds_losses: Vec<OddsLoss>,
    /// Moves tried at move nodes, over every search so far.
    pub(super) nodes: u64,
}

/// Inserts `item` into `list` (largest `key` first, at most `limit` long) when it is among the `limit` largest; an
/// equal key keeps the earlier item ahead. Items whose key is not above 0 are left out.
fn keep_largest<T>(list: &mut Vec<T>, item: T, key: impl Fn(&T) -> f64, limit: usize) {
    let k = key(&item);
    if k > 0.0 && (list.len() < limit || list.last().is_some_and(|last| k > key(last))) {
        let at = list.partition_point(|x| key(x) >= k);
        list.insert(at, item);
        list.truncate(limit);
    }
}

impl Tally {
    pub(super) fn add(&mut self, m: &MoveReview) {
        self.graded += 1;
        self.forced += u64::from(m.forced);
        self.grades.add(m.grade);
        self.total_loss += m.loss;
        self.capped_relative += m.relative_loss.min(1.0);
        let worst = WorstMove {
            index: m.index,
            board: m.board,
            played: m.played,
            best: m.best,
            loss: m.loss,
            relative_loss: m.relative_loss,
            grade: m.grade,
        };
        keep_largest(&mut self.worst, worst, |w| w.loss, WORST_MOVES);
        if let Some(lost) = m
            .odds
            .as_deref()
            .and_then(|odds| OddsLoss::of_move(m.index, m.played, m.best, odds))
        {
            keep_largest(&mut self.odds_losses, lost, |l| l.loss, LARGEST_ODDS_LOSSES);
        }
    }

    /// The summary of a review of `record` whose graded moves were added; `odds_play` is the play of the odds when
    /// the review gave them.
    pub(super) fn summary(
        self,
        record: &[RecordedMove],
        evaluator: &AnyEvaluator,
        settings: &SearchSettings,
        elapsed: Duration,
        odds_play: Option<FittedFor>,
    ) -> AnalyzeSummary {
        let graded = self.graded as f64;
        let per_move = |x: f64| (self.graded > 0).then(|| x / graded);
        let first = record.first().map(|m| m.board).unwrap_or_default();
        AnalyzeSummary {
            moves: record.len() as u64,
            graded: self.graded,
            complete: self.graded == record.len() as u64,
            forced: self.forced,
            grades: self.grades,
            accuracy: per_move(self.grades.best as f64),
            weighted_accuracy: per_move(self.capped_relative).map(|r| 1.0 - r),
            total_loss: self.total_loss,
            mean_loss: per_move(self.total_loss),
            worst: self.worst,
            largest_tile: largest_tile(record),
            profile: settings.profile.as_str(),
            evaluator: evaluator.name(),
            target_depth: settings.depth.plies_for(&first),
            node_budget: settings.node_budget,
            late_weight: settings.late_weight,
            nodes: self.nodes,
            elapsed_ms: elapsed.as_secs_f64() * 1e3,
            odds: odds_play.map(|play| ReviewOdds {
                play,
                largest_losses: self.odds_losses,
            }),
        }
    }
}

/// The largest tile of the record's boards and of the boards its moves made, and the move that first made it.
pub fn largest_tile(record: &[RecordedMove]) -> LargestTile {
    let mut largest = LargestTile {
        tile: record.first().map_or(0, |m| m.board.max_tile()),
        made_by: None,
    };
    for (i, m) in record.iter().enumerate() {
        let before = m.board.max_tile();
        if before > largest.tile {
            // A record with gaps: the tile was made off the record.
            largest = LargestTile {
                tile: before,
                made_by: None,
            };
        }
        if let Some((after, _)) = m.board.play(m.direction) {
            if after.max_tile() > largest.tile {
                largest = LargestTile {
                    tile: after.max_tile(),
                    made_by: Some(i as u64),
                };
            }
        }
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Direction, Tiles};
    use crate::request::analyze::DirectionValues;

    fn tiles(rows: [[i64; 4]; 4]) -> Tiles {
        Tiles::from_rows(&rows).expect("a board")
    }

    #[test]
    fn the_largest_tile_is_credited_to_the_move_that_merged_it() {
        let board = tiles([[4, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]]);
        let record = [
            RecordedMove {
                board,
                direction: Direction::Down,
            },
            RecordedMove {
                board,
                direction: Direction::Left,
            },
        ];
        assert_eq!(
            largest_tile(&record),
            LargestTile {
                tile: 8,
                made_by: Some(1)
            }
        );
    }

    #[test]
    fn the_worst_moves_are_the_largest_losses_earliest_first_on_ties() {
        let mut tally = Tally::default();
        let board = [[0; 4]; 4];
        for (i, loss) in [3.0, 0.0, 7.0, 3.0, 1.0, 9.0, 2.0, 3.0].into_iter().enumerate() {
            tally.add(&MoveReview {
                index: i as u64,
                board,
                played: "up",
                best: "down",
                values: DirectionValues::new(&[None; 4]),
                loss,
                relative_loss: loss / 10.0,
                grade: Grade::Mistake,
                forced: false,
                depth: 1,
                odds: None,
            });
        }
        let worst: Vec<u64> = tally.worst.iter().map(|w| w.index).collect();
        assert_eq!(worst, [5, 2, 0, 3, 7]);
    }
}
