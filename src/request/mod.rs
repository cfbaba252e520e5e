//! One request model for every front-end: the best-move, evaluate, simulate and analyze requests that the HTTP API and
//! the command line both parse into, with one validation that collects every problem, and the one definition of
//! each bound and default. Each request kind has a home of its own ([`best_move`], [`evaluate`], [`simulate`],
//! [`analyze`]) holding its fields, bounds and defaults, its `from_json`, its work (`run`, given what the server or
//! the command line provides: the network, a stop handle, progress) and its answer; this module holds what they
//! share: the search fields, the evaluator request, problems and the bounds of a search.
//!
//! Every field is declared once ([`field::Field`]: JSON name, flag, help, range, default), in the home of the kind
//! that owns it; the search fields that several kinds share are declared here ([`SEARCH`], [`ONE_SEARCH`]). The
//! readers take their ranges from the declarations, the command line its flags, and the spec test its expectations.
//!
//! A request is read from JSON (the HTTP body; the command line turns its flags into the same JSON first), field by
//! field ([`read`]), so that every problem comes back at once, each at its JSON pointer ([`Problem`]). The HTTP API
//! answers them as a 422; the command line names the flag instead of the pointer. The bounds that depend on where
//! the search runs (the server's configured maxima, or none on the command line) come in as [`SearchBounds`].
//!
//! May import `engine`, `eval`, `search` and `sim`; nothing here knows HTTP or the command line.

pub mod analyze;
pub mod best_move;
pub mod evaluate;
pub mod field;
pub mod odds;
pub mod read;
pub mod simulate;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

pub use analyze::{AnalyzeBounds, AnalyzeRequest, AnalyzeResponse, AnalyzeSummary, Grade, MoveReview};
pub use best_move::{BestMoveRequest, BestMoveResponse, MoveAnswer, SearchInfo};
pub use evaluate::{AfterMove, EvaluateRequest, EvaluateResponse, DEFAULT_EVALUATE_EVALUATOR, EVALUATE};
pub use simulate::{RunLimits, SimulateBounds, SimulateRequest, SIMULATE};

use crate::engine::Tiles;
use crate::eval::{AnyEvaluator, EvaluatorKind, Network, WeightError};
use crate::search::{Depth, Profile, SearchSettings, Terminal, DEFAULT_TT_BITS, MAX_DEPTH};
use field::{Absent, Accepts, Field, FlagDefault};
use read::{body_object, kind_of, pointer, read_board, weight_value, whole_number};

/// The largest magnitude of a weight (and of `reward_weight`): keeps every value and contribution finite.
pub const MAX_WEIGHT: f64 = 1e9;
/// The largest time budget of a search run on the command line (a day): a larger one is clamped to it.
pub const LOCAL_MAX_BUDGET: Duration = Duration::from_secs(24 * 60 * 60);

/// Board rows of tile values, top row first (as every answer shows a board).
pub type Rows = [[u32; 4]; 4];

/// `profile`.
pub const PROFILE: Field = Field {
    name: "profile",
    flag: "profile",
    value_name: "PROFILE",
    help: "Named defaults, each field overridable (learned: evaluator ntuple, the network of --weights, up to 9 \
           plies within a node budget of 40000, reward weight 1, leaves right after a move; tuned: evaluator \
           tuned, depth auto; classic: evaluator classic, depth 4, reward weight 1)",
    accepts: Accepts::Name { names: Profile::NAMES },
    absent: Absent::Said("learned; tuned with --weights none"),
    flag_default: FlagDefault::Absent,
};
/// `evaluator` of a search: overrides the profile's.
pub const EVALUATOR: Field = Field {
    name: "evaluator",
    flag: "evaluator",
    value_name: "EVALUATOR",
    help: "Evaluator, overriding the profile's (ntuple needs a network)",
    accepts: Accepts::Name {
        names: EvaluatorKind::NAMES,
    },
    absent: Absent::Said("the profile's"),
    flag_default: FlagDefault::Absent,
};
/// `depth`, in plies or `auto` (the upper end is also capped by [`SearchBounds::max_depth`]).
pub const DEPTH: Field = Field {
    name: "depth",
    flag: "depth",
    value_name: "PLIES|auto",
    help: "Plies to search",
    accepts: Accepts::PliesOrAuto { max: MAX_DEPTH as u64 },
    absent: Absent::Said("the profile's"),
    flag_default: FlagDefault::Absent,
};
/// The smallest time budget a request may ask for, in ms (10 µs: about one 3-ply search's worth of nodes).
pub const MIN_BUDGET_MS: f64 = 0.01;
/// `time_budget_ms`: larger budgets are clamped to the bounds' maximum.
pub const TIME_BUDGET_MS: Field = Field {
    name: "time_budget_ms",
    flag: "budget-ms",
    value_name: "MS",
    help: "Time budget in ms, fractions allowed (more than a day counts as a day): deepen iteratively and return \
           the deepest completed depth (an iteration foreseen to overrun is not started; simulate: each game's mean \
           per move, more of it on crowded boards)",
    accepts: Accepts::ClampedNumber { min: MIN_BUDGET_MS },
    absent: Absent::Said("none, search to the depth"),
    flag_default: FlagDefault::Absent,
};
/// The largest node budget a request may ask for (about two minutes of search per move).
pub const MAX_NODE_BUDGET: u64 = 1_000_000_000;
/// `node_budget`: the profile's unless given; a request that gives `depth` or `time_budget_ms` without it searches
/// without one.
pub const NODE_BUDGET: Field = Field {
    name: "node_budget",
    flag: "node-budget",
    value_name: "NODES",
    help: "Node budget: deepen iteratively up to the depth, starting an iteration only when the nodes so far plus \
           its foreseen nodes fit this budget weighted by the board's danger (2x with at most two empty cells, 0.5x \
           with six or more); counted in nodes (a node of a network stage reading twice the first stage's tuples \
           counts 2), so a board gets the same search on any machine",
    accepts: Accepts::Whole {
        min: 1,
        max: MAX_NODE_BUDGET,
    },
    absent: Absent::Said("the profile's (learned: 40000), none when depth or the time budget is given"),
    flag_default: FlagDefault::Absent,
};
/// The largest late weight a request may ask for.
pub const MAX_LATE_WEIGHT: f64 = 100.0;
/// `late_weight`: 1 unless given.
pub const LATE_WEIGHT: Field = Field {
    name: "late_weight",
    flag: "late-weight",
    value_name: "W",
    help: "How many times the node budget (simulate with a time budget: the time) a board on the run to 32768 \
           gets (its largest tile 16384: where most games that make 16384 are won or lost) beside a board as \
           crowded elsewhere in the game; 1: no more",
    accepts: Accepts::Below {
        min: 0.0,
        below: MAX_LATE_WEIGHT,
    },
    absent: Absent::Said("1"),
    flag_default: FlagDefault::Absent,
};
/// `prob_cutoff`.
pub const PROB_CUTOFF: Field = Field {
    name: "prob_cutoff",
    flag: "prob-cutoff",
    value_name: "P",
    help: "Chance nodes whose path probability is below this use the heuristic",
    accepts: Accepts::Below { min: 0.0, below: 1.0 },
    absent: Absent::Said("0.0001"),
    flag_default: FlagDefault::Absent,
};
/// `reward_weight`.
pub const REWARD_WEIGHT: Field = Field {
    name: "reward_weight",
    flag: "reward-weight",
    value_name: "W",
    help: "Weight of a move's merge reward in a move node's value",
    accepts: Accepts::Magnitude { max: MAX_WEIGHT },
    absent: Absent::Said("the profile's"),
    flag_default: FlagDefault::Absent,
};
/// `terminal`.
pub const TERMINAL: Field = Field {
    name: "terminal",
    flag: "terminal",
    value_name: "TERMINAL",
    help: "Value of a board with no legal move inside the search",
    accepts: Accepts::Name { names: Terminal::NAMES },
    absent: Absent::Said("the profile's"),
    flag_default: FlagDefault::Absent,
};
/// `weights`: evaluator weight overrides by name.
pub const WEIGHTS: Field = Field {
    name: "weights",
    flag: "weight",
    value_name: "NAME=VALUE",
    help: "Override an evaluator weight, e.g. --weight empty=3",
    accepts: Accepts::NamedNumbers { max: MAX_WEIGHT },
    absent: Absent::Said("the evaluator's"),
    flag_default: FlagDefault::Absent,
};
/// `sample_cells`.
pub const SAMPLE_CELLS: Field = Field {
    name: "sample_cells",
    flag: "sample-cells",
    value_name: "K",
    help: "Average over at most this many empty cells per chance node, a seeded sample",
    accepts: Accepts::Whole { min: 1, max: 16 },
    absent: Absent::Said("every empty cell"),
    flag_default: FlagDefault::Absent,
};
/// `top_k`.
pub const TOP_K: Field = Field {
    name: "top_k",
    flag: "top-k",
    value_name: "K",
    help: "Expand only the k best moves (by immediate evaluation) below the root",
    accepts: Accepts::Whole { min: 1, max: 4 },
    absent: Absent::Said("every move"),
    flag_default: FlagDefault::Absent,
};
/// `seed` of one search (in `/simulate` the run's seed is a field of its own).
pub const SEARCH_SEED: Field = Field {
    name: "seed",
    flag: "search-seed",
    value_name: "SEED",
    help: "Seed of the search's random choices (sample-cells)",
    accepts: Accepts::Whole { min: 0, max: u64::MAX },
    absent: Absent::Whole(0),
    flag_default: FlagDefault::Absent,
};
/// `threads` of one search: threads for its root moves (in `/simulate`, games played in parallel: a field of its
/// own); more than [`SearchBounds::max_threads`] are clamped to it.
pub const SEARCH_THREADS: Field = Field {
    name: "threads",
    flag: "search-threads",
    value_name: "N",
    help: "Threads for the root moves of one search (more than the CPUs count as the CPUs)",
    accepts: Accepts::Clamped { min: 1 },
    absent: Absent::Whole(1),
    flag_default: FlagDefault::Absent,
};

/// The fields of what to search, shared by `/best-move`, `/simulate` and `/analyze`.
pub const SEARCH: &[&Field] = &[
    &PROFILE,
    &EVALUATOR,
    &DEPTH,
    &TIME_BUDGET_MS,
    &NODE_BUDGET,
    &LATE_WEIGHT,
    &PROB_CUTOFF,
    &REWARD_WEIGHT,
    &TERMINAL,
    &WEIGHTS,
    &SAMPLE_CELLS,
    &TOP_K,
];

/// The fields of a single search (`/best-move`, `/analyze`): its seed and threads.
pub const ONE_SEARCH: &[&Field] = &[&SEARCH_SEED, &SEARCH_THREADS];

/// One problem with one place in the request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// JSON pointer (RFC 6901) into the request, e.g. `/board/2/3`; `""` for the whole request.
    pub pointer: String,
    pub message: String,
}

impl Problem {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// Every problem found in a request, in the order the fields were read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem::new(pointer, message));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Problem> {
        self.0.iter()
    }

    pub fn into_vec(self) -> Vec<Problem> {
        self.0
    }

    /// `Ok(value)` when nothing went wrong and the value was read, else every problem.
    pub fn finish<T>(mut self, value: Option<T>) -> Result<T, Problems> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ if self.0.is_empty() => {
                self.push("", "the request is invalid");
                Err(self)
            }
            _ => Err(self),
        }
    }
}

impl From<Problem> for Problems {
    fn from(problem: Problem) -> Problems {
        Problems(vec![problem])
    }
}

/// What a request may ask for where its search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchBounds {
    /// The largest time budget; a larger one is clamped to it.
    pub max_budget: Duration,
    /// True: a request without `time_budget_ms` gets `max_budget` (a server bounds every search); false: it
    /// searches to its depth without a budget (the command line).
    pub budget_by_default: bool,
    /// The largest explicit depth, in plies.
    pub max_depth: u32,
    /// The most threads one search may use; more are clamped to it.
    pub max_threads: usize,
    /// Whether a network is loaded (or loadable): the profile of a request that names none
    /// ([`Profile::default_for`]) and whether evaluator `ntuple` can be asked for.
    pub network: bool,
    /// How the search runs here, not what it searches: the transposition table's size as log2 of its entries
    /// (`None`: no table). A server's is the default; the command line's is `--tt-bits`.
    pub tt_bits: Option<u8>,
}

impl SearchBounds {
    /// The bounds of a search run on this machine from the command line: no budget unless asked (at most
    /// [`LOCAL_MAX_BUDGET`]), any depth the engine supports, threads up to the number of CPUs.
    pub fn local(network: bool) -> SearchBounds {
        SearchBounds {
            max_budget: LOCAL_MAX_BUDGET,
            budget_by_default: false,
            max_depth: MAX_DEPTH,
            max_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            network,
            tt_bits: Some(DEFAULT_TT_BITS),
        }
    }

    /// The profile of a request that names none.
    pub fn default_profile(&self) -> Profile {
        Profile::default_for(self.network)
    }
}

/// Weight overrides by name, validated against the evaluator's names; `(name, value)`.
pub type Weights = Vec<(String, f64)>;

/// An evaluator as asked for: its kind and weight overrides. Built into an [`AnyEvaluator`] by
/// [`EvaluatorRequest::build`] (off the async workers in the server: custom weights build tables).
#[derive(Clone, Debug, PartialEq)]
pub struct EvaluatorRequest {
    pub kind: EvaluatorKind,
    pub weights: Weights,
    /// True when the request named its evaluator (a missing network is then reported at `/evaluator`, else at
    /// `/profile`).
    pub named: bool,
}

impl EvaluatorRequest {
    /// The evaluator, with `network` as the `ntuple` evaluator's network.
    pub fn build(&self, network: Option<&Arc<Network>>) -> Result<AnyEvaluator, Problem> {
        self.kind.with_network(network, &self.weights).map_err(|e| match e {
            WeightError::NoNetwork => no_network(self.named),
            _ => Problem::new(WEIGHTS.pointer(), e.to_string()),
        })
    }
}

/// The problem of a request that needs the `ntuple` evaluator (profile `learned` or evaluator `ntuple`) when no
/// network is loaded: at `/evaluator` when the request named its evaluator (`named`), else at `/profile`.
fn no_network(named: bool) -> Problem {
    let at = if named { EVALUATOR.pointer() } else { PROFILE.pointer() };
    Problem::new(at, WeightError::NoNetwork.to_string())
}

/// A search as asked for: the settings and the evaluator they run with.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    pub settings: SearchSettings,
    pub evaluator: EvaluatorRequest,
}

impl SearchRequest {
    /// Reads and validates the fields of one search alone ([`SEARCH`] and [`ONE_SEARCH`]: a board-less request,
    /// `advisor2048 bench` searches its own positions), reporting every problem.
    pub fn from_json(body: &Value, bounds: &SearchBounds) -> Result<SearchRequest, Problems> {
        let mut problems = Problems::default();
        let Some(map) = body_object(body, &field::names(&[SEARCH, ONE_SEARCH]), &mut problems) else {
            return Err(problems);
        };
        let search = read_search(map, bounds, true, &mut problems);
        problems.finish(search)
    }
}

fn required_board(map: &Map<String, Value>, problems: &mut Problems) -> Option<Tiles> {
    match map.get("board") {
        Some(v) => read_board(v, "/board", problems),
        None => {
            problems.push("/board", "board is required");
            None
        }
    }
}

/// Records [`no_network`] when the request needs the `ntuple` evaluator and no network is `loaded`.
fn check_network(map: &Map<String, Value>, kind: EvaluatorKind, loaded: bool, problems: &mut Problems) {
    if kind == EvaluatorKind::NTuple && !loaded {
        problems.0.push(no_network(map.contains_key(EVALUATOR.name)));
    }
}

/// Reads the fields of what to search ([`SEARCH`]): the profile's defaults with every given field applied, the
/// budget clamped to the bounds' maximum, and the validated weight overrides. With `one_search` also the seed and
/// threads of a single search ([`ONE_SEARCH`]; more threads than the bounds allow are clamped to them, like the
/// budget); without, the search runs on one thread with seed 0 (a simulation seeds each move's search itself).
fn read_search(
    map: &Map<String, Value>,
    bounds: &SearchBounds,
    one_search: bool,
    problems: &mut Problems,
) -> Option<SearchRequest> {
    let before = problems.len();
    let profile = PROFILE
        .read_name(map, problems)
        .unwrap_or_else(|| bounds.default_profile());
    let mut s = profile.settings();
    s.run.tt_bits = bounds.tt_bits;
    let kind = EVALUATOR
        .read_name(map, problems)
        .unwrap_or_else(|| profile.evaluator());
    if let Some(v) = map.get(DEPTH.name) {
        let max_depth = match DEPTH.accepts {
            Accepts::PliesOrAuto { max } => u64::from(bounds.max_depth).min(max),
            _ => u64::from(bounds.max_depth),
        };
        match (v.as_str(), whole_number(v).and_then(|d| u64::try_from(d).ok())) {
            (Some("auto"), _) => s.depth = Depth::Auto,
            (_, Some(d)) if (1..=max_depth).contains(&d) => s.depth = Depth::Plies(d as u32),
            (_, Some(d)) if d > max_depth => problems.push(
                DEPTH.pointer(),
                format!("depth {d} is over the server's limit of {max_depth} plies (--max-depth)"),
            ),
            _ => problems.push(
                DEPTH.pointer(),
                format!("depth must be \"auto\" or a number of plies from 1, found {v}"),
            ),
        }
    }
    let max_ms = bounds.max_budget.as_secs_f64() * 1000.0;
    s.run.time_budget = match TIME_BUDGET_MS.read_clamped_number(map, max_ms, problems) {
        Some(ms) => {
            Some(Duration::try_from_secs_f64(ms / 1000.0).map_or(bounds.max_budget, |b| b.min(bounds.max_budget)))
        }
        None if bounds.budget_by_default => Some(bounds.max_budget),
        None => None,
    };
    // A depth or a time budget asked for is searched as asked, not within the profile's node budget.
    s.node_budget = match NODE_BUDGET.read_whole(map, problems) {
        Some(n) => Some(n),
        None if map.contains_key(DEPTH.name) || map.contains_key(TIME_BUDGET_MS.name) => None,
        None => s.node_budget,
    };
    if let Some(w) = LATE_WEIGHT.read_below(map, problems) {
        s.late_weight = w;
    }
    if let Some(p) = PROB_CUTOFF.read_below(map, problems) {
        s.prob_cutoff = p;
    }
    if let Some(v) = map.get(REWARD_WEIGHT.name) {
        match weight_value(v) {
            Ok(w) => s.reward_weight = w,
            Err(message) => problems.push(REWARD_WEIGHT.pointer(), format!("reward_weight {message}")),
        }
    }
    if let Some(t) = TERMINAL.read_name(map, problems) {
        s.terminal = t;
    }
    s.sample_cells = SAMPLE_CELLS.read_whole(map, problems).map(|k| k as u32);
    s.top_k = TOP_K.read_whole(map, problems).map(|k| k as u32);
    if one_search {
        if let Some(seed) = SEARCH_SEED.read_whole(map, problems) {
            s.seed = seed;
        }
        if let Some(t) = SEARCH_THREADS.read_clamped(map, bounds.max_threads as u64, problems) {
            s.run.threads = usize::try_from(t).unwrap_or(bounds.max_threads);
        }
    }
    let weights = read_weights(map, kind, problems);
    if problems.len() > before {
        return None;
    }
    // Only a request that is otherwise valid hears that its evaluator needs a network.
    check_network(map, kind, bounds.network, problems);
    let evaluator = EvaluatorRequest {
        kind,
        weights: weights?,
        named: map.contains_key(EVALUATOR.name),
    };
    (problems.len() == before).then_some(SearchRequest { settings: s, evaluator })
}

/// The request's `weights`: names known to the evaluator, numbers within [`MAX_WEIGHT`].
fn read_weights(map: &Map<String, Value>, kind: EvaluatorKind, problems: &mut Problems) -> Option<Weights> {
    let Some(v) = map.get(WEIGHTS.name) else {
        return Some(Vec::new());
    };
    let Some(obj) = v.as_object() else {
        problems.push(
            WEIGHTS.pointer(),
            format!(
                "weights must be an object of weight names to numbers, found {}",
                kind_of(v)
            ),
        );
        return None;
    };
    let mut overrides = Vec::new();
    let known: Vec<&str> = kind.default_weights().iter().map(|(n, _)| *n).collect();
    let known_text = if known.is_empty() {
        crate::eval::NTUPLE_KNOWN_WEIGHTS.to_owned()
    } else {
        known.join(", ")
    };
    let before = problems.len();
    for (name, value) in obj {
        let at = pointer(&[WEIGHTS.name, name]);
        if !known.contains(&name.as_str()) {
            let unknown = WeightError::Unknown {
                evaluator: kind.as_str(),
                name: name.clone(),
                known: known_text.clone(),
            };
            problems.push(at, unknown.to_string());
            continue;
        }
        match weight_value(value) {
            Ok(x) => overrides.push((name.clone(), x)),
            Err(message) => problems.push(at, format!("weight {name:?} {message}")),
        }
    }
    (problems.len() == before).then_some(overrides)
}
