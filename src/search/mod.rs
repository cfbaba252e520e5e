//! Expectimax search over the engine and an evaluator.
//!
//! # Semantics
//! Depth is counted in **plies**: one ply is one player-move layer or one tile-spawn layer; the root is a move layer.
//! - A **move node** with p plies left: p = 0 gives h(board); no legal move gives the terminal value (0 or h(board),
//!   per profile); otherwise the max over legal moves a of `reward_weight x reward(board, a) + chance(after a, p - 1)`.
//! - A **chance node** (the board after a move, before the spawn) with p plies left and cumulative path probability
//!   c: p = 0 or c < `prob_cutoff` gives h(board); otherwise, with E empty cells, the mean over the E cells of
//!   `0.9 x move(board + 2 there, p - 1, c x 0.9 / E) + 0.1 x move(board + 4 there, p - 1, c x 0.1 / E)`.
//! - The value of direction a at the root is `reward_weight x reward + chance(after a, depth - 1)` with c = 1;
//!   illegal directions have no value. The chosen direction is the legal one with the highest value; ties go to the
//!   first in the order up, down, left, right.
//!
//! An even depth evaluates boards after a spawn (seed 002, section 8: one move + one spawn = depth 2), an odd depth
//! evaluates boards right after a move. `top_k` applies to move nodes below the root (every legal root direction
//! gets a value); `sample_cells` draws its cells from a generator seeded by `seed` and the root direction.
//!
//! # Transposition table
//! Chance-node values keyed by the board, with the plies left when computed; reused at a node with the same or fewer
//! plies left. One table generation per root direction, so a direction's value never depends on which other
//! directions were searched first, and `threads` cannot change a result. Tables are fixed-size and reused: a search
//! takes a spare one per thread it runs on and gives it back ([`keep_spare_tables`]), so a process allocates as
//! many as it ever ran searching threads at once, whichever threads those were. A 1-ply search uses none.
//!
//! # Node budget
//! With a node budget (`node_budget`) the search deepens iteratively over odd depths 1, 3, 5, ... up to the
//! requested depth and starts an iteration only when the nodes so far plus its foreseen nodes (the last
//! iteration's, grown as they grew from the one before) fit the budget weighted by the root board's danger
//! ([`danger_weight`]: by its empty cells, and `late_weight` times on the run to 32768); a forced move stops after
//! one ply. Nodes, not time: the depth chosen for a board is the same on every machine and every run, and a started
//! iteration always completes (it is not `truncated`).
//!
//! # Time, limits and cancellation
//! Without a time budget the search runs the requested depth once. With a budget it deepens iteratively over odd
//! depths 1, 3, 5, ... up to the requested depth (which comes last, even or odd) and returns the deepest completed
//! iteration; an iteration cut short by the budget is discarded and the result says `truncated`. It does not start
//! an iteration it foresees ending after the budget (the last one's time, grown as its nodes grew from the one
//! before: its work would be thrown away), and says `truncated` then too; a forced move (one legal direction) stops
//! after one ply. A self-play game holds its moves' mean time to the budget (`sim::budget`). A [`StopHandle`]
//! (and the node limit) are polled every 4096 nodes, a few microseconds of work.
//!
//! # Exactness for huge tiles
//! The fast path runs on [`Board`] (4-bit cells). It is used when every root tile fits a nibble and the tile sum plus
//! 4 per spawn layer stays below 65536, which proves no 65536 tile can appear inside the search. Otherwise the same
//! recursion runs on [`Tiles`] (exact up to 131072, no transposition table, tens of times slower).

mod clock;
mod effort;
mod expectimax;
mod params;
#[cfg(any(test, feature = "reference"))]
pub mod reference;
mod stop;
mod tt;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use clock::{thread_cpu_time, BudgetClock};
pub use effort::{danger_weight, node_allowance, LATE_RUN_TILE};
pub use params::{
    auto_depth, node_budget_words, Depth, ParseDepthError, ParseProfileError, Profile, RunSettings, SearchSettings,
    Terminal,
};
pub use params::{DEFAULT_TT_BITS, LEARNED_DEFAULT_DEPTH, LEARNED_NODE_BUDGET, MAX_DEPTH};
pub use stop::{StopHandle, StopOnDrop};
pub use tt::TranspositionTable;

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{Board, Direction, Tiles};
use crate::eval::{AnyEvaluator, Evaluator};
use expectimax::{Ctx, Position};

/// Builds the move tables and the default evaluators' tables now, instead of during the first search that needs
/// them (which would take about 20 ms longer). The server calls this before it accepts connections.
pub fn warm_up() {
    for kind in crate::eval::EvaluatorKind::HEURISTICS {
        if let Ok(e) = kind.default_evaluator() {
            std::hint::black_box(e.evaluate(crate::engine::Board::EMPTY));
        }
    }
    std::hint::black_box(crate::engine::Board::EMPTY.play(Direction::Left)).ok();
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// The value of each direction (order of [`Direction::ALL`]) in the deepest completed iteration; `None` when the
    /// move is illegal or no iteration completed.
    pub values: [Option<f64>; 4],
    /// The reward of each legal direction.
    pub rewards: [Option<u64>; 4],
    /// The chosen direction: `None` when no move is legal or no iteration completed.
    pub best: Option<Direction>,
    pub stats: SearchStats,
}

/// Statistics of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchStats {
    /// Plies of the deepest completed iteration (0 when none completed or the game is over).
    pub depth: u32,
    /// The plies asked for (the `auto` depth resolved).
    pub target_depth: u32,
    /// Moves tried at move nodes (4 per move node, the root included), over all iterations.
    pub nodes: u64,
    pub tt_hits: u64,
    /// Transposition entries filled (summed over root directions and iterations).
    pub tt_used: u64,
    /// Entries per transposition table (0 when disabled or unused).
    pub tt_capacity: u64,
    pub elapsed: Duration,
    /// The budget, the node limit or the stop handle cut the search short.
    pub truncated: bool,
    /// Whether the fast bitboard path ran (false: the exact path for tiles of 65536 and more).
    pub fast_path: bool,
}

impl SearchOutcome {
    /// True when the root board has no legal move.
    pub fn game_over(&self) -> bool {
        self.rewards.iter().all(Option::is_none)
    }

    /// True when an iteration completed (or the game was already over).
    pub fn completed(&self) -> bool {
        self.best.is_some() || self.game_over()
    }
}

/// Transposition tables no search is using, kept for the next ones: a search takes one per thread it runs on and
/// gives it back when done, so a process holds as many tables as it ever ran searching threads at once, whichever
/// threads those were. (A table per thread, as before, was allocated anew for every thread the server's blocking
/// pool started and freed when the thread ended: under steady load the allocator kept some of those 2 MiB blocks
/// in its per-thread arenas, and resident memory climbed in steps.)
static SPARE_TABLES: Mutex<Vec<TranspositionTable>> = Mutex::new(Vec::new());

/// The most spare tables kept (0: the number of CPUs); see [`keep_spare_tables`].
static SPARE_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Keeps up to `n` transposition tables for reuse when searches end (default: the number of CPUs). A server that
/// runs up to `n` searching threads at once sets it to `n`, so that its tables are allocated once and then reused.
pub fn keep_spare_tables(n: usize) {
    SPARE_LIMIT.store(n.max(1), Ordering::Relaxed);
}

fn spare_limit() -> usize {
    match SPARE_LIMIT.load(Ordering::Relaxed) {
        0 => {
            // Asked once: the answer reads files under /proc and /sys.
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            let _ = SPARE_LIMIT.compare_exchange(0, cpus, Ordering::Relaxed, Ordering::Relaxed);
            SPARE_LIMIT.load(Ordering::Relaxed)
        }
        n => n,
    }
}

/// Runs `f` with a table of 2^bits entries: a spare one of that size, or a new one; kept for reuse afterwards.
fn with_table<R>(bits: Option<u8>, f: impl FnOnce(Option<&mut TranspositionTable>) -> R) -> R {
    let Some(bits) = bits.map(|b| b.clamp(4, 30)) else {
        return f(None);
    };
    let spare = {
        let mut spares = SPARE_TABLES.lock().unwrap_or_else(|e| e.into_inner());
        let found = spares.iter().rposition(|t| t.bits() == bits);
        found.map(|i| spares.swap_remove(i))
    };
    let mut table = spare.unwrap_or_else(|| TranspositionTable::new(bits));
    let result = f(Some(&mut table));
    let mut spares = SPARE_TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if spares.len() < spare_limit() {
        spares.push(table);
    } else if let Some(other) = spares.iter().position(|t| t.bits() != bits) {
        // Full of tables of another size (a caller changed `tt_bits`): the newest size replaces one of them.
        let old = std::mem::replace(&mut spares[other], table);
        drop(spares);
        drop(old);
    }
    result
}

/// How many spare transposition tables are kept now, and their bytes (for tests and metrics).
pub fn spare_tables() -> (usize, u64) {
    let spares = SPARE_TABLES.lock().unwrap_or_else(|e| e.into_inner());
    (spares.len(), spares.iter().map(TranspositionTable::bytes).sum())
}

/// Searches `tiles` with `evaluator` under `settings`, until done, out of budget, or stopped through `stop`.
///
/// # Examples
/// ```
/// use advisor2048::engine::{Direction, Tiles};
/// use advisor2048::eval::EvaluatorKind;
/// use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
/// let tiles = Tiles::from_rows(&[[0, 0, 2, 2], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]]).unwrap();
/// let settings = SearchSettings { depth: Depth::Plies(3), ..Profile::Classic.settings() };
/// let outcome = search(&tiles, &EvaluatorKind::Classic.default_evaluator().unwrap(), &settings, &StopHandle::new());
/// assert_eq!(outcome.best, Some(Direction::Right));
/// ```
pub fn search(tiles: &Tiles, evaluator: &AnyEvaluator, settings: &SearchSettings, stop: &StopHandle) -> SearchOutcome {
    search_timed(tiles, evaluator, settings, stop, Timing::Measured)
}

/// [`search`] for self-play, which has no use for each search's own duration: `stats.elapsed` is left at zero
/// unless a time budget needs the clock anyway (two clock reads are a tenth of a greedy move).
pub(crate) fn search_untimed(
    tiles: &Tiles,
    evaluator: &AnyEvaluator,
    settings: &SearchSettings,
    stop: &StopHandle,
) -> SearchOutcome {
    search_timed(tiles, evaluator, settings, stop, Timing::Skipped)
}

/// Whether a search reads the clock for its `stats.elapsed`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timing {
    Measured,
    Skipped,
}

fn search_timed(
    tiles: &Tiles,
    evaluator: &AnyEvaluator,
    settings: &SearchSettings,
    stop: &StopHandle,
    timing: Timing,
) -> SearchOutcome {
    match evaluator {
        AnyEvaluator::Classic(e) => search_with(tiles, e, settings, stop, timing),
        AnyEvaluator::Tuned(e) => search_with(tiles, e, settings, stop, timing),
        AnyEvaluator::NTuple(e) => {
            // A network of several stages values the whole tree in the root board's stage (one stage per decision).
            let max = tiles.exponents().iter().copied().max().unwrap_or(0).min(15);
            match e.for_decision(max) {
                Some(pinned) => search_with(tiles, &pinned, settings, stop, timing),
                None => search_with(tiles, e, settings, stop, timing),
            }
        }
    }
}

/// What the threads of one search share: the nodes searched so far, and the name the search gives the leaf-value
/// cache of the transposition tables it takes ([`TranspositionTable::begin_leaf_epoch`]).
struct Shared {
    nodes: AtomicU64,
    leaf_epoch: u64,
}

impl Shared {
    /// For a search with `eval`: the leaf-value cache is named by the evaluator's values key when it has one (the
    /// values a table holds stay good for every search with that key), else by a name unique to this search.
    fn new<E: Evaluator>(eval: &E) -> Shared {
        /// The next search's own name, with the top bit set (a values key never has it).
        static NEXT_SEARCH: AtomicU64 = AtomicU64::new(1 << 63);
        let leaf_epoch = match eval.values_key() {
            Some(key) => key & !(1 << 63),
            None => NEXT_SEARCH.fetch_add(1, Ordering::Relaxed),
        };
        Shared {
            nodes: AtomicU64::new(0),
            leaf_epoch,
        }
    }
}

/// The result of one root direction in one iteration.
#[derive(Clone, Copy, Default)]
struct RootResult {
    value: f64,
    nodes: u64,
    tt_hits: u64,
    tt_used: u64,
    tt_capacity: u64,
    aborted: bool,
}

fn search_with<E: Evaluator>(
    tiles: &Tiles,
    eval: &E,
    settings: &SearchSettings,
    stop: &StopHandle,
    timing: Timing,
) -> SearchOutcome {
    let start = (timing == Timing::Measured || settings.run.time_budget.is_some()).then(Instant::now);
    let elapsed = || start.map_or(Duration::ZERO, |s| s.elapsed());
    let mut target = settings.depth.plies_for(tiles).clamp(1, MAX_DEPTH);
    if eval.afterstate_values() && target % 2 == 0 {
        // A learned value is the value of a board right after a move: leaves must be such boards (odd plies).
        target += 1;
    }
    // The budget is counted on its clock (wall or the thread's CPU time); `stop_at` is a wall-clock deadline.
    let clock = settings.run.budget_clock.for_threads(settings.run.threads);
    let budget_end = settings.run.time_budget.map(|b| Budget {
        clock,
        end: clock.now() + b,
    });
    let deadline = settings.run.stop_at;
    let spawn_layers = u64::from(target / 2);
    let fast = tiles.to_board().filter(|b| b.tile_sum() + 4 * spawn_layers < 65536);
    // The four moves: on the fast board when it holds the position (no 65536 can appear), else exactly.
    let fast_roots = fast.map(|board| {
        board
            .slide_all()
            .map(|(after, reward)| (after != board).then_some((after, u64::from(reward))))
    });
    let roots: [Option<(Tiles, u64)>; 4] = match fast_roots {
        Some(_) => [None; 4],
        None => Direction::ALL.map(|d| tiles.play(d)),
    };
    let rewards = match fast_roots {
        Some(moves) => moves.map(|m| m.map(|(_, reward)| reward)),
        None => roots.map(|r| r.map(|(_, reward)| reward)),
    };

    let mut outcome = SearchOutcome {
        values: [None; 4],
        rewards,
        best: None,
        stats: SearchStats {
            depth: 0,
            target_depth: target,
            nodes: 0,
            tt_hits: 0,
            tt_used: 0,
            tt_capacity: 0,
            elapsed: Duration::ZERO,
            truncated: false,
            fast_path: fast.is_some(),
        },
    };
    if outcome.game_over() {
        outcome.stats.elapsed = elapsed();
        return outcome;
    }

    if let (Some(moves), 1) = (fast_roots, target) {
        greedy(moves, eval, settings, stop, &mut outcome);
        outcome.best = choose(&outcome.values);
        outcome.stats.elapsed = elapsed();
        return outcome;
    }
    // The nodes a node budget lets this board's search plan for, each counted at its evaluator's cost.
    let node_allowance = settings
        .node_budget
        .map(|n| node_allowance(n, tiles, settings.late_weight, eval.node_cost()));
    // Iterative deepening over odd depths when there is a budget; the requested depth alone otherwise.
    let deepen = budget_end.is_some() || node_allowance.is_some();
    let shallower = (1..target).step_by(2).filter(|_| deepen);
    let shared = Shared::new(eval);
    // Under a budget: the time and nodes of the last two completed iterations, to foresee the next one.
    let mut pace = Pace::default();
    for depth in shallower.chain(std::iter::once(target)) {
        if deepen && outcome.stats.depth > 0 {
            // One legal direction: there is nothing to choose, and no reason to spend the budget on it.
            if outcome.values.iter().flatten().count() == 1 {
                break;
            }
            // The node budget: the next iteration must fit what is left of the allowance.
            if let (Some(allowance), Some(more)) = (node_allowance, pace.foresee_nodes()) {
                if outcome.stats.nodes + more > allowance {
                    break;
                }
            }
            // An iteration that cannot end within the time budget would be thrown away: stop before starting it.
            if let (Some(end), Some(t)) = (budget_end, pace.foresee_time()) {
                if end.clock.now() + t > end.end {
                    outcome.stats.truncated = true;
                    break;
                }
            }
        }
        let iteration_start = budget_end.map(|b| b.clock.now());
        let nodes_before = outcome.stats.nodes;
        let limits = (deadline, budget_end);
        let results = match fast_roots {
            Some(roots) => run_iteration(roots, depth, eval, settings, stop, limits, &shared),
            None => run_iteration(roots, depth, eval, settings, stop, limits, &shared),
        };
        let mut aborted = false;
        for r in results.iter().flatten() {
            outcome.stats.nodes += r.nodes;
            outcome.stats.tt_hits += r.tt_hits;
            outcome.stats.tt_used += r.tt_used;
            outcome.stats.tt_capacity = outcome.stats.tt_capacity.max(r.tt_capacity);
            aborted |= r.aborted;
        }
        outcome.stats.nodes += 4;
        if aborted {
            outcome.stats.truncated = true;
            break;
        }
        outcome.values = results.map(|r| r.map(|r| r.value));
        outcome.stats.depth = depth;
        if deepen {
            let took = match (iteration_start, budget_end) {
                (Some(t0), Some(b)) => b.clock.now().saturating_sub(t0),
                _ => Duration::ZERO,
            };
            pace.record(took, outcome.stats.nodes - nodes_before);
        }
    }
    outcome.best = choose(&outcome.values);
    outcome.stats.elapsed = elapsed();
    outcome
}

/// Where a search's time budget ends, on the clock that counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    pub clock: BudgetClock,
    pub end: Duration,
}

impl Budget {
    pub fn is_over(&self) -> bool {
        self.clock.now() >= self.end
    }
}

/// The cost of the last two completed iterations of a budgeted search (two plies apart), to foresee the next one.
#[derive(Clone, Copy, Default)]
struct Pace {
    last: Option<(Duration, u64)>,
    before: Option<(Duration, u64)>,
}

impl Pace {
    /// Growth in nodes from one iteration to the next (two plies deeper) when only one iteration is known: about
    /// what the learned profile's searches show from 3 to 5 and from 5 to 7 plies (docs/strength.md).
    const FIRST_GROWTH: f64 = 10.0;

    fn record(&mut self, time: Duration, nodes: u64) {
        self.before = self.last;
        self.last = Some((time, nodes.max(1)));
    }

    /// How much the next iteration will grow over the last: as the nodes grew from the one before (at least 2x, at
    /// most 40x: a shallow iteration's few nodes say little), `None` before any iteration.
    fn growth(&self) -> Option<f64> {
        let (_, nodes) = self.last?;
        Some(match self.before {
            Some((_, earlier)) if earlier >= 64 => (nodes as f64 / earlier as f64).clamp(2.0, 40.0),
            _ => Self::FIRST_GROWTH,
        })
    }

    /// The time the next iteration will take: the last one's, grown by [`Pace::growth`].
    fn foresee_time(&self) -> Option<Duration> {
        Some(self.last?.0.mul_f64(self.growth()?))
    }

    /// The nodes the next iteration will take: the last one's, grown by [`Pace::growth`].
    fn foresee_nodes(&self) -> Option<u64> {
        Some((self.last?.1 as f64 * self.growth()?) as u64)
    }
}

/// A 1-ply search on the fast board: each legal move's `reward_weight x reward + h(board after it)`, the four
/// boards evaluated together ([`Evaluator::evaluate_four`]), with no transposition table and no allocation. The
/// values and statistics are the ones the general recursion gives at 1 ply (which neither counts nodes below the
/// root nor polls the clock), bit for bit.
fn greedy<E: Evaluator>(
    moves: [Option<(Board, u64)>; 4],
    eval: &E,
    settings: &SearchSettings,
    stop: &StopHandle,
    outcome: &mut SearchOutcome,
) {
    let values = eval.evaluate_four(moves.map(|m| m.map(|(after, _)| (after, after.transpose()))));
    outcome.stats.nodes = 4;
    // The recursion would have taken a table for each root move, and reports its size.
    outcome.stats.tt_capacity = settings.run.tt_bits.map_or(0, |b| 1 << b.clamp(4, 30));
    if stop.is_stopped() {
        outcome.stats.truncated = true;
        return;
    }
    for (slot, (value, m)) in outcome.values.iter_mut().zip(values.into_iter().zip(moves)) {
        if let (Some(value), Some((_, reward))) = (value, m) {
            *slot = Some(settings.reward_weight * reward as f64 + value);
        }
    }
    outcome.stats.depth = 1;
}

/// A position's four moves on the fast board and their values at one ply, exactly as [`search`] values them at a
/// depth of 1 ply (`reward_weight x reward + h(board after it)`, `None` for an illegal move), without the rest of a
/// search's set-up: self-play's greedy games call it once per move. The caller checks that the board's tile sum is
/// below 65536 (no move can make a tile the fast board cannot hold), as [`search`] does before taking this path, and
/// passes the board's largest exponent, which it keeps from move to move (it picks a staged network's stage).
pub(crate) fn one_ply(
    board: Board,
    max_exponent: u8,
    evaluator: &AnyEvaluator,
    reward_weight: f64,
) -> ([(Board, u32); 4], [Option<f64>; 4]) {
    debug_assert_eq!(max_exponent, board.max_exponent());
    let children = board.leaf_children_rewarded();
    let legal = children.map(|(after, transposed, _, legal)| legal.then_some((after, transposed)));
    let h = match evaluator {
        AnyEvaluator::Classic(e) => e.evaluate_four(legal),
        AnyEvaluator::Tuned(e) => e.evaluate_four(legal),
        AnyEvaluator::NTuple(e) => e.evaluate_four_for_decision(max_exponent, legal),
    };
    let mut values = [None; 4];
    for (k, v) in h.iter().enumerate() {
        if let Some(v) = v {
            values[k] = Some(reward_weight * u64::from(children[k].2) as f64 + v);
        }
    }
    (children.map(|(after, _, reward, _)| (after, reward)), values)
}

/// The legal direction with the highest value; ties go to the first in [`Direction::ALL`].
pub fn choose(values: &[Option<f64>; 4]) -> Option<Direction> {
    let mut best: Option<(Direction, f64)> = None;
    for (d, v) in Direction::ALL.into_iter().zip(values) {
        if let Some(v) = *v {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((d, v));
            }
        }
    }
    best.map(|(d, _)| d)
}

/// Searches every legal root direction to `depth` plies, on up to `settings.run.threads` threads.
fn run_iteration<P: Position + Send + Sync, E: Evaluator>(
    roots: [Option<(P, u64)>; 4],
    depth: u32,
    eval: &E,
    settings: &SearchSettings,
    stop: &StopHandle,
    limits: (Option<Instant>, Option<Budget>),
    shared: &Shared,
) -> [Option<RootResult>; 4] {
    let mut legal = [0usize; 4];
    let mut count = 0;
    for i in (0..4).filter(|&i| roots[i].is_some()) {
        legal[count] = i;
        count += 1;
    }
    let legal = &legal[..count];
    let threads = settings.run.threads.clamp(1, legal.len().max(1));
    let one = |i: usize| -> RootResult {
        let (after, reward) = roots[i].expect("only legal roots are searched");
        let rng = Rng::new(derive_seed(settings.seed, i as u64));
        let node_limit = settings.run.node_limit.unwrap_or(u64::MAX);
        with_table(settings.run.tt_bits.filter(|_| after.tt_key().is_some()), |tt| {
            let capacity = tt.as_ref().map_or(0, |t| t.capacity());
            let mut tt = tt;
            if let Some(t) = tt.as_deref_mut() {
                t.new_generation();
                t.begin_leaf_epoch(shared.leaf_epoch);
            }
            let mut ctx = Ctx::new(eval, settings, rng, tt, stop.flag(), limits, node_limit, &shared.nodes);
            let value = settings.reward_weight * reward as f64 + ctx.chance_node(after, depth - 1, 1.0);
            RootResult {
                value,
                nodes: ctx.nodes,
                tt_hits: ctx.tt_hits,
                tt_used: ctx.tt.as_ref().map_or(0, |t| t.used()),
                tt_capacity: capacity,
                aborted: ctx.aborted || stop.is_stopped(),
            }
        })
    };
    let mut out = [None; 4];
    if threads == 1 {
        for &i in legal {
            let r = one(i);
            let aborted = r.aborted;
            out[i] = Some(r);
            if aborted {
                break;
            }
        }
        return out;
    }
    let next = AtomicUsize::new(0);
    let results: Vec<(usize, RootResult)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = legal.get(k) else { break };
                        mine.push((i, one(i)));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    for (i, r) in results {
        out[i] = Some(r);
    }
    // A worker that panicked leaves its roots empty: report the iteration as cut short rather than wrong.
    if legal.iter().any(|&i| out[i].is_none()) {
        for &i in legal {
            out[i].get_or_insert(RootResult {
                aborted: true,
                ..RootResult::default()
            });
        }
    }
    out
}
