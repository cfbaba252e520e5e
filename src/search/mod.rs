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
//! directions were searched first, and `threads` cannot change a result. Tables are fixed-size, allocated once per
//! thread and reused.
//!
//! # Time, limits and cancellation
//! Without a time budget the search runs the requested depth once. With a budget it deepens iteratively over odd
//! depths 1, 3, 5, ... up to the requested depth (which comes last, even or odd) and returns the deepest completed
//! iteration; an iteration cut short by the budget is discarded and the result says `truncated`. A [`StopHandle`]
//! (and the node limit) are polled every 4096 nodes, a few microseconds of work.
//!
//! # Exactness for huge tiles
//! The fast path runs on [`Board`](crate::engine::Board) (4-bit cells). It is used when every root tile fits a nibble and the tile sum plus
//! 4 per spawn layer stays below 65536, which proves no 65536 tile can appear inside the search. Otherwise the same
//! recursion runs on [`Tiles`] (exact up to 131072, no transposition table, tens of times slower).

mod expectimax;
mod params;
#[cfg(any(test, feature = "reference"))]
pub mod reference;
mod stop;
mod tt;

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use params::{auto_depth, Depth, ParseDepthError, ParseProfileError, Profile, SearchSettings, Terminal};
pub use params::{DEFAULT_TT_BITS, LEARNED_DEFAULT_DEPTH, MAX_DEPTH};
pub use stop::{StopHandle, StopOnDrop};
pub use tt::TranspositionTable;

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{Direction, Tiles};
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

thread_local! {
    /// This thread's transposition table, reused by every search that runs here.
    static TABLE: RefCell<Option<TranspositionTable>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's table of 2^bits entries (allocated on first use or when the size changes).
fn with_table<R>(bits: Option<u8>, f: impl FnOnce(Option<&mut TranspositionTable>) -> R) -> R {
    let Some(bits) = bits else { return f(None) };
    TABLE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|t| t.bits() != bits.clamp(4, 30)) {
            *slot = Some(TranspositionTable::new(bits));
        }
        f(slot.as_mut())
    })
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
    match evaluator {
        AnyEvaluator::Classic(e) => search_with(tiles, e, settings, stop),
        AnyEvaluator::Tuned(e) => search_with(tiles, e, settings, stop),
        AnyEvaluator::NTuple(e) => search_with(tiles, e, settings, stop),
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

fn search_with<E: Evaluator>(tiles: &Tiles, eval: &E, settings: &SearchSettings, stop: &StopHandle) -> SearchOutcome {
    let start = Instant::now();
    let mut target = settings.depth.plies_for(tiles).clamp(1, MAX_DEPTH);
    if eval.afterstate_values() && target % 2 == 0 {
        // A learned value is the value of a board right after a move: leaves must be such boards (odd plies).
        target += 1;
    }
    let budget_end = settings.time_budget.map(|b| start + b);
    let deadline = match (budget_end, settings.stop_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let roots: [Option<(Tiles, u64)>; 4] = Direction::ALL.map(|d| tiles.play(d));
    let rewards = roots.map(|r| r.map(|(_, reward)| reward));
    let spawn_layers = u64::from(target / 2);
    let fast = tiles.to_board().filter(|_| tiles.tile_sum() + 4 * spawn_layers < 65536);

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
        outcome.stats.elapsed = start.elapsed();
        return outcome;
    }

    let plan: Vec<u32> = match budget_end {
        Some(_) => (1..target).step_by(2).chain(std::iter::once(target)).collect(),
        None => vec![target],
    };
    let shared_nodes = AtomicU64::new(0);
    for depth in plan {
        let results = match fast {
            Some(board) => {
                let roots =
                    Direction::ALL.map(|d| board.play(d).ok().flatten().map(|m| (m.board, u64::from(m.reward))));
                run_iteration(roots, depth, eval, settings, stop, deadline, &shared_nodes)
            }
            None => run_iteration(roots, depth, eval, settings, stop, deadline, &shared_nodes),
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
    }
    outcome.best = choose(&outcome.values);
    outcome.stats.elapsed = start.elapsed();
    outcome
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

/// Searches every legal root direction to `depth` plies, on up to `settings.threads` threads.
fn run_iteration<P: Position + Send + Sync, E: Evaluator>(
    roots: [Option<(P, u64)>; 4],
    depth: u32,
    eval: &E,
    settings: &SearchSettings,
    stop: &StopHandle,
    deadline: Option<Instant>,
    shared_nodes: &AtomicU64,
) -> [Option<RootResult>; 4] {
    let legal: Vec<usize> = (0..4).filter(|&i| roots[i].is_some()).collect();
    let threads = settings.threads.clamp(1, legal.len().max(1));
    let one = |i: usize| -> RootResult {
        let (after, reward) = roots[i].expect("only legal roots are searched");
        let rng = Rng::new(derive_seed(settings.seed, i as u64));
        let node_limit = settings.node_limit.unwrap_or(u64::MAX);
        with_table(settings.tt_bits.filter(|_| after.tt_key().is_some()), |tt| {
            let capacity = tt.as_ref().map_or(0, |t| t.capacity());
            let mut tt = tt;
            if let Some(t) = tt.as_deref_mut() {
                t.new_generation();
            }
            let mut ctx = Ctx::new(eval, settings, rng, tt, stop.flag(), deadline, node_limit, shared_nodes);
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
        for &i in &legal {
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
        for &i in &legal {
            out[i].get_or_insert(RootResult {
                aborted: true,
                ..RootResult::default()
            });
        }
    }
    out
}
