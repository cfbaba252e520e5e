//! Search settings: profiles (named defaults) and every field a caller may override.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::engine::Tiles;
use crate::eval::EvaluatorKind;
use crate::names::named_enum;

/// The deepest search, in plies, that `auto` can choose (16 distinct tiles: 2 x 14 + 1).
pub const MAX_DEPTH: u32 = 29;

/// How deep to search, in plies (one ply = one move layer or one spawn layer; the root is a move layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Exactly this many plies (1..=[`MAX_DEPTH`]).
    Plies(u32),
    /// 2 x max(3, distinct_tiles - 2) + 1 plies, distinct_tiles counting the distinct tile values on the root board.
    Auto,
}

impl Depth {
    /// The number of plies for a root board.
    pub fn plies_for(self, tiles: &Tiles) -> u32 {
        match self {
            Depth::Plies(p) => p,
            Depth::Auto => auto_depth(tiles),
        }
    }
}

/// The `auto` depth of a board: 2 x max(3, distinct_tiles - 2) + 1 plies.
pub fn auto_depth(tiles: &Tiles) -> u32 {
    let mut seen = 0u32;
    for e in tiles.exponents() {
        if e > 0 {
            seen |= 1 << e;
        }
    }
    let distinct = seen.count_ones();
    2 * distinct.saturating_sub(2).max(3) + 1
}

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Depth::Plies(p) => write!(f, "{p}"),
            Depth::Auto => f.write_str("auto"),
        }
    }
}

/// The error of parsing a [`Depth`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("depth must be auto or a number of plies from 1 to {MAX_DEPTH}, found {0:?}")]
pub struct ParseDepthError(pub String);

impl FromStr for Depth {
    type Err = ParseDepthError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "auto" {
            return Ok(Depth::Auto);
        }
        match s.parse::<u32>() {
            Ok(p) if (1..=MAX_DEPTH).contains(&p) => Ok(Depth::Plies(p)),
            _ => Err(ParseDepthError(s.to_owned())),
        }
    }
}

named_enum! {
    /// The value of a move node with no legal move (game over inside the search).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Terminal: "a terminal value" {
        /// 0, as the best-known public heuristic engine scores a lost board.
        Zero = "zero",
        /// h(board), as in the seed document's pseudo-code.
        Heuristic = "heuristic",
    }
}

named_enum! {
    /// Named defaults; every field can be overridden afterwards. A request that names no profile gets
    /// [`Profile::default_for`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Profile: "a profile" {
        /// Evaluator `tuned`, reward weight 0, terminal 0, cut-off 0.0001, depth `auto`: the settings of the
        /// best-known public heuristic expectimax engine, so values can be compared board by board.
        Tuned = "tuned",
        /// Evaluator `classic`, reward weight 1 (seed 002 eq. 3: merge score plus heuristic), terminal h(board),
        /// cut-off 0.0001, depth 4 plies.
        Classic = "classic",
        /// Evaluator `ntuple` (the loaded network), reward weight 1 (the network predicts the score still to come
        /// after a move, so the rewards along the path count), terminal 0, cut-off 0.0001, up to
        /// [`LEARNED_DEFAULT_DEPTH`] plies within a node budget of [`LEARNED_NODE_BUDGET`]. Leaves are boards right
        /// after a move: an even depth is searched one ply deeper.
        Learned = "learned",
    }
}

/// The deepest the `learned` profile searches by default, in plies (1 = greedy over the four after-move boards),
/// within its node budget ([`LEARNED_NODE_BUDGET`]): 9 plies where the board is crowded and the budget allows it,
/// 5 or 7 on most boards.
pub const LEARNED_DEFAULT_DEPTH: u32 = 9;

/// The `learned` profile's default node budget ([`SearchSettings::node_budget`]): about 1 ms of search per move on
/// average over a game on the machine the defaults were chosen on (docs/strength.md). Measured over 300 games it
/// plays stronger than any fixed depth that fits in that time.
pub const LEARNED_NODE_BUDGET: u64 = 40_000;

impl Profile {
    /// The profile of a request or command that names none: `learned` when a network is loaded (at its default
    /// settings it plays far stronger than `tuned` in the same time per move: docs/strength.md), else `tuned`.
    pub fn default_for(network_loaded: bool) -> Profile {
        if network_loaded {
            Profile::Learned
        } else {
            Profile::Tuned
        }
    }

    /// The profile's evaluator.
    pub fn evaluator(self) -> EvaluatorKind {
        match self {
            Profile::Tuned => EvaluatorKind::Tuned,
            Profile::Classic => EvaluatorKind::Classic,
            Profile::Learned => EvaluatorKind::NTuple,
        }
    }

    /// The profile's settings (the search runs with whichever evaluator it is given: by default
    /// [`Profile::evaluator`]).
    pub fn settings(self) -> SearchSettings {
        match self {
            Profile::Tuned => SearchSettings::default(),
            Profile::Classic => SearchSettings {
                profile: Profile::Classic,
                depth: Depth::Plies(4),
                reward_weight: 1.0,
                terminal: Terminal::Heuristic,
                ..SearchSettings::default()
            },
            Profile::Learned => SearchSettings {
                profile: Profile::Learned,
                depth: Depth::Plies(LEARNED_DEFAULT_DEPTH),
                node_budget: Some(LEARNED_NODE_BUDGET),
                reward_weight: 1.0,
                terminal: Terminal::Zero,
                ..SearchSettings::default()
            },
        }
    }
}

/// The error of parsing a [`Profile`].
pub type ParseProfileError = crate::names::ParseNameError;

/// Default transposition table size: 2^17 entries (3 MiB) per searching thread, reused between searches. Larger
/// tables find few more hits and cost more in cache misses than they save (see the README's speed section).
pub const DEFAULT_TT_BITS: u8 = 17;

/// One search: what it searches (these fields, chosen by a profile and the request) and how it runs ([`run`]).
/// `Default` is the `tuned` profile.
///
/// [`run`]: SearchSettings::run
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSettings {
    /// The profile these settings started from (reported back).
    pub profile: Profile,
    pub depth: Depth,
    /// Weight of a move's merge reward in a move node's value.
    pub reward_weight: f64,
    pub terminal: Terminal,
    /// A chance node whose path probability is below this is evaluated by the heuristic instead of expanded.
    pub prob_cutoff: f64,
    /// Seed 002's speed-up: a chance node averages over at most this many empty cells, chosen uniformly.
    pub sample_cells: Option<u32>,
    /// Seed 002's speed-up: a move node below the root expands only the k moves whose immediate evaluation is best.
    pub top_k: Option<u32>,
    /// Deepen iteratively over odd depths up to `depth`, starting an iteration only when the nodes searched so far
    /// plus those it is foreseen to take stay within this budget weighted by the root board's danger
    /// ([`danger_weight`](super::danger_weight): twice on a crowded board, half on an open one). It counts nodes,
    /// not time, so the same board gets the same search on any machine, under any load, on any number of threads;
    /// a started iteration is never cut by it. `None`: search to `depth`.
    pub node_budget: Option<u64>,
    /// How many times the node budget (or a self-play game's time per move) a board on the run to 32768 gets: one
    /// whose largest tile is 16384 ([`LATE_RUN_TILE`](super::LATE_RUN_TILE)), where most games that make 16384
    /// are won or lost. Multiplies the [`danger_weight`](super::danger_weight) of such boards; 1 (every profile's):
    /// no more than any board as crowded. Twice was measured for the `learned` default and not adopted: it made
    /// 32768 no more often (docs/strength.md).
    pub late_weight: f64,
    /// Seeds the random choices of `sample_cells`.
    pub seed: u64,
    /// How the search runs.
    pub run: RunSettings,
}

/// How a search runs, where it runs: its time and node limits, its transposition table and threads. Set by where
/// the search runs (a server's bounds, the command line's flags, a self-play run's clock), not by a profile. A search
/// that no limit cuts short finds the same values with any table size and any number of threads.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    /// With a budget the search deepens iteratively and returns the deepest completed iteration.
    pub time_budget: Option<Duration>,
    /// Stop after about this many nodes (tests bound searches by nodes, never by time).
    pub node_limit: Option<u64>,
    /// A hard deadline (for example the end of a self-play run's wall-clock limit): the search is cut there and
    /// returns its deepest completed iteration. Unlike `time_budget` it does not make the search deepen
    /// iteratively, so a search that ends before it is the same as one without it.
    pub stop_at: Option<std::time::Instant>,
    /// Transposition table size as log2 of the entry count; `None` disables the table.
    pub tt_bits: Option<u8>,
    /// Threads searching the root moves in parallel (the result does not depend on it).
    pub threads: usize,
    /// The clock `time_budget` is counted on (a search on several threads counts wall-clock time).
    pub budget_clock: super::BudgetClock,
}

impl SearchSettings {
    /// How deep the search goes, in words: `depth 5`, or `depth 9, node budget 40000`.
    pub fn depth_words(&self) -> String {
        format!(
            "depth {}{}",
            self.depth,
            node_budget_words(self.node_budget, self.late_weight)
        )
    }
}

/// `, node budget N` (and `, late weight W` when it is not 1) for a search with a node budget, else nothing
/// (appended to a depth in printed summaries).
pub fn node_budget_words(node_budget: Option<u64>, late_weight: f64) -> String {
    match node_budget {
        Some(n) if late_weight != 1.0 => format!(", node budget {n}, late weight {late_weight}"),
        Some(n) => format!(", node budget {n}"),
        None => String::new(),
    }
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            profile: Profile::Tuned,
            depth: Depth::Auto,
            reward_weight: 0.0,
            terminal: Terminal::Zero,
            prob_cutoff: 0.0001,
            sample_cells: None,
            top_k: None,
            node_budget: None,
            late_weight: 1.0,
            seed: 0,
            run: RunSettings::default(),
        }
    }
}

impl Default for RunSettings {
    /// No limit, the default table, one thread.
    fn default() -> Self {
        RunSettings {
            time_budget: None,
            node_limit: None,
            stop_at: None,
            tt_bits: Some(DEFAULT_TT_BITS),
            threads: 1,
            budget_clock: super::BudgetClock::Wall,
        }
    }
}
