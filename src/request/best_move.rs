//! `POST /best-move` and `advisor2048 best-move`: search one board and explain every direction. The request (a
//! board and the search fields), its work ([`BestMoveRequest::run`]) and its answer ([`BestMoveResponse`]) live
//! here; the route and the command only carry them in and out.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::read::body_object;
use super::{
    field, read_search, required_board, Problem, Problems, Rows, SearchBounds, SearchRequest, ONE_SEARCH, SEARCH,
};
use crate::engine::{Direction, Tiles};
use crate::eval::{AnyEvaluator, Breakdown, Evaluator, EvaluatorKind, Network};
use crate::search::{search, SearchOutcome, SearchSettings, StopHandle};

/// `POST /best-move` and `advisor2048 best-move`.
#[derive(Clone, Debug, PartialEq)]
pub struct BestMoveRequest {
    pub board: Tiles,
    pub search: SearchRequest,
}

impl BestMoveRequest {
    /// Reads and validates a request, reporting every problem.
    pub fn from_json(body: &Value, bounds: &SearchBounds) -> Result<BestMoveRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = vec!["board"];
        known.extend(field::names(&[SEARCH, ONE_SEARCH]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        let board = required_board(map, &mut problems);
        let search = read_search(map, bounds, true, &mut problems);
        let (board, search) = problems.finish(board.zip(search))?;
        Ok(BestMoveRequest { board, search })
    }

    /// Searches the board with the request's evaluator (`network` is the `ntuple` evaluator's) until the search
    /// ends or `stop` is tripped, and explains every direction. A missing network is a problem at the field that
    /// asked for it.
    pub fn run(&self, network: Option<&Arc<Network>>, stop: &StopHandle) -> Result<BestMoveResponse, Problem> {
        let evaluator = self.search.evaluator.build(network)?;
        let settings = &self.search.settings;
        let outcome = search(&self.board, &evaluator, settings, stop);
        Ok(BestMoveResponse::new(&self.board, &outcome, &evaluator, settings))
    }
}

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

    /// True when the search has an answer: a direction, or none because the game is over (false when it was
    /// stopped before its first iteration completed).
    pub fn completed(&self) -> bool {
        self.direction.is_some() || self.game_over
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
