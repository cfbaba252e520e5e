//! The answers of `best-move` and `evaluate`: plain `Serialize` types that the HTTP API sends as JSON and the
//! command line prints (`--json`) or renders as text. They know nothing of HTTP or of the command line. The
//! self-play answer is [`crate::sim::SimReport`].

use serde::Serialize;

use crate::engine::{Direction, Tiles};
use crate::eval::{AnyEvaluator, Breakdown, Evaluator, EvaluatorKind};
use crate::search::{SearchOutcome, SearchSettings};

/// Board rows of tile values, top row first.
pub type Rows = [[u32; 4]; 4];

/// One direction in a best-move answer.
#[derive(Serialize, Clone, Debug)]
pub struct MoveAnswer {
    pub direction: &'static str,
    pub legal: bool,
    /// Expectimax value; null when illegal (or when no search iteration completed).
    pub value: Option<f64>,
    pub reward: Option<u64>,
    /// The board after the move, before any spawn; null when illegal.
    pub board: Option<Rows>,
    pub heuristic: Option<Breakdown>,
    /// With a learned evaluator (`ntuple`), whose components are tuple weights no person can read: the `tuned`
    /// heuristic's breakdown of the same board (monotonicity, merges, empty cells, ...), so the advice still shows
    /// why. Absent with the hand-written evaluators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuned_heuristic: Option<Breakdown>,
}

/// How the search went.
#[derive(Serialize, Clone, Debug)]
pub struct SearchInfo {
    pub profile: &'static str,
    pub evaluator: &'static str,
    /// Plies of the deepest completed iteration.
    pub depth: u32,
    /// Plies asked for (`auto` resolved).
    pub target_depth: u32,
    pub nodes: u64,
    pub tt_hits: u64,
    pub elapsed_ms: f64,
    pub truncated: bool,
}

/// The best-move answer.
#[derive(Serialize, Clone, Debug)]
pub struct BestMoveResponse {
    pub direction: Option<&'static str>,
    pub game_over: bool,
    /// The board searched, as rows.
    pub board: Rows,
    pub moves: Vec<MoveAnswer>,
    pub search: SearchInfo,
}

impl BestMoveResponse {
    /// The answer for `tiles` searched with `settings` and `evaluator` (the outcome of that search).
    pub fn new(
        tiles: &Tiles,
        outcome: &SearchOutcome,
        evaluator: &AnyEvaluator,
        settings: &SearchSettings,
    ) -> BestMoveResponse {
        let moves = Direction::ALL
            .into_iter()
            .map(|d| {
                let after = tiles.play(d);
                MoveAnswer {
                    direction: d.as_str(),
                    legal: after.is_some(),
                    value: outcome.values[d.index()],
                    reward: after.map(|(_, r)| r),
                    board: after.map(|(t, _)| t.to_rows()),
                    heuristic: after.map(|(t, _)| evaluator.breakdown(&t)),
                    tuned_heuristic: after.and_then(|(t, _)| readable_breakdown(evaluator, &t)),
                }
            })
            .collect();
        BestMoveResponse {
            direction: outcome.best.map(Direction::as_str),
            game_over: outcome.game_over(),
            board: tiles.to_rows(),
            moves,
            search: SearchInfo {
                profile: settings.profile.as_str(),
                evaluator: evaluator.name(),
                depth: outcome.stats.depth,
                target_depth: outcome.stats.target_depth,
                nodes: outcome.stats.nodes,
                tt_hits: outcome.stats.tt_hits,
                elapsed_ms: outcome.stats.elapsed.as_secs_f64() * 1e3,
                truncated: outcome.stats.truncated,
            },
        }
    }
}

/// The `tuned` heuristic's breakdown of `tiles` when `evaluator` is a learned network (see
/// [`MoveAnswer::tuned_heuristic`]).
fn readable_breakdown(evaluator: &AnyEvaluator, tiles: &Tiles) -> Option<Breakdown> {
    if !matches!(evaluator, AnyEvaluator::NTuple(_)) {
        return None;
    }
    let tuned = EvaluatorKind::Tuned.default_evaluator().ok()?;
    Some(tuned.breakdown(tiles))
}

/// A legal move in an evaluate answer.
#[derive(Serialize, Clone, Debug)]
pub struct AfterMove {
    pub direction: &'static str,
    pub board: Rows,
    pub reward: u64,
    pub heuristic: Breakdown,
}

/// The evaluate answer: the board's own breakdown (flattened) and each legal move's.
#[derive(Serialize, Clone, Debug)]
pub struct EvaluateResponse {
    pub evaluator: &'static str,
    pub board: Rows,
    pub total: f64,
    pub components: Vec<crate::eval::Component>,
    pub after_moves: Vec<AfterMove>,
}

impl EvaluateResponse {
    /// The breakdown of `tiles` and of the board after each legal move, by `evaluator`.
    pub fn new(tiles: &Tiles, evaluator: &AnyEvaluator) -> EvaluateResponse {
        let own = evaluator.breakdown(tiles);
        let after_moves = Direction::ALL
            .into_iter()
            .filter_map(|d| {
                let (t, reward) = tiles.play(d)?;
                Some(AfterMove {
                    direction: d.as_str(),
                    board: t.to_rows(),
                    reward,
                    heuristic: evaluator.breakdown(&t),
                })
            })
            .collect();
        EvaluateResponse {
            evaluator: evaluator.name(),
            board: tiles.to_rows(),
            total: own.total,
            components: own.components,
            after_moves,
        }
    }
}
