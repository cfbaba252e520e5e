//! `POST /analyze` and `advisor2048 analyze`: the review of a played game. Every position of the game is searched
//! with the request's settings, and the move played there is compared with the best one: its loss, its grade, and a
//! summary of the whole game (accuracy, total and mean loss, the worst moves, where the largest tile was made).
//!
//! # The record
//! A game comes in one of three forms, each read into the same list of (board before the move, direction played):
//! - `moves`: `[{"board": B, "direction": D}, ...]`, each board the one the player saw before that move, in any of
//!   the three board formats. This is also the userscript's record (the board it read before each key, the key's
//!   direction).
//! - `start`, `directions`, `spawns`: the first board, every direction, and after each move the tile that appeared
//!   (`{"cell": 0-15 row-major, "value": 2 or 4}`; the last move's spawn may be left out).
//! - `game`: one game of a `/simulate` answer with `trace`, exactly as it comes out (one NDJSON line, or one entry
//!   of `games`), so self-play can be reviewed.
//!
//! With `contiguous` (the default) the record must be one game: each board must be the previous board after the
//! move played and one spawn (a 2 or a 4 on an empty cell). A record picked up midway (`"contiguous": false`) may
//! jump between boards. In either case every direction must change its board. Each problem is reported at its move:
//! `/moves/17/board`, `/directions/4`, `/game/trace/9/board`.
//!
//! # Grades
//! The loss of a move is the best direction's value minus the played direction's value, in the value's own units
//! (for the learned evaluator: expected points still to come). Its relative loss divides that by the larger
//! magnitude of the two values, so it compares positions of any size. The grade reads the relative loss against
//! [`GRADE_LIMITS`]: `best` when the played direction has the best value (ties included, and values within
//! [`TIE_RELATIVE`] of each other are ties; a forced move is always best), else `good` up to 1%, `inaccuracy` up
//! to 5%, `mistake` up to 20%, `blunder` beyond.
//!
//! # Odds
//! With `"odds": true` each graded move also carries the chance that the default play makes the board's next two
//! milestones (the tiles from 2048 to 65536 it does not hold yet) before the move, after the move played and after
//! the best move, and the chance the move played cost; the summary lists the game's largest such losses. The chances
//! are read from the search values the review already has when it searched as the default play does, else from the
//! default play's search of the same board ([`MilestoneOdds`], [`ReviewOdds`]).
//!
//! # Bounds
//! A server reviews at most [`AnalyzeBounds::max_moves`] moves per request (`--max-analyze-moves`), each search's
//! budget at most [`AnalyzeBounds::move_budget`]; the caller adds a wall-clock limit and a stop handle, and a review
//! cut short reports the moves graded so far with `complete: false`.
//!
//! # Where it lives
//! This file holds the request (its fields, bounds and reading); the record's forms and checks are in `record`,
//! reading each form in `reader`, a move's grade in `grade`, its reach odds in `odds`, the running figures and the
//! summary in `summary`, and the review itself, move by move as the streamed answer hands them on, in `review`.

mod grade;
mod odds;
mod reader;
mod record;
mod review;
mod summary;

pub use grade::{DirectionValues, Grade, MoveReview, GRADE_LIMITS, TIE_RELATIVE};
pub use odds::{
    milestone_odds, next_milestones, MilestoneOdds, OddsLoss, ReviewOdds, LARGEST_ODDS_LOSSES, NEXT_MILESTONES,
};
pub use reader::GAME_RECORD_FIELDS;
pub use record::{spawn_problem, RecordForm, RecordedMove, MAX_RECORD_PROBLEMS, MIN_ANALYZE_MOVES};
pub use review::AnalyzeResponse;
pub use summary::{largest_tile, AnalyzeSummary, GradeCounts, LargestTile, WorstMove, WORST_MOVES};

use std::time::Duration;

use serde_json::Value;

use super::read::body_object;
use super::{
    field::{self, Absent, Accepts, Field, FlagDefault},
    read_search, Problems, SearchBounds, SearchRequest, LOCAL_MAX_BUDGET, ONE_SEARCH, SEARCH,
};
use record::read_record;

/// The fields of a record; exactly one form is given (`start` with `directions` and `spawns`).
pub const RECORD_FIELDS: &[&str] = &["moves", "start", "directions", "spawns", "game"];

/// `contiguous`: whether each board of the record follows from the one before (false: a record with gaps).
pub const CONTIGUOUS: Field = Field {
    name: "contiguous",
    flag: "contiguous",
    value_name: "",
    help: "Each board is the previous board after the move played and one spawn (false: a record with gaps)",
    accepts: Accepts::Bool,
    absent: Absent::Bool(true),
    flag_default: FlagDefault::Absent,
};

/// The fields of `/analyze` beside the record and the search ([`SEARCH`], [`ONE_SEARCH`]).
pub const ANALYZE: &[&Field] = &[&CONTIGUOUS];

/// `odds` of a review: add the reach odds of the next milestones to every move (the field of `/best-move` and
/// `/evaluate`, [`super::odds::ODDS`], with a review's meaning).
pub const REVIEW_ODDS: Field = Field {
    help: "Add to each move the chance that the default play makes the board's next two milestones (from 2048 to \
           65536) before the move, after the move played and after the best move, and what the move cost; the \
           summary lists the game's largest odds losses",
    ..super::odds::ODDS
};

/// The odds field of `/analyze` (a flag of `advisor2048 analyze`, not a field of its file).
pub const REVIEW_ODDS_FIELDS: &[&Field] = &[&REVIEW_ODDS];

/// What an `/analyze` request may ask for where it runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalyzeBounds {
    pub search: SearchBounds,
    /// Moves per request at most.
    pub max_moves: u64,
    /// The largest time budget of each move's search.
    pub move_budget: Duration,
}

impl AnalyzeBounds {
    /// The command line's: no limit but the search's.
    pub fn local(network: bool) -> AnalyzeBounds {
        AnalyzeBounds {
            search: SearchBounds::local(network),
            max_moves: u64::MAX,
            move_budget: LOCAL_MAX_BUDGET,
        }
    }
}

/// `POST /analyze` and `advisor2048 analyze`: a game in, its review out.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeRequest {
    /// Every move, in order; at least one, at most the bounds' `max_moves`, each direction legal on its board.
    pub record: Vec<RecordedMove>,
    pub form: RecordForm,
    /// Whether each board follows from the previous one (checked when the request was read).
    pub contiguous: bool,
    /// Each move's search. Bounded by depth unless the request gives a budget (then clamped to the per-move
    /// maximum); its seed is combined with the move's index ([`move_seed`](crate::sim::move_seed)), so a review is
    /// reproducible.
    pub search: SearchRequest,
    /// Add the reach odds of the board's next milestones to every graded move and the largest odds losses to the
    /// summary ([`MilestoneOdds`], [`ReviewOdds`]).
    pub odds: bool,
}

impl AnalyzeRequest {
    /// Reads and validates a request, reporting every problem (of the record, at most [`MAX_RECORD_PROBLEMS`]).
    pub fn from_json(body: &Value, bounds: &AnalyzeBounds) -> Result<AnalyzeRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = RECORD_FIELDS.to_vec();
        known.extend(field::names(&[ANALYZE, SEARCH, ONE_SEARCH, REVIEW_ODDS_FIELDS]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        let contiguous = CONTIGUOUS
            .read_bool(map, &mut problems)
            .unwrap_or(CONTIGUOUS.absent_bool());
        let odds = REVIEW_ODDS
            .read_bool(map, &mut problems)
            .unwrap_or(REVIEW_ODDS.absent_bool());
        let record = read_record(map, bounds.max_moves, contiguous, &mut problems);
        let search_bounds = SearchBounds {
            max_budget: bounds.search.max_budget.min(bounds.move_budget),
            budget_by_default: false,
            ..bounds.search
        };
        let search = read_search(map, &search_bounds, true, &mut problems);
        let ((record, form), search) = problems.finish(record.zip(search))?;
        Ok(AnalyzeRequest {
            record,
            form,
            contiguous,
            search,
            odds,
        })
    }
}
