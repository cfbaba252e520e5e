//! `POST /evaluate` and `advisor2048 evaluate`: the heuristic breakdown of a board and of the board after each legal
//! move. The request (a board, an evaluator and weight overrides), its work ([`EvaluateRequest::run`]) and its
//! answer ([`EvaluateResponse`]) live here; the route and the command only carry them in and out. With `"odds":
//! true` the answer adds the reach odds of the default play ([`super::odds`]), which cost the default play's search.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::field::{self, Absent, Field};
use super::odds::{self, Odds, OddsSource, PositionOdds, ODDS, ODDS_FIELDS};
use super::read::body_object;
use super::{
    check_network, read_weights, required_board, EvaluatorRequest, Problem, Problems, Rows, EVALUATOR, WEIGHTS,
};
use crate::engine::{Direction, Tiles};
use crate::eval::odds::Chance;
use crate::eval::{AnyEvaluator, Breakdown, Component, Evaluator, EvaluatorKind, Network};
use crate::names::quoted_or_list;
use crate::search::StopHandle;

/// `evaluator` when not given (the explainable heuristic of the seed document).
pub const DEFAULT_EVALUATE_EVALUATOR: EvaluatorKind = EvaluatorKind::Classic;

/// `evaluator` of `/evaluate`: the search's field, without a profile to take its default from.
pub const EVALUATE_EVALUATOR: Field = Field {
    help: "Evaluator (ntuple needs a network)",
    absent: Absent::Name(DEFAULT_EVALUATE_EVALUATOR.as_str()),
    ..EVALUATOR
};

/// The fields of `/evaluate` beside its `board`.
pub const EVALUATE: &[&Field] = &[&EVALUATE_EVALUATOR, &WEIGHTS];

/// `POST /evaluate` and `advisor2048 evaluate`.
#[derive(Clone, Debug, PartialEq)]
pub struct EvaluateRequest {
    pub board: Tiles,
    pub evaluator: EvaluatorRequest,
    /// Add the reach odds of the default play.
    pub odds: bool,
}

impl EvaluateRequest {
    /// Reads and validates a request, reporting every problem; `network` says whether `ntuple` can be asked for.
    pub fn from_json(body: &Value, network: bool) -> Result<EvaluateRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = vec!["board"];
        known.extend(field::names(&[EVALUATE, ODDS_FIELDS]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        let board = required_board(map, &mut problems);
        let kind = match map.get(EVALUATE_EVALUATOR.name) {
            None => Some(DEFAULT_EVALUATE_EVALUATOR),
            Some(v) => match v.as_str().map(str::parse::<EvaluatorKind>) {
                Some(Ok(kind)) => Some(kind),
                Some(Err(e)) => {
                    problems.push(EVALUATE_EVALUATOR.pointer(), e.to_string());
                    None
                }
                None => {
                    problems.push(
                        EVALUATE_EVALUATOR.pointer(),
                        format!("evaluator must be {}, found {v}", quoted_or_list(EvaluatorKind::NAMES)),
                    );
                    None
                }
            },
        };
        if let Some(k) = kind {
            check_network(map, k, network, &mut problems);
        }
        let weights = kind.and_then(|k| read_weights(map, k, &mut problems));
        let odds = ODDS.read_bool(map, &mut problems).unwrap_or(ODDS.absent_bool());
        let (board, (kind, weights)) = problems.finish(board.zip(kind.zip(weights)))?;
        Ok(EvaluateRequest {
            board,
            evaluator: EvaluatorRequest {
                kind,
                weights,
                named: map.contains_key(EVALUATE_EVALUATOR.name),
            },
            odds,
        })
    }

    /// The breakdowns, by the request's evaluator (`network` is the `ntuple` evaluator's; custom weights build
    /// tables, milliseconds of CPU); with `odds`, the reach odds from `odds` and the default play's search, which
    /// `stop` can cut short (the answer is then `None`). A missing network, or odds the service cannot give, is a
    /// problem at the field that asked for it.
    pub fn run(
        &self,
        network: Option<&Arc<Network>>,
        odds: &OddsSource,
        stop: &StopHandle,
    ) -> Result<Option<EvaluateResponse>, Problem> {
        let evaluator = self.evaluator.build(network)?;
        let mut response = EvaluateResponse::new(&self.board, &evaluator);
        if self.odds {
            match odds::answer(&self.board, None, network, odds, stop)? {
                Some(found) => response.add_odds(found),
                None => return Ok(None),
            }
        }
        Ok(Some(response))
    }
}

/// A legal move in an evaluate answer.
#[derive(Serialize, Clone, Debug)]
pub struct AfterMove {
    pub direction: &'static str,
    pub board: Rows,
    pub reward: u64,
    pub heuristic: Breakdown,
    /// With `"odds": true`: the chance of each tile from 2048 to 65536 after this move, then the default play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<Vec<Chance>>,
}

/// The evaluate answer: the board's own breakdown (flattened) and each legal move's.
#[derive(Serialize, Clone, Debug)]
pub struct EvaluateResponse {
    pub evaluator: &'static str,
    pub board: Rows,
    pub total: f64,
    pub components: Vec<Component>,
    pub after_moves: Vec<AfterMove>,
    /// With `"odds": true`: the position's reach odds and the play they predict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odds: Option<PositionOdds>,
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
                    odds: None,
                })
            })
            .collect();
        EvaluateResponse {
            evaluator: evaluator.name(),
            board: tiles.to_rows(),
            total: own.total,
            components: own.components,
            after_moves,
            odds: None,
        }
    }

    /// Adds reach odds: the position's, and each legal move's.
    pub fn add_odds(&mut self, odds: Odds) {
        let Odds { position, directions } = odds;
        for after in &mut self.after_moves {
            let i = Direction::ALL.iter().position(|d| d.as_str() == after.direction);
            after.odds = i.and_then(|i| directions[i].clone());
        }
        self.odds = Some(position);
    }
}
