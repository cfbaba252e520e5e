//! The review itself: every position of the record searched in turn and its move graded, each graded move handed
//! on at once (the streamed answer writes it as a line) and, for the document answer, kept with the summary.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::odds::milestone_odds;
use super::summary::Tally;
use super::{AnalyzeRequest, AnalyzeSummary, MoveReview};
use crate::engine::Tiles;
use crate::eval::{AnyEvaluator, Network};
use crate::request::odds::{searches_as_default_play, OddsGiver, OddsSource};
use crate::request::Problem;
use crate::search::{search, Depth, RunSettings, SearchOutcome, SearchSettings, StopHandle};
use crate::sim::move_seed;

/// The document answer: every graded move, then the summary. (Streamed, the moves come one per line and then
/// `{"summary": ...}`.)
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct AnalyzeResponse {
    pub moves: Vec<MoveReview>,
    pub summary: AnalyzeSummary,
}

impl AnalyzeRequest {
    /// Reviews the game with the request's evaluator (`network` is the `ntuple` evaluator's), handing each graded
    /// move to `on_move` as soon as it is graded, until every move is graded, `stop` trips or `deadline` passes
    /// (the search under way is cut there); with `odds`, each move carries its reach odds from `odds`. Returns the
    /// summary; a missing network, or odds the service cannot give, is a problem at the field that asked for it,
    /// before any move is searched.
    pub fn review(
        &self,
        network: Option<&Arc<Network>>,
        odds: &OddsSource,
        stop: &StopHandle,
        deadline: Option<Instant>,
        on_move: impl FnMut(&MoveReview),
    ) -> Result<AnalyzeSummary, Problem> {
        let evaluator = self.search.evaluator.build(network)?;
        let giver = if self.odds {
            Some(OddsGiver::new(network, odds)?)
        } else {
            None
        };
        Ok(self.review_with(&evaluator, giver, stop, deadline, on_move))
    }

    /// [`AnalyzeRequest::review`], keeping every graded move: the document answer.
    pub fn run(
        &self,
        network: Option<&Arc<Network>>,
        odds: &OddsSource,
        stop: &StopHandle,
        deadline: Option<Instant>,
        mut on_move: impl FnMut(&MoveReview),
    ) -> Result<AnalyzeResponse, Problem> {
        let mut moves = Vec::with_capacity(self.record.len());
        let summary = self.review(network, odds, stop, deadline, |m| {
            on_move(m);
            moves.push(m.clone());
        })?;
        Ok(AnalyzeResponse { moves, summary })
    }

    /// [`AnalyzeRequest::review`] with an evaluator already built (from [`AnalyzeRequest::search`]; `advisor2048
    /// bench` reviews with the evaluator it played with) and, for the odds, their giver (`None`: no odds). A move
    /// whose odds search was stopped is not graded: the review ends there, like one whose own search was.
    pub fn review_with(
        &self,
        evaluator: &AnyEvaluator,
        odds: Option<OddsGiver<'_>>,
        stop: &StopHandle,
        deadline: Option<Instant>,
        mut on_move: impl FnMut(&MoveReview),
    ) -> AnalyzeSummary {
        let started = Instant::now();
        let mut settings = self.search.settings.clone();
        settings.run.stop_at = deadline;
        let base_seed = settings.seed;
        // The review's own search lends its values to the odds when it is the default play's search.
        let own_is_default_play = searches_as_default_play(&settings, &self.search.evaluator);
        let mut tally = Tally::default();
        for (i, m) in self.record.iter().enumerate() {
            if stop.is_stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            settings.seed = move_seed(base_seed, i as u64);
            let Some(outcome) = graded_search(&m.board, evaluator, &settings, stop, deadline) else {
                break;
            };
            let mut review = MoveReview::new(i as u64, m, &outcome);
            if let Some(giver) = &odds {
                let own = own_is_default_play.then_some(&outcome);
                let Some(found) = giver.odds(&m.board, own, stop) else {
                    break;
                };
                let best = outcome.best.unwrap_or(m.direction);
                review.odds = Some(milestone_odds(&m.board, &found, m.direction, best, review.grade));
            }
            tally.nodes += outcome.stats.nodes;
            tally.add(&review);
            on_move(&review);
        }
        let odds_play = odds.map(|giver| giver.model.fitted_for.clone());
        tally.summary(&self.record, evaluator, &settings, started.elapsed(), odds_play)
    }
}

/// The search of one position: the settings' search, or when it completed no iteration although time is left (a
/// budget too small for one ply), a one-ply search without a budget. `None` when stopped or out of time.
fn graded_search(
    board: &Tiles,
    evaluator: &AnyEvaluator,
    settings: &SearchSettings,
    stop: &StopHandle,
    deadline: Option<Instant>,
) -> Option<SearchOutcome> {
    let out_of_time = || stop.is_stopped() || deadline.is_some_and(|d| Instant::now() >= d);
    let outcome = search(board, evaluator, settings, stop);
    if outcome.best.is_some() {
        return Some(outcome);
    }
    if out_of_time() {
        return None;
    }
    let one_ply = SearchSettings {
        depth: Depth::Plies(1),
        run: RunSettings {
            time_budget: None,
            node_limit: None,
            ..settings.run.clone()
        },
        ..settings.clone()
    };
    let outcome = search(board, evaluator, &one_ply, stop);
    outcome.best.is_some().then_some(outcome)
}
