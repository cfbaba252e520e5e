//! Reach odds in a review (`"odds": true`): for each move, the chance that the default play makes the board's next
//! milestones ([`NEXT_MILESTONES`] tiles from 2048 to 65536 that the board does not hold yet) from the position,
//! after the move played and after the best move, and what the move played cost ("6 points of 32768"); for the
//! summary, the game's largest such losses ([`LARGEST_ODDS_LOSSES`]).
//!
//! The chances come from the odds model ([`crate::eval::odds`]) read off the search values of each direction: the
//! review's own search when it searched as the default play does (the default review), else the default play's
//! search of the same board beside it (about a millisecond a move). No other search is made.

use serde::Serialize;

use super::grade::Grade;
use crate::engine::{Direction, Tiles};
use crate::eval::odds::{Chance, FittedFor, TILES};
use crate::request::odds::Odds;

/// How many milestones a reviewed move reports: the next two tiles its board does not hold.
pub const NEXT_MILESTONES: usize = 2;

/// How many of the game's largest odds losses the summary lists.
pub const LARGEST_ODDS_LOSSES: usize = 5;

/// One milestone's chances at a reviewed move, each in \[0, 1\].
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct MilestoneOdds {
    pub tile: u32,
    /// The position's chance: the default play from the board before the move.
    pub before: f64,
    /// After the move played, then the default play.
    pub after_played: f64,
    /// After the review's best move, then the default play.
    pub after_best: f64,
    /// What the move played cost: `after_best - after_played`, in chance (0.06 is 6 points); 0 when the move was
    /// graded best, and 0 when the move played kept at least the best move's chance (the odds read the board's shape
    /// as well as its value, so a move the search values less can keep a larger chance of a tile).
    pub loss: f64,
}

/// The tiles of [`TILES`] a board does not hold yet, the next [`NEXT_MILESTONES`] of them (fewer near 65536).
pub fn next_milestones(board: &Tiles) -> impl Iterator<Item = (usize, u32)> {
    let largest = board.max_tile();
    TILES
        .into_iter()
        .enumerate()
        .filter(move |&(_, tile)| tile > largest)
        .take(NEXT_MILESTONES)
}

/// The milestones of a move on `board` from its `odds`: `played` and `best` are the directions the review compared,
/// `grade` the played move's grade. A direction without odds (illegal: cannot happen for a graded move) counts as 0.
pub fn milestone_odds(
    board: &Tiles,
    odds: &Odds,
    played: Direction,
    best: Direction,
    grade: Grade,
) -> Vec<MilestoneOdds> {
    let chance = |list: Option<&Vec<Chance>>, i: usize| list.and_then(|l| l.get(i)).map_or(0.0, |c| c.chance);
    let after = |d: Direction| odds.directions[d.index()].as_ref();
    next_milestones(board)
        .map(|(i, tile)| {
            let after_played = chance(after(played), i);
            let after_best = chance(after(best), i);
            let loss = if grade == Grade::Best {
                0.0
            } else {
                (after_best - after_played).max(0.0)
            };
            MilestoneOdds {
                tile,
                before: chance(Some(&odds.position.chances), i),
                after_played,
                after_best,
                loss,
            }
        })
        .collect()
}

/// One of a game's largest odds losses: a move and the milestone it lost the most chance of.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct OddsLoss {
    /// The move's position in the record (0-based).
    pub index: u64,
    pub tile: u32,
    pub played: &'static str,
    pub best: &'static str,
    pub before: f64,
    pub after_played: f64,
    pub after_best: f64,
    /// `after_best - after_played` (see [`MilestoneOdds::loss`]).
    pub loss: f64,
}

impl OddsLoss {
    /// The milestone of a move's `odds` with the largest loss (the smaller tile on a tie), if any lost something.
    pub fn of_move(index: u64, played: &'static str, best: &'static str, odds: &[MilestoneOdds]) -> Option<OddsLoss> {
        let worst = odds
            .iter()
            .filter(|m| m.loss > 0.0)
            .fold(None, |top: Option<&MilestoneOdds>, m| match top {
                Some(t) if t.loss >= m.loss => top,
                _ => Some(m),
            })?;
        Some(OddsLoss {
            index,
            tile: worst.tile,
            played,
            best,
            before: worst.before,
            after_played: worst.after_played,
            after_best: worst.after_best,
            loss: worst.loss,
        })
    }
}

/// The odds part of a review's summary.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct ReviewOdds {
    /// The play the chances predict.
    pub play: FittedFor,
    /// The graded moves with the largest odds loss, largest first (an equal loss keeps the earlier move ahead), at
    /// most [`LARGEST_ODDS_LOSSES`]; moves that lost no chance left out.
    pub largest_losses: Vec<OddsLoss>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::odds::PositionOdds;

    fn chances(values: [f64; 6]) -> Vec<Chance> {
        TILES
            .iter()
            .zip(values)
            .map(|(&tile, chance)| Chance { tile, chance })
            .collect()
    }

    fn odds() -> Odds {
        let play = crate::eval::odds::test_play();
        Odds {
            position: PositionOdds {
                chances: chances([1.0, 1.0, 0.9, 0.5, 0.2, 0.0]),
                direction: Some("up"),
                play,
            },
            directions: [
                Some(chances([1.0, 1.0, 0.9, 0.5, 0.2, 0.0])),
                Some(chances([1.0, 1.0, 0.8, 0.3, 0.25, 0.0])),
                None,
                Some(chances([1.0, 1.0, 0.95, 0.6, 0.1, 0.0])),
            ],
        }
    }

    #[test]
    fn the_next_milestones_are_the_two_tiles_the_board_lacks() {
        let board = |e: u8| Tiles::from_exponents([e, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).expect("a board");
        let tiles = |b: Tiles| next_milestones(&b).map(|(_, t)| t).collect::<Vec<_>>();
        assert_eq!(tiles(board(3)), [2048, 4096]);
        assert_eq!(tiles(board(12)), [8192, 16384]);
        assert_eq!(tiles(board(15)), [65536]);
        assert_eq!(tiles(board(16)), Vec::<u32>::new());
    }

    #[test]
    fn a_move_costs_the_chance_the_best_move_keeps_and_it_does_not() {
        // The board holds 4096: the milestones are 8192 and 16384.
        let board = Tiles::from_exponents([12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).expect("a board");
        let m = milestone_odds(&board, &odds(), Direction::Down, Direction::Up, Grade::Mistake);
        assert_eq!(m.iter().map(|x| x.tile).collect::<Vec<_>>(), [8192, 16384]);
        assert!(
            (m[0].loss - 0.1).abs() < 1e-12 && (m[1].loss - 0.2).abs() < 1e-12,
            "{m:?}"
        );
        assert_eq!((m[1].before, m[1].after_played, m[1].after_best), (0.5, 0.3, 0.5));
        let worst = OddsLoss::of_move(7, "down", "up", &m).expect("a loss");
        assert_eq!((worst.index, worst.tile), (7, 16384));
        // A played move that keeps a larger chance than the best one lost nothing; a move graded best neither.
        let kept = milestone_odds(&board, &odds(), Direction::Right, Direction::Up, Grade::Good);
        assert!(kept.iter().all(|x| x.loss == 0.0), "{kept:?}");
        assert_eq!(OddsLoss::of_move(1, "right", "up", &kept), None);
        let tie = milestone_odds(&board, &odds(), Direction::Down, Direction::Up, Grade::Best);
        assert!(tie.iter().all(|x| x.loss == 0.0), "{tie:?}");
    }
}
