//! Deterministic self-play: a seed and a search configuration in, game records and summary statistics out.
//!
//! # What a run is
//! Game `i` of a run seeded with `seed` has the seed [`derive_seed`]`(seed, i)`, and one [`Rng`] built from it draws
//! that game's spawns: the two tiles of a new game (unless a start board is given), then one tile after every move.
//! The search's own random choices (`sample_cells`) are seeded per move by [`move_seed`]`(game seed, move number)`,
//! so they never touch the spawn stream. Each move: search the board, play the chosen direction, spawn (on the fast
//! [`Board`](crate::engine::Board) whenever it holds the board, else on [`Tiles`]; both draw the spawn the same way,
//! so the game is the same). A game ends at game over, after `max_moves`, when its largest tile reaches
//! `until_tile`, or when the run stops (it is then reported `finished: false`, with the moves played so far). A run
//! can be played in chunks (`first_game`): the games of chunks `0..100` and `100..300` are the games of the whole run
//! `0..300`, as long as the search is bounded by depth.
//!
//! # Run-wide limits
//! The run stops when the [`StopHandle`] trips, when `total_moves` moves have been played over all its games, or at
//! the end of `time_limit` (the search of the move under way is cut at that instant). Games not started by then are
//! left out. The move limit is exact: no run plays more than `total_moves` moves, and on one thread the same config
//! always stops at the same move of the same game.
//!
//! Games run on `threads` plain threads that take game indices from a shared counter; every search inside is
//! single-threaded. Nothing a game does depends on which thread plays it or when, so the same seed and settings
//! give the same games on any number of threads — as long as the search is bounded by depth (a time budget makes
//! each move depend on the machine's speed).
//!
//! # Per-move cost
//! A greedy (1-ply) move is a few hundred nanoseconds, most of it the network's lookups: the search values the four
//! after-move boards together with their lookups prefetched, reads no clock ([`crate::search`]'s untimed entry),
//! and the game's loop keeps the board on the fast `Board` until its tile sum reaches 65536 (with the sum and the
//! largest exponent carried from move to move, so nothing is converted or recounted; a trace step and the record
//! convert it), allocates nothing but its trace (when asked for), touches the shared [`Progress`] counters every 64
//! moves and the milestones only when the largest tile grows.
//!
//! # Statistics
//! Scores, the max-tile histogram and the reach rates describe the **finished** games (a game cut short by the
//! stop handle has no final score); moves and timings count every move played. Reach rates carry a 95% Wilson score
//! interval (E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 1927), which
//! stays inside \[0, 1\] and is sensible at rates of 0 and 1, where the normal approximation is not.
//!
//! # Wire shape
//! The records derive [`serde::Serialize`] so that `advisor2048 simulate --json` and `POST /simulate` print the same
//! thing: boards as rows of tile values, directions as `up` / `down` / `left` / `right`, durations as `elapsed_ms`.

pub mod budget;
mod game_board;
pub mod odds;
mod record;
mod stats;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{Direction, Tiles};
use crate::eval::AnyEvaluator;
use crate::search::{choose, one_ply, search_untimed, thread_cpu_time, Depth, RunSettings, SearchSettings, StopHandle};
use budget::GameBudget;
use game_board::GameBoard;
use record::note_milestones;
pub use record::{GameRecord, Milestone, TraceStep, MILESTONES};
pub use stats::{median, wilson_interval, MergeError, ReachRate, SimReport, Summary};

/// Everything that defines a run. With a search bounded by depth and node budget (no time budget), the same config
/// gives the same games.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Number of games to play.
    pub games: u64,
    /// Index of the first game: the games played are `first_game .. first_game + games` of the run, so a long run
    /// can be played in chunks (by several processes, or across days) whose games together are the whole run's.
    pub first_game: u64,
    /// The run's seed; game `i` uses [`derive_seed`]`(seed, i)`.
    pub seed: u64,
    /// The board every game starts from; `None`: a new game (two spawns on the empty board, from the game's seed).
    pub start: Option<Tiles>,
    /// End a game after this many moves (it still counts as finished).
    pub max_moves: Option<u64>,
    /// End a game when its largest tile reaches this (it still counts as finished).
    pub until_tile: Option<u32>,
    /// Stop the run after this many moves over all its games (the games cut are `finished: false`).
    pub total_moves: Option<u64>,
    /// Stop the run this long after it started, cutting the search under way (the games cut are `finished: false`).
    pub time_limit: Option<Duration>,
    /// The search run before every move. Its `threads` is ignored (each search is single-threaded; the run is
    /// parallel across games) and its `seed` is replaced per move by [`move_seed`].
    pub settings: SearchSettings,
    pub evaluator: AnyEvaluator,
    /// Threads playing games in parallel (0 counts as 1; never more than the number of games).
    pub threads: usize,
    /// Record every move (board before it, direction, value, reward).
    pub trace: bool,
}

impl SimConfig {
    /// `games` new games from `seed` with `evaluator` and `settings`, on one thread, without a trace.
    ///
    /// # Examples
    /// ```
    /// use advisor2048::search::{Depth, Profile, SearchSettings};
    /// use advisor2048::sim::{simulate, SimConfig};
    /// let settings = SearchSettings { depth: Depth::Plies(1), ..Profile::Tuned.settings() };
    /// let evaluator = settings.profile.evaluator().default_evaluator().unwrap();
    /// let config = SimConfig { max_moves: Some(50), ..SimConfig::new(2, 7, settings, evaluator) };
    /// let report = simulate(&config, &Default::default(), |_| {});
    /// assert_eq!(report.games.len(), 2);
    /// assert!(report.games.iter().all(|g| g.finished && g.moves <= 50));
    /// ```
    pub fn new(games: u64, seed: u64, settings: SearchSettings, evaluator: AnyEvaluator) -> SimConfig {
        SimConfig {
            games,
            first_game: 0,
            seed,
            start: None,
            max_moves: None,
            until_tile: None,
            total_moves: None,
            time_limit: None,
            evaluator,
            settings,
            threads: 1,
            trace: false,
        }
    }
}

/// Live counters of a running simulation, for progress displays: read them from another thread at any time.
#[derive(Debug, Default)]
pub struct Progress {
    moves: AtomicU64,
    games_done: AtomicU64,
    best_tile: AtomicU32,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Moves played so far, in all games.
    pub fn moves(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }

    /// Games ended so far (finished or cut short).
    pub fn games_done(&self) -> u64 {
        self.games_done.load(Ordering::Relaxed)
    }

    /// The largest tile seen on any board so far.
    pub fn best_tile(&self) -> u32 {
        self.best_tile.load(Ordering::Relaxed)
    }
}

/// The seed of the search's random choices at move `move_number` (0-based) of the game seeded with `game_seed`.
///
/// Separate from the spawn stream, so a setting that draws (`sample_cells`) or not plays against the same spawns.
pub fn move_seed(game_seed: u64, move_number: u64) -> u64 {
    // A constant salt keeps these seeds apart from the game seeds derived from the same numbers.
    derive_seed(game_seed ^ 0x5EA2_C4E5_0F0F_7A11, move_number)
}

/// The opening board of a new game: two spawns on the empty board, drawn from `rng`.
pub fn new_game(rng: &mut Rng) -> Tiles {
    let first = Tiles::default().spawn(rng).expect("the empty board has room");
    first.spawn(rng).expect("a board with one tile has room")
}

/// Plays the run described by `config`; `on_game` sees each game as it ends (finished or cut short), from the
/// thread that played it. Tripping `stop`, or reaching `total_moves` or `time_limit`, ends the run early: games not
/// yet started are left out, running ones are returned with `finished: false`.
pub fn simulate(config: &SimConfig, stop: &StopHandle, on_game: impl Fn(&GameRecord) + Sync) -> SimReport {
    simulate_with_progress(config, stop, &Progress::new(), on_game)
}

/// [`simulate`], updating `progress` after every move.
pub fn simulate_with_progress(
    config: &SimConfig,
    stop: &StopHandle,
    progress: &Progress,
    on_game: impl Fn(&GameRecord) + Sync,
) -> SimReport {
    let start = Instant::now();
    let limits = RunLimits::new(config, start);
    let threads = config
        .threads
        .clamp(1, usize::try_from(config.games).unwrap_or(usize::MAX).max(1));
    let next = AtomicU64::new(0);
    let done = Mutex::new(Vec::with_capacity(config.games.min(4096) as usize));
    let worker = || loop {
        if stop.is_stopped() || limits.reached() {
            break;
        }
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= config.games {
            break;
        }
        let index = config.first_game.saturating_add(k);
        let record = play_in_run(config, index, stop, progress, &limits);
        progress.games_done.fetch_add(1, Ordering::Relaxed);
        on_game(&record);
        done.lock().unwrap_or_else(|e| e.into_inner()).push(record);
    };
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(worker);
            }
        });
    }
    let mut games = done.into_inner().unwrap_or_else(|e| e.into_inner());
    games.sort_by_key(|g| g.index);
    let summary = Summary::from_games(&games, start.elapsed());
    SimReport { games, summary }
}

/// The run-wide limits of [`SimConfig`], shared by the threads of one run.
struct RunLimits {
    deadline: Option<Instant>,
    total_moves: Option<u64>,
    /// Moves taken from `total_moves` so far: a game takes one before it searches, so the run never plays more.
    moves_taken: AtomicU64,
}

impl RunLimits {
    fn new(config: &SimConfig, start: Instant) -> RunLimits {
        RunLimits {
            deadline: config.time_limit.map(|limit| start + limit),
            total_moves: config.total_moves,
            moves_taken: AtomicU64::new(0),
        }
    }

    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True once the run must stop: the move limit is used up or the deadline has passed.
    fn reached(&self) -> bool {
        self.total_moves
            .is_some_and(|total| self.moves_taken.load(Ordering::Relaxed) >= total)
            || self.past_deadline()
    }

    /// Takes one move from the run's move limit; false when none is left (or the deadline has passed).
    fn take_move(&self) -> bool {
        if self.past_deadline() {
            return false;
        }
        match self.total_moves {
            Some(total) => self.moves_taken.fetch_add(1, Ordering::Relaxed) < total,
            None => true,
        }
    }
}

/// Plays game `index` of the run described by `config` on its own (its `games` and `threads` are not used; its
/// `total_moves` and `time_limit` apply to this game alone).
pub fn play_game(config: &SimConfig, index: u64, stop: &StopHandle, progress: &Progress) -> GameRecord {
    play_in_run(config, index, stop, progress, &RunLimits::new(config, Instant::now()))
}

/// Plays game `index` of a run whose limits are `limits`.
fn play_in_run(
    config: &SimConfig,
    index: u64,
    stop: &StopHandle,
    progress: &Progress,
    limits: &RunLimits,
) -> GameRecord {
    let started = Instant::now();
    let started_cpu = thread_cpu_time();
    let seed = derive_seed(config.seed, index);
    let mut rng = Rng::new(seed);
    let start_board = config.start.unwrap_or_else(|| new_game(&mut rng));
    let mut settings = SearchSettings {
        run: RunSettings {
            threads: 1,
            stop_at: limits.deadline,
            ..config.settings.run.clone()
        },
        ..config.settings.clone()
    };
    // A depth of one ply (as the search resolves it: 0 reads as 1) plays greedily through `one_ply`.
    let greedy = matches!(settings.depth, Depth::Plies(p) if p <= 1);
    let mut board = GameBoard::new(start_board);
    let mut score = 0u64;
    let mut moves = 0u64;
    let mut reached = Vec::new();
    note_milestones(&mut reached, board.max_tile(), 0);
    let mut max_tile = board.max_tile();
    progress.best_tile.fetch_max(max_tile, Ordering::Relaxed);
    let mut trace = config.trace.then(Vec::new);
    let mut depths = std::collections::BTreeMap::new();
    // Greedy moves on the fast board, added to `depths` at the end (a map entry per move costs as much as the move).
    let mut greedy_moves = 0u64;
    // A time budget is the game's mean time per move: each move gets an allowance (see `budget`).
    let late_weight = config.settings.late_weight;
    let mut game_budget = config.settings.run.time_budget.map(|b| GameBudget::new(b, late_weight));
    // Moves not yet added to `progress`: shared counters are touched every `PROGRESS_EVERY` moves, not every move.
    let mut unreported = 0u64;

    let finished = loop {
        if config.max_moves.is_some_and(|m| moves >= m) || config.until_tile.is_some_and(|t| max_tile >= t) {
            break true;
        }
        if stop.is_stopped() {
            break false;
        }
        // A board without a move ends its game whatever is left of the run's limits.
        if board.is_game_over() {
            break true;
        }
        if !limits.take_move() {
            break false;
        }
        let (direction, value, after, reward) = match board {
            // Greedy on the fast board: the four moves valued as a 1-ply search values them, without its set-up, and
            // the chosen move's board reused instead of played again.
            GameBoard::Fast(fast) if greedy => {
                let (children, values) =
                    one_ply(fast.board, fast.max_exponent, &config.evaluator, settings.reward_weight);
                if stop.is_stopped() || limits.past_deadline() {
                    break false;
                }
                let Some(d) = choose(&values) else { break true };
                let (moved, reward) = children[d.index()];
                let value = values[d.index()].expect("the chosen direction has a value");
                greedy_moves += 1;
                (d, value, fast.then_spawn(moved, &mut rng), u64::from(reward))
            }
            _ => {
                let tiles = board.tiles();
                settings.seed = move_seed(seed, moves);
                if let Some(game_budget) = &game_budget {
                    settings.run.time_budget = Some(game_budget.allowance(&tiles));
                }
                // The allowance is counted on the budget's clock (a game's searches run on this one thread).
                let clock = settings.run.budget_clock;
                let search_start = game_budget.is_some().then(|| clock.now());
                let outcome = search_untimed(&tiles, &config.evaluator, &settings, stop);
                if let (Some(game_budget), Some(t0)) = (game_budget.as_mut(), search_start) {
                    game_budget.spent(clock.now().saturating_sub(t0));
                }
                if stop.is_stopped() || limits.past_deadline() {
                    break false;
                }
                if outcome.game_over() {
                    break true;
                }
                *depths.entry(outcome.stats.depth.max(1)).or_insert(0) += 1;
                let (direction, value) = match outcome.best {
                    Some(d) => (d, outcome.values[d.index()].expect("the chosen direction has a value")),
                    None => fallback_move(&tiles, config, &settings, stop),
                };
                let (after, reward) = board.play_and_spawn(direction, &mut rng);
                (direction, value, after, reward)
            }
        };
        if let Some(trace) = trace.as_mut() {
            trace.push(TraceStep {
                board: board.tiles(),
                direction,
                value,
                reward,
            });
        }
        score += reward;
        moves += 1;
        // Read after the spawn: a spawned 2 or 4 can raise the largest tile only on a board of 2s, below every
        // milestone, so the milestones are those of the board after the move.
        if after.max_tile() > max_tile {
            max_tile = after.max_tile();
            note_milestones(&mut reached, max_tile, moves);
            progress.best_tile.fetch_max(max_tile, Ordering::Relaxed);
        }
        board = after;
        unreported += 1;
        if unreported == PROGRESS_EVERY {
            progress.moves.fetch_add(unreported, Ordering::Relaxed);
            unreported = 0;
        }
    };
    progress.moves.fetch_add(unreported, Ordering::Relaxed);
    if greedy_moves > 0 {
        *depths.entry(1).or_insert(0) += greedy_moves;
    }

    GameRecord {
        index,
        seed,
        score,
        max_tile: board.max_tile(),
        moves,
        reached,
        start_board,
        final_board: board.tiles(),
        finished,
        game_over: finished && board.is_game_over(),
        trace,
        elapsed: started.elapsed(),
        cpu: thread_cpu_time().saturating_sub(started_cpu),
        depths,
    }
}

/// Moves a game plays between two updates of the shared [`Progress`] counters.
const PROGRESS_EVERY: u64 = 64;

/// The move when a search completed no iteration although moves are legal (a time budget or node limit too small
/// for even one ply): a one-ply search without limits, which always completes.
fn fallback_move(board: &Tiles, config: &SimConfig, settings: &SearchSettings, stop: &StopHandle) -> (Direction, f64) {
    let one_ply = SearchSettings {
        depth: Depth::Plies(1),
        run: RunSettings {
            time_budget: None,
            node_limit: None,
            ..settings.run.clone()
        },
        ..settings.clone()
    };
    let outcome = search_untimed(board, &config.evaluator, &one_ply, stop);
    match outcome.best {
        Some(d) => (d, outcome.values[d.index()].unwrap_or(f64::NAN)),
        // Only reachable if `stop` tripped in between; the caller checks it before the next search.
        None => {
            let d = Direction::ALL
                .into_iter()
                .find(|&d| board.is_legal(d))
                .expect("the board has a legal move");
            (d, f64::NAN)
        }
    }
}
