//! `POST /best-move` and `advisor2048 best-move`: search one board and explain every direction. The request (a
//! board and the search fields), its work ([`BestMoveRequest::run`]) and its answer ([`BestMoveResponse`]) live
//! here; the route and the command only carry them in and out.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::odds::{self, Odds, OddsSource, PositionOdds, ODDS, ODDS_FIELDS};
use super::read::body_object;
use super::{
    field, read_search, required_board, Problem, Problems, Rows, SearchBounds, SearchRequest, ONE_SEARCH, SEARCH,
};
use crate::engine::{Direction, Tiles};
use crate::eval::odds::Chance;
use crate::eval::{AnyEvaluator, Breakdown, Evaluator, EvaluatorKind, Network};
use crate::search::{search, SearchOutcome, SearchSettings, StopHandle};

/// `POST /best-move` and `advisor2048 best-move`.
#[derive(Clone, Debug, PartialEq)]
pub struct BestMoveRequest {
    pub board: Tiles,
    pub search: SearchRequest,
    /// Add the reach odds of the default play ([`super::odds`]).
    pub odds: bool,
}

impl BestMoveRequest {
    /// Reads and validates a request, reporting every problem.
    pub fn from_json(body: &Value, bounds: &SearchBounds) -> Result<BestMoveRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = vec!["board"];
        known.extend(field::names(&[SEARCH, ONE_SEARCH, ODDS_FIELDS]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        let board = required_board(map, &mut problems);
        let search = read_search(map, bounds, true, &mut problems);
        let odds = ODDS.read_bool(map, &mut problems).unwrap_or(ODDS.absent_bool());
        let (board, search) = problems.finish(board.zip(search))?;
        Ok(BestMoveRequest { board, search, odds })
    }

    /// Searches the board with the request's evaluator (`network` is the `ntuple` evaluator's) until the search
    /// ends or `stop` is tripped, and explains every direction; with `odds`, adds the reach odds of the default
    /// play from `odds` (the request's own search when it searched as the default play does, else the default
    /// play's search beside it). A missing network, or odds the service cannot give, is a problem at the field
    /// that asked for it.
    pub fn run(
        &self,
        network: Option<&Arc<Network>>,
        odds: &OddsSource,
        stop: &StopHandle,
    ) -> Result<BestMoveResponse, Problem> {
        let evaluator = self.search.evaluator.build(network)?;
        let settings = &self.search.settings;
        if self.odds {
            // Before the search: a request for odds the service cannot give costs nothing.
            odds.as_ref()
                .map_err(|why| Problem::new(ODDS.pointer(), why.to_string()))?;
        }
        let outcome = search(&self.board, &evaluator, settings, stop);
        let mut response = BestMoveResponse::new(&self.board, &outcome, &evaluator, settings);
        if self.odds {
            let own = odds::searches_as_default_play(settings, &self.search.evaluator).then_some(&outcome);
            match odds::answer(&self.board, own, network, odds, stop)? {
                Some(found) => response.add_odds(found),
                None => response.odds_incomplete = true,
            }
        }
        Ok(response)
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
    /// With `"odds": true`, for a legal direction: the chance of each tile from 2048 to 65536 after this move, then
    /// the default play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<Vec<Chance>>,
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
    /// The search's node budget (`None`: searched to `target_depth`, or as deep as its time budget allowed).
    pub node_budget: Option<u64>,
    /// The node budget's (or a game's time budget's) weight on boards on the run to 32768.
    pub late_weight: f64,
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
    /// With `"odds": true`: the position's reach odds and the play they predict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<PositionOdds>,
    /// The odds were asked for but their search was stopped before it completed.
    #[serde(skip)]
    pub odds_incomplete: bool,
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
                    odds: None,
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
                node_budget: settings.node_budget,
                late_weight: settings.late_weight,
                nodes: outcome.stats.nodes,
                tt_hits: outcome.stats.tt_hits,
                elapsed_ms: outcome.stats.elapsed.as_secs_f64() * 1e3,
                truncated: outcome.stats.truncated,
            },
            odds: None,
            odds_incomplete: false,
        }
    }

    /// Adds reach odds: the position's, and each legal direction's.
    pub fn add_odds(&mut self, odds: Odds) {
        for (answer, chances) in self.moves.iter_mut().zip(odds.directions) {
            answer.odds = chances;
        }
        self.odds = Some(odds.position);
    }

    /// True when the search has an answer: a direction, or none because the game is over (false when it was
    /// stopped before its first iteration completed, or before the odds asked for were found).
    pub fn completed(&self) -> bool {
        (self.direction.is_some() || self.game_over) && !self.odds_incomplete
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
