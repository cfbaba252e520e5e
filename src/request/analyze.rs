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
//! [`TIE_RELATIVE`] of each other are ties; a forced move is always best), else `good` up to 1%, `inaccuracy` up to 5%, `mistake` up to 20%, `blunder` beyond.
//!
//! # Bounds
//! A server reviews at most [`AnalyzeBounds::max_moves`] moves per request (`--max-analyze-moves`), each search's
//! budget at most [`AnalyzeBounds::move_budget`]; the caller adds a wall-clock limit and a stop handle, and a review
//! cut short reports the moves graded so far with `complete: false`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::read::{body_object, kind_of, pointer, read_board};
use super::{
    field::{self, Absent, Accepts, Field, FlagDefault},
    read_search, Problem, Problems, Rows, SearchBounds, SearchRequest, LOCAL_MAX_BUDGET, ONE_SEARCH, SEARCH,
};
use crate::engine::{Direction, Tiles};
use crate::eval::{AnyEvaluator, Evaluator, Network};
use crate::names::named_enum;
use crate::search::{search, Depth, RunSettings, SearchOutcome, SearchSettings, StopHandle};
use crate::sim::move_seed;

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

/// The fields of a `/simulate` game record that `game` accepts (all but `trace`, `start_board` and `final_board`
/// are read past: they describe the game, the trace is the game).
pub const GAME_RECORD_FIELDS: &[&str] = &[
    "index",
    "seed",
    "score",
    "max_tile",
    "moves",
    "reached",
    "start_board",
    "final_board",
    "finished",
    "game_over",
    "trace",
    "elapsed_ms",
];

/// The least number of moves a record holds.
pub const MIN_ANALYZE_MOVES: u64 = 1;

/// The upper relative loss of each grade below `best`, in order: `good` up to 1%, `inaccuracy` up to 5%, `mistake`
/// up to 20%; a larger loss is a `blunder`.
pub const GRADE_LIMITS: [(Grade, f64); 3] = [(Grade::Good, 0.01), (Grade::Inaccuracy, 0.05), (Grade::Mistake, 0.20)];

/// The worst moves a summary lists.
pub const WORST_MOVES: usize = 5;
/// Values whose relative difference is below this are a tie (loss 0, grade `best`): mirror images of one board are
/// worth the same, but their values can differ in the last bits (the transposition table keeps f32, and sums are
/// taken in another order), e.g. 135545.65882 against 135545.65922 on a board with two 2s.
pub const TIE_RELATIVE: f64 = 1e-6;

/// Problems read from a record before the rest is skipped (a record of 20,000 bad boards answers with a few).
pub const MAX_RECORD_PROBLEMS: usize = 50;

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

/// Which form the record came in: where each move's board and direction are in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordForm {
    /// `moves[i].board`, `moves[i].direction`.
    Moves,
    /// `start`, `directions[i]`, `spawns[i]`.
    Start,
    /// `game.trace[i].board`, `game.trace[i].direction`.
    Game,
}

impl RecordForm {
    /// The JSON pointer of move `i`'s board (for the start form, the spawn that made it).
    pub fn board_pointer(self, i: usize) -> String {
        match self {
            RecordForm::Moves => format!("/moves/{i}/board"),
            RecordForm::Start if i == 0 => "/start".to_owned(),
            RecordForm::Start => format!("/spawns/{}", i - 1),
            RecordForm::Game => format!("/game/trace/{i}/board"),
        }
    }

    /// The JSON pointer of move `i`'s direction.
    pub fn direction_pointer(self, i: usize) -> String {
        match self {
            RecordForm::Moves => format!("/moves/{i}/direction"),
            RecordForm::Start => format!("/directions/{i}"),
            RecordForm::Game => format!("/game/trace/{i}/direction"),
        }
    }
}

/// One move of a record: the board the player saw and the direction played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub board: Tiles,
    pub direction: Direction,
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
    /// maximum); its seed is combined with the move's index ([`move_seed`]), so a review is reproducible.
    pub search: SearchRequest,
}

impl AnalyzeRequest {
    /// Reads and validates a request, reporting every problem (of the record, at most [`MAX_RECORD_PROBLEMS`]).
    pub fn from_json(body: &Value, bounds: &AnalyzeBounds) -> Result<AnalyzeRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = RECORD_FIELDS.to_vec();
        known.extend(field::names(&[ANALYZE, SEARCH, ONE_SEARCH]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        let contiguous = CONTIGUOUS
            .read_bool(map, &mut problems)
            .unwrap_or(CONTIGUOUS.absent_bool());
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
        })
    }

    /// Reviews the game with the request's evaluator (`network` is the `ntuple` evaluator's), handing each graded
    /// move to `on_move` as soon as it is graded, until every move is graded, `stop` trips or `deadline` passes
    /// (the search under way is cut there). Returns the summary; a missing network is a problem at the field that
    /// asked for it, before any move is searched.
    pub fn review(
        &self,
        network: Option<&Arc<Network>>,
        stop: &StopHandle,
        deadline: Option<Instant>,
        on_move: impl FnMut(&MoveReview),
    ) -> Result<AnalyzeSummary, Problem> {
        let evaluator = self.search.evaluator.build(network)?;
        Ok(self.review_with(&evaluator, stop, deadline, on_move))
    }

    /// [`AnalyzeRequest::review`], keeping every graded move: the document answer.
    pub fn run(
        &self,
        network: Option<&Arc<Network>>,
        stop: &StopHandle,
        deadline: Option<Instant>,
        mut on_move: impl FnMut(&MoveReview),
    ) -> Result<AnalyzeResponse, Problem> {
        let mut moves = Vec::with_capacity(self.record.len());
        let summary = self.review(network, stop, deadline, |m| {
            on_move(m);
            moves.push(m.clone());
        })?;
        Ok(AnalyzeResponse { moves, summary })
    }

    /// [`AnalyzeRequest::review`] with an evaluator already built (from [`AnalyzeRequest::search`]; `advisor2048
    /// bench` reviews with the evaluator it played with).
    pub fn review_with(
        &self,
        evaluator: &AnyEvaluator,
        stop: &StopHandle,
        deadline: Option<Instant>,
        mut on_move: impl FnMut(&MoveReview),
    ) -> AnalyzeSummary {
        let started = Instant::now();
        let mut settings = self.search.settings.clone();
        settings.run.stop_at = deadline;
        let base_seed = settings.seed;
        let mut tally = Tally::default();
        for (i, m) in self.record.iter().enumerate() {
            if stop.is_stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            settings.seed = move_seed(base_seed, i as u64);
            let Some(outcome) = graded_search(&m.board, evaluator, &settings, stop, deadline) else {
                break;
            };
            let review = MoveReview::new(i as u64, m, &outcome);
            tally.nodes += outcome.stats.nodes;
            tally.add(&review);
            on_move(&review);
        }
        tally.summary(self, evaluator, &settings, started.elapsed())
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

/// The value of each direction of a position; null when the direction is illegal.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct DirectionValues {
    pub up: Option<f64>,
    pub down: Option<f64>,
    pub left: Option<f64>,
    pub right: Option<f64>,
}

impl DirectionValues {
    fn new(values: &[Option<f64>; 4]) -> DirectionValues {
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
        }
    }
}

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
    /// Moves tried at move nodes, over every search of the review.
    pub nodes: u64,
    pub elapsed_ms: f64,
}

/// The document answer: every graded move, then the summary. (Streamed, the moves come one per line and then
/// `{"summary": ...}`.)
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct AnalyzeResponse {
    pub moves: Vec<MoveReview>,
    pub summary: AnalyzeSummary,
}

/// The running figures of a review.
#[derive(Default)]
struct Tally {
    graded: u64,
    forced: u64,
    grades: GradeCounts,
    total_loss: f64,
    capped_relative: f64,
    worst: Vec<WorstMove>,
    nodes: u64,
}

impl Tally {
    fn add(&mut self, m: &MoveReview) {
        self.graded += 1;
        self.forced += u64::from(m.forced);
        self.grades.add(m.grade);
        self.total_loss += m.loss;
        self.capped_relative += m.relative_loss.min(1.0);
        if m.loss > 0.0 && (self.worst.len() < WORST_MOVES || self.worst.last().is_some_and(|w| m.loss > w.loss)) {
            // Largest loss first; an equal loss keeps the earlier move ahead.
            let at = self.worst.partition_point(|w| w.loss >= m.loss);
            self.worst.insert(
                at,
                WorstMove {
                    index: m.index,
                    board: m.board,
                    played: m.played,
                    best: m.best,
                    loss: m.loss,
                    relative_loss: m.relative_loss,
                    grade: m.grade,
                },
            );
            self.worst.truncate(WORST_MOVES);
        }
    }

    fn summary(
        self,
        request: &AnalyzeRequest,
        evaluator: &AnyEvaluator,
        settings: &SearchSettings,
        elapsed: Duration,
    ) -> AnalyzeSummary {
        let graded = self.graded as f64;
        let per_move = |x: f64| (self.graded > 0).then(|| x / graded);
        let first = request.record.first().map(|m| m.board).unwrap_or_default();
        AnalyzeSummary {
            moves: request.record.len() as u64,
            graded: self.graded,
            complete: self.graded == request.record.len() as u64,
            forced: self.forced,
            grades: self.grades,
            accuracy: per_move(self.grades.best as f64),
            weighted_accuracy: per_move(self.capped_relative).map(|r| 1.0 - r),
            total_loss: self.total_loss,
            mean_loss: per_move(self.total_loss),
            worst: self.worst,
            largest_tile: largest_tile(&request.record),
            profile: settings.profile.as_str(),
            evaluator: evaluator.name(),
            target_depth: settings.depth.plies_for(&first),
            nodes: self.nodes,
            elapsed_ms: elapsed.as_secs_f64() * 1e3,
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

/// Why `next` is not `after` (a board right after a move) plus one spawn, or `None` when it is.
pub fn spawn_problem(after: &Tiles, next: &Tiles) -> Option<String> {
    let (a, n) = (after.exponents(), next.exponents());
    let changed: Vec<usize> = (0..16).filter(|&c| a[c] != n[c]).collect();
    let value = |e: u8| if e == 0 { 0 } else { 1u32 << e };
    match changed.as_slice() {
        [] => Some("no tile appeared after the move (every move is followed by one spawn)".to_owned()),
        [c] if a[*c] == 0 && (n[*c] == 1 || n[*c] == 2) => None,
        [c] => Some(format!(
            "row {}, column {} holds {} where the move left {} (a spawn is a 2 or a 4 on an empty cell)",
            c / 4,
            c % 4,
            value(n[*c]),
            value(a[*c])
        )),
        many => Some(format!(
            "{} cells differ from the board the move left, row {}, column {} first (a move is followed by one \
             spawn; a record with gaps says \"contiguous\": false)",
            many.len(),
            many[0] / 4,
            many[0] % 4
        )),
    }
}

/// Reads the record in whichever form it came, checks its length, each direction's legality and (when
/// `contiguous`) that each board follows from the previous one.
fn read_record(
    map: &Map<String, Value>,
    max_moves: u64,
    contiguous: bool,
    problems: &mut Problems,
) -> Option<(Vec<RecordedMove>, RecordForm)> {
    let given: Vec<&str> = RECORD_FIELDS
        .iter()
        .copied()
        .filter(|f| map.contains_key(*f) && *f != "directions" && *f != "spawns")
        .collect();
    let form = match given.as_slice() {
        [one] => match *one {
            "moves" => RecordForm::Moves,
            "start" => RecordForm::Start,
            _ => RecordForm::Game,
        },
        [] if map.contains_key("directions") || map.contains_key("spawns") => {
            problems.push("/start", "start is required with directions and spawns");
            return None;
        }
        [] => {
            problems.push(
                "",
                "a game is required: moves, start with directions and spawns, or a /simulate game with trace",
            );
            return None;
        }
        [_, second, ..] => {
            problems.push(
                pointer(&[second]),
                format!("give one form of the game, found {}", given.join(" and ")),
            );
            return None;
        }
    };
    if form != RecordForm::Start {
        for extra in ["directions", "spawns"] {
            if map.contains_key(extra) {
                problems.push(
                    pointer(&[extra]),
                    format!("{extra} goes with start, not with {}", given[0]),
                );
            }
        }
    }
    let before = problems.len();
    let mut reader = RecordReader {
        problems,
        before,
        max_moves,
    };
    let (record, last) = match form {
        RecordForm::Moves => (reader.moves(map.get("moves")?)?, None),
        RecordForm::Start => reader.start(map)?,
        RecordForm::Game => reader.game(map.get("game")?, contiguous)?,
    };
    check_record(&record, form, contiguous, reader.problems);
    if let (Some(final_board), Some(m)) = (last, record.last()) {
        if contiguous {
            if let Some((after, _)) = m.board.play(m.direction) {
                if let Some(why) = spawn_problem(&after, &final_board) {
                    reader.problems.push(
                        "/game/final_board",
                        format!("the final board does not follow the trace's last move: {why}"),
                    );
                }
            }
        }
    }
    (reader.problems.len() == before).then_some((record, form))
}

/// Every direction legal on its board; with `contiguous`, every board the previous one after its move and a spawn.
fn check_record(record: &[RecordedMove], form: RecordForm, contiguous: bool, problems: &mut Problems) {
    let start = problems.len();
    let mut previous: Option<Tiles> = None;
    for (i, m) in record.iter().enumerate() {
        if problems.len() - start >= MAX_RECORD_PROBLEMS {
            break;
        }
        if let (true, Some(after)) = (contiguous, previous) {
            if let Some(why) = spawn_problem(&after, &m.board) {
                let what = match form {
                    RecordForm::Start => "the spawn does not fit the board the move left",
                    _ => "the board does not follow the previous move",
                };
                problems.push(form.board_pointer(i), format!("{what}: {why}"));
            }
        }
        previous = m.board.play(m.direction).map(|(after, _)| after);
        if previous.is_none() {
            problems.push(
                form.direction_pointer(i),
                format!("{} does nothing on this board (every move must change it)", m.direction),
            );
        }
    }
}

/// Reads the moves of a record, stopping after [`MAX_RECORD_PROBLEMS`] problems.
struct RecordReader<'a> {
    problems: &'a mut Problems,
    before: usize,
    max_moves: u64,
}

impl RecordReader<'_> {
    fn full(&self) -> bool {
        self.problems.len() - self.before >= MAX_RECORD_PROBLEMS
    }

    /// The array at `at` with its length checked against the bounds (before any element is read).
    fn list<'v>(&mut self, value: &'v Value, at: &str, what: &str) -> Option<&'v [Value]> {
        let Some(items) = value.as_array() else {
            self.problems
                .push(at, format!("{what} must be an array, found {}", kind_of(value)));
            return None;
        };
        match items.len() as u64 {
            0 => {
                self.problems
                    .push(at, format!("{what} is empty: a game to review has at least one move"));
                None
            }
            n if n > self.max_moves => {
                self.problems.push(
                    at,
                    format!(
                        "{n} moves is over the server's limit of {} moves per request (--max-analyze-moves)",
                        self.max_moves
                    ),
                );
                None
            }
            _ => Some(items),
        }
    }

    fn direction(&mut self, value: Option<&Value>, at: &str) -> Option<Direction> {
        match value.map(|v| (v, v.as_str().map(str::parse::<Direction>))) {
            None => self.problems.push(at, "direction is required"),
            Some((_, Some(Ok(d)))) => return Some(d),
            Some((_, Some(Err(e)))) => self.problems.push(at, e.to_string()),
            Some((v, None)) => self.problems.push(
                at,
                format!("a direction is \"up\", \"down\", \"left\" or \"right\", found {v}"),
            ),
        }
        None
    }

    /// One `{board, direction}` object (extra `known` fields allowed).
    fn step(&mut self, value: &Value, at: &str, known: &[&str]) -> Option<RecordedMove> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                at,
                format!(
                    "a move is an object {{\"board\": ..., \"direction\": ...}}, found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if !known.contains(&key.as_str()) {
                self.problems.push(
                    format!("{at}{}", pointer(&[key])),
                    format!("unknown field {key:?} (known fields: {})", known.join(", ")),
                );
            }
        }
        let board = match obj.get("board") {
            Some(b) => read_board(b, &format!("{at}/board"), self.problems),
            None => {
                self.problems.push(format!("{at}/board"), "board is required");
                None
            }
        };
        let direction = self.direction(obj.get("direction"), &format!("{at}/direction"));
        Some(RecordedMove {
            board: board?,
            direction: direction?,
        })
    }

    fn steps(&mut self, items: &[Value], at: &str, known: &[&str]) -> Option<Vec<RecordedMove>> {
        let before = self.problems.len();
        let mut record = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if self.full() {
                break;
            }
            if let Some(m) = self.step(item, &format!("{at}/{i}"), known) {
                record.push(m);
            }
        }
        (self.problems.len() == before).then_some(record)
    }

    fn moves(&mut self, value: &Value) -> Option<Vec<RecordedMove>> {
        let items = self.list(value, "/moves", "moves")?;
        self.steps(items, "/moves", &["board", "direction"])
    }

    /// `start`, `directions`, `spawns`: the boards rebuilt move by move.
    fn start(&mut self, map: &Map<String, Value>) -> Option<(Vec<RecordedMove>, Option<Tiles>)> {
        let before = self.problems.len();
        let start = map.get("start").and_then(|v| read_board(v, "/start", self.problems));
        let Some(directions) = map.get("directions") else {
            self.problems.push("/directions", "directions is required with start");
            return None;
        };
        let directions = self.list(directions, "/directions", "directions")?;
        let n = directions.len();
        let spawns = match map.get("spawns") {
            None => {
                self.problems.push("/spawns", "spawns is required with start");
                return None;
            }
            Some(Value::Array(s)) if s.len() == n || s.len() + 1 == n => s,
            Some(Value::Array(s)) => {
                self.problems.push(
                    "/spawns",
                    format!(
                        "{n} directions need {} or {n} spawns (one after each move), found {}",
                        n - 1,
                        s.len()
                    ),
                );
                return None;
            }
            Some(other) => {
                self.problems
                    .push("/spawns", format!("spawns must be an array, found {}", kind_of(other)));
                return None;
            }
        };
        let mut parsed = Vec::with_capacity(n);
        for (i, d) in directions.iter().enumerate() {
            if self.full() {
                break;
            }
            parsed.push(self.direction(Some(d), &format!("/directions/{i}")));
        }
        let mut cells = Vec::with_capacity(spawns.len());
        for (i, s) in spawns.iter().enumerate() {
            if self.full() {
                break;
            }
            cells.push(self.spawn(s, &format!("/spawns/{i}")));
        }
        if self.problems.len() > before {
            return None;
        }
        let mut board = start?;
        let mut record = Vec::with_capacity(n);
        for (i, d) in parsed.into_iter().enumerate() {
            let direction = d?;
            record.push(RecordedMove { board, direction });
            let Some((after, _)) = board.play(direction) else {
                // Reported with the other moves' problems by `check_record`.
                return Some((record, None));
            };
            let Some(&Some((cell, exponent))) = cells.get(i) else {
                break;
            };
            if after.exponents()[cell] != 0 {
                self.problems.push(
                    format!("/spawns/{i}"),
                    format!(
                        "row {}, column {} is not empty after move {i} ({direction}): a spawn goes to an empty cell",
                        cell / 4,
                        cell % 4
                    ),
                );
                return None;
            }
            board = after.with_exponent_at(cell, exponent);
        }
        Some((record, None))
    }

    /// `{"cell": 0-15, "value": 2 or 4}` as (cell, exponent).
    fn spawn(&mut self, value: &Value, at: &str) -> Option<(usize, u8)> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                at,
                format!(
                    "a spawn is an object {{\"cell\": 0-15, \"value\": 2 or 4}}, found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if key != "cell" && key != "value" {
                self.problems.push(
                    format!("{at}{}", pointer(&[key])),
                    format!("unknown field {key:?} (known fields: cell, value)"),
                );
            }
        }
        let cell = match obj.get("cell").map(|c| (c, c.as_u64())) {
            Some((_, Some(c))) if c < 16 => Some(c as usize),
            Some((c, _)) => {
                self.problems.push(
                    format!("{at}/cell"),
                    format!("cell must be a whole number from 0 to 15 (row-major, top-left 0), found {c}"),
                );
                None
            }
            None => {
                self.problems.push(format!("{at}/cell"), "cell is required");
                None
            }
        };
        let exponent = match obj.get("value").map(|v| (v, v.as_u64())) {
            Some((_, Some(2))) => Some(1),
            Some((_, Some(4))) => Some(2),
            Some((v, _)) => {
                self.problems
                    .push(format!("{at}/value"), format!("a spawned tile is 2 or 4, found {v}"));
                None
            }
            None => {
                self.problems.push(format!("{at}/value"), "value is required");
                None
            }
        };
        cell.zip(exponent)
    }

    /// A `/simulate` game record with `trace`: the trace's moves, checked against `start_board`; and its
    /// `final_board`, for the caller to check against the last move.
    fn game(&mut self, value: &Value, contiguous: bool) -> Option<(Vec<RecordedMove>, Option<Tiles>)> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                "/game",
                format!(
                    "game must be one game of a /simulate answer (with trace), found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if !GAME_RECORD_FIELDS.contains(&key.as_str()) {
                self.problems.push(
                    format!("/game{}", pointer(&[key])),
                    format!(
                        "unknown field {key:?} (a /simulate game record's fields: {})",
                        GAME_RECORD_FIELDS.join(", ")
                    ),
                );
            }
        }
        let start = obj
            .get("start_board")
            .and_then(|b| read_board(b, "/game/start_board", self.problems));
        let last = obj
            .get("final_board")
            .and_then(|b| read_board(b, "/game/final_board", self.problems));
        let Some(trace) = obj.get("trace") else {
            self.problems.push(
                "/game/trace",
                "the game has no trace: ask /simulate for \"trace\": true to review its games",
            );
            return None;
        };
        let items = self.list(trace, "/game/trace", "trace")?;
        let record = self.steps(items, "/game/trace", &["board", "direction", "value", "reward"])?;
        if let (true, Some(start), Some(first)) = (contiguous, start, record.first()) {
            if start != first.board {
                self.problems.push(
                    "/game/trace/0/board",
                    "the trace's first board is not the game's start_board",
                );
            }
        }
        Some((record, last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiles(rows: [[i64; 4]; 4]) -> Tiles {
        Tiles::from_rows(&rows).expect("a board")
    }

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

    #[test]
    fn a_spawn_is_one_2_or_4_on_an_empty_cell() {
        let after = tiles([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        let spawned = tiles([[2, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert_eq!(spawn_problem(&after, &spawned), None);
        assert!(spawn_problem(&after, &after).is_some_and(|m| m.contains("no tile appeared")));
        let eight = tiles([[2, 0, 0, 8], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &eight).is_some_and(|m| m.contains("row 0, column 3 holds 8")));
        let two_spawns = tiles([[2, 2, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &two_spawns).is_some_and(|m| m.starts_with("2 cells differ")));
        let vanished = tiles([[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &vanished).is_some());
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
            });
        }
        let worst: Vec<u64> = tally.worst.iter().map(|w| w.index).collect();
        assert_eq!(worst, [5, 2, 0, 3, 7]);
    }
}
