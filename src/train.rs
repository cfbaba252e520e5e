//! Training an n-tuple network by temporal-difference learning on afterstates (the boards right after a move).
//!
//! # The method
//! - **Self-play, greedy on the network**: from each board the player takes the legal move with the largest
//!   `reward + V(after)` (ties: the first in up, down, left, right); a spawn follows. Moves that would create a
//!   65536 tile (which the 4-bit board cannot hold) count as illegal here.
//! - **TD(lambda) applied backwards at the end of each game** (Szubert and Jaśkowski 2014; the delayed update of
//!   Jaśkowski 2016). With s_0 .. s_{T-1} the game's afterstates and r_t the reward of the move that made s_t, the
//!   target of the last afterstate is 0 (the game ends after its spawn) and, going backwards,
//!   `G_t = r_{t+1} + (1 - lambda) V(s_{t+1}) + lambda G_{t+1}`, each V read just before that afterstate's own
//!   update. Every lookup of s_t moves its weight by `alpha / m x beta x (G_t - V(s_t))` (m = lookups per board).
//!   lambda = 0 is TD(0).
//! - **Temporal coherence** (Beal and Smith 1999; Jaśkowski 2016): each weight keeps E (the sum of its errors) and
//!   A (the sum of their magnitudes); its own rate is `beta = |E| / A` (1 while A = 0), so weights whose errors
//!   keep one sign keep learning fast and those that oscillate settle. `tc = false` uses beta = 1 (plain TD).
//! - **Optimistic initialisation** (Guei, Wu and Chen 2021): every weight starts at `init_value / m`, so every
//!   board is first worth `init_value` and unvisited features look attractive until they are tried.
//! - **Late-game restarts**: each thread keeps a pool of positions from the middle of its earlier games; a game
//!   starts from one of them with probability `restart_prob`, so large tiles are reached (and trained) more often.
//!   Restarted games are trained on but not counted in the rolling statistics (which describe games from the
//!   start).
//!
//! # Threads
//! Several threads play and update one shared network. Weights are `AtomicU32` holding `f32` bits, read and written
//! with relaxed ordering: an update can be lost when two threads touch the same weight at once (the lock-free
//! optimism of Jaśkowski 2016), but there is no data race and no `unsafe`. With one thread and a seed a run is
//! reproducible, and a run stopped at a game boundary (every checkpoint is taken there) and resumed equals an
//! uninterrupted one.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::rng::{derive_seed, Rng};
use crate::engine::{Board, OVERFLOW_FLAG};
use crate::eval::ntuple::file::TrainingSummary;
use crate::eval::ntuple::{huge_page_vec, prefetch, Features, Network, Shape, ShapeError, MAX_LOOKUPS};

/// Positions kept per thread for late-game restarts.
const POOL_SIZE: usize = 1024;
/// The tiles whose reach rates are tracked: 2048 .. 32768.
pub const REACH_EXPONENTS: [u8; 5] = [11, 12, 13, 14, 15];

/// Settings of a training run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Stop once this many games from the start have been played (counting games of earlier runs when resuming).
    pub games: Option<u64>,
    /// Stop after this much wall-clock time in this run.
    pub duration: Option<Duration>,
    pub seed: u64,
    pub threads: usize,
    /// TD(lambda); 0 is TD(0).
    pub lambda: f32,
    /// The learning rate, divided by the lookups per board.
    pub alpha: f32,
    /// Temporal coherence: each weight's own adaptive rate.
    pub tc: bool,
    /// Optimistic initialisation: the value every board starts with.
    pub init_value: f32,
    /// Probability that a game starts from a pooled mid-game position.
    pub restart_prob: f64,
    /// Games in the rolling statistics.
    pub window: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            games: None,
            duration: None,
            seed: 1,
            threads: 1,
            lambda: 0.5,
            alpha: 1.0,
            tc: true,
            init_value: 0.0,
            restart_prob: 0.25,
            window: 1000,
        }
    }
}

/// A game from the start, as the rolling statistics keep it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    pub score: u64,
    pub max_exponent: u8,
}

/// The rolling statistics over the last games from the start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rolling {
    pub games: VecDeque<GameResult>,
}

impl Rolling {
    fn push(&mut self, g: GameResult, window: usize) {
        self.games.push_back(g);
        while self.games.len() > window.max(1) {
            self.games.pop_front();
        }
    }

    /// Mean score of the window (0 when empty).
    pub fn mean_score(&self) -> f64 {
        if self.games.is_empty() {
            return 0.0;
        }
        self.games.iter().map(|g| g.score as f64).sum::<f64>() / self.games.len() as f64
    }

    /// Fraction of the window's games whose largest tile reached 2^`exponent`.
    pub fn reach_rate(&self, exponent: u8) -> f64 {
        if self.games.is_empty() {
            return 0.0;
        }
        self.games.iter().filter(|g| g.max_exponent >= exponent).count() as f64 / self.games.len() as f64
    }
}

/// What a thread carries from game to game (saved in checkpoints).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ThreadState {
    rng: [u64; 4],
    pool: Vec<u64>,
    pool_next: usize,
}

/// Counters and per-thread state of a run: everything besides the weights that a resumed run needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Games from the start, over all runs.
    pub games: u64,
    /// Games started from a pooled position, over all runs.
    pub restarted_games: u64,
    /// Moves trained on, over all runs.
    pub moves: u64,
    /// Seconds of training, over all runs.
    pub seconds: f64,
    pub rolling: Rolling,
    threads: Vec<ThreadState>,
    /// The command lines of the runs so far.
    pub commands: Vec<String>,
}

/// Why a checkpoint cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("the file has no trainer state (a shipped network, not a checkpoint): train a new network instead")]
    NoState,
    #[error("the trainer state is damaged: {0}")]
    Damaged(String),
}

/// The share of its temporal-coherence history a promoted stage keeps (2^-10, exact in f32): see [`promote`].
pub const PROMOTED_MEMORY: f32 = 1.0 / 1024.0;

/// Why a checkpoint cannot be promoted to more stages.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    #[error(transparent)]
    State(#[from] ResumeError),
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

/// Weight promotion (Jaśkowski 2016): a checkpoint's network and trainer state with further stages starting at the
/// exponents `add` (those that already start a stage change nothing). Each new stage begins as a copy of the weights
/// of the stage it splits off, so every board keeps its value until training tells the stages apart. Its
/// temporal-coherence accumulators are that stage's scaled by [`PROMOTED_MEMORY`]: each weight keeps its learning
/// rate (`|E| / A` does not change with the scale) but forgets most of its history, so errors particular to the new
/// stage change the rate quickly. (Empty accumulators, the full rate for every weight, upset the copied values:
/// in a trial from the shipped network the rolling greedy mean fell from 238,000 to 200,000 within 25,000 games.)
/// Training both stages on from here lets the player compare them at the boundary, and in a trial it learned to avoid
/// making 16384 (docs/training.md); a later stage is better trained on its own. The trainer's progress (games,
/// moves, rolling statistics, restart pools) carries over.
pub fn promote(net: &Network, state: &[u8], add: &[u8]) -> Result<(Network, Vec<u8>), PromoteError> {
    let old = net.shape();
    let mut stages = old.stages.clone();
    stages.extend_from_slice(add);
    stages.sort_unstable();
    stages.dedup();
    let shape = Shape::new(old.tuples.clone(), stages)?;
    let per_stage = old.weights_per_stage();
    let (_, coherence) = split_state(state, old.weight_count())?;
    let head = state.len() - coherence.len();
    let old_weights = net.weights();
    let mut weights = Vec::with_capacity(shape.weight_count());
    let mut new_state = Vec::with_capacity(head + 8 * shape.weight_count());
    new_state.extend_from_slice(&state[..head]);
    for &start in &shape.stages {
        let from = old.stage_of(start) * per_stage..(old.stage_of(start) + 1) * per_stage;
        weights.extend_from_slice(&old_weights[from.clone()]);
        let accumulators = &coherence[8 * from.start..8 * from.end];
        if old.stages.contains(&start) {
            new_state.extend_from_slice(accumulators);
        } else {
            new_state.extend(accumulators.chunks_exact(4).flat_map(|c| {
                let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * PROMOTED_MEMORY;
                v.to_le_bytes()
            }));
        }
    }
    let promoted = Network::from_weights(shape, weights).map_err(|e| ResumeError::Damaged(e.to_string()))?;
    Ok((promoted, new_state))
}

/// A checkpoint's trainer state split into its progress (JSON) and the temporal-coherence accumulators of `weights`
/// weights. The state is the JSON's length (u64, little-endian), the JSON, then E and A of every weight (f32 each).
fn split_state(state: &[u8], weights: usize) -> Result<(&[u8], &[u8]), ResumeError> {
    let (len, rest) = state.split_first_chunk::<8>().ok_or(ResumeError::NoState)?;
    let damaged = || ResumeError::Damaged(format!("{} bytes of state for {weights} weights", state.len()));
    let json_len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| damaged())?;
    if json_len > rest.len() {
        return Err(damaged());
    }
    let (json, coherence) = rest.split_at(json_len);
    if Some(coherence.len()) != weights.checked_mul(8) {
        return Err(damaged());
    }
    Ok((json, coherence))
}

/// The shared, trainable network: weights and temporal-coherence accumulators as atomics.
pub struct Trainer {
    features: Features,
    weights: Vec<AtomicU32>,
    /// E and A of every weight, side by side (one cache line for both).
    coherence: Vec<[AtomicU32; 2]>,
    config: TrainConfig,
    progress: Mutex<Progress>,
    moves: AtomicU64,
    games_claimed: AtomicU64,
    step: f32,
    /// Checkpoint hand-shake: workers park at a game boundary while `pause` is set.
    pause: AtomicBool,
    parked: Mutex<usize>,
    parked_cv: Condvar,
}

#[inline(always)]
fn load(a: &AtomicU32) -> f32 {
    f32::from_bits(a.load(Ordering::Relaxed))
}

#[inline(always)]
fn store(a: &AtomicU32, v: f32) {
    a.store(v.to_bits(), Ordering::Relaxed)
}

impl Trainer {
    /// A new network of `shape`, optimistically initialised.
    pub fn new(shape: Shape, config: TrainConfig) -> Trainer {
        let features = Features::new(shape);
        let m = features.lookups_per_board() as f32;
        let init = config.init_value / m;
        let n = features.shape().weight_count();
        let mut weights = huge_page_vec(n);
        weights.extend((0..n).map(|_| AtomicU32::new(init.to_bits())));
        let mut coherence = huge_page_vec(n);
        coherence.extend((0..n).map(|_| [AtomicU32::new(0), AtomicU32::new(0)]));
        let threads = (0..config.threads.max(1))
            .map(|t| ThreadState {
                rng: Rng::new(thread_seed(config.seed, t, config.threads)).state(),
                pool: Vec::new(),
                pool_next: 0,
            })
            .collect();
        let progress = Progress {
            games: 0,
            restarted_games: 0,
            moves: 0,
            seconds: 0.0,
            rolling: Rolling::default(),
            threads,
            commands: Vec::new(),
        };
        Trainer::assemble(features, weights, coherence, config, progress)
    }

    fn assemble(
        features: Features,
        weights: Vec<AtomicU32>,
        coherence: Vec<[AtomicU32; 2]>,
        config: TrainConfig,
        progress: Progress,
    ) -> Trainer {
        let step = config.alpha / features.lookups_per_board() as f32;
        Trainer {
            features,
            weights,
            coherence,
            moves: AtomicU64::new(progress.moves),
            games_claimed: AtomicU64::new(progress.games),
            progress: Mutex::new(progress),
            config,
            step,
            pause: AtomicBool::new(false),
            parked: Mutex::new(0),
            parked_cv: Condvar::new(),
        }
    }

    /// Continues from a checkpoint's network and trainer state. `config` sets this run's limits and learning
    /// settings; the thread count must be the checkpoint's.
    pub fn resume(net: &Network, state: &[u8], config: TrainConfig) -> Result<Trainer, ResumeError> {
        let n = net.weights().len();
        let (json, accumulators) = split_state(state, n)?;
        let mut progress: Progress = serde_json::from_slice(json).map_err(|e| ResumeError::Damaged(e.to_string()))?;
        let threads = config.threads.max(1);
        if progress.threads.len() != threads {
            // Another thread count: the run cannot be the one it would have been anyway (several threads are not
            // reproducible). Each thread gets a generator seeded from the run's seed and the games so far, and
            // the pooled positions are shared out.
            let pool: Vec<u64> = progress.threads.iter().flat_map(|t| t.pool.iter().copied()).collect();
            progress.threads = (0..threads)
                .map(|t| ThreadState {
                    rng: Rng::new(derive_seed(config.seed ^ progress.games, t as u64)).state(),
                    pool: pool.iter().copied().skip(t).step_by(threads).take(POOL_SIZE).collect(),
                    pool_next: 0,
                })
                .collect();
        }
        let mut weights = huge_page_vec(n);
        weights.extend(net.weights().iter().map(|w| AtomicU32::new(w.to_bits())));
        let mut coherence = huge_page_vec(n);
        coherence.extend(accumulators.chunks_exact(8).map(|c| {
            [
                AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                AtomicU32::new(u32::from_le_bytes([c[4], c[5], c[6], c[7]])),
            ]
        }));
        Ok(Trainer::assemble(
            net.features().clone(),
            weights,
            coherence,
            config,
            progress,
        ))
    }

    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// A snapshot of the counters (moves are counted live; games at the end of each game).
    pub fn progress(&self) -> Progress {
        let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
        p.moves = self.moves.load(Ordering::Relaxed);
        p
    }

    /// The value of an afterstate under the current weights.
    #[inline]
    pub fn value(&self, board: Board) -> f32 {
        let mut sum = 0.0f32;
        let w = &self.weights[..];
        self.features
            .for_each(board, board.transpose(), |_, i| sum += load(&w[i]));
        sum
    }

    /// The value of an afterstate whose lookups `idx` computed.
    #[inline(always)]
    fn value_of(&self, idx: &[u32]) -> f32 {
        let w = &self.weights[..];
        idx.iter().map(|&i| load(&w[i as usize])).sum()
    }

    /// Moves every weight of `board` towards reducing `error`.
    #[cfg(test)]
    fn update(&self, board: Board, error: f32) {
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = self.features.indices(board, board.transpose(), &mut idx);
        self.update_at(&idx[..n], error);
    }

    /// Moves the weights of the lookups `idx` towards reducing `error`.
    #[inline(always)]
    fn update_at(&self, idx: &[u32], error: f32) {
        let w = &self.weights[..];
        let step = self.step * error;
        if !self.config.tc {
            for &i in idx {
                let i = i as usize;
                store(&w[i], load(&w[i]) + step);
            }
            return;
        }
        let c = &self.coherence[..];
        let abs = error.abs();
        for &i in idx {
            let i = i as usize;
            let [e, a] = &c[i];
            let (ev, av) = (load(e), load(a));
            let beta = if av > 0.0 { ev.abs() / av } else { 1.0 };
            store(&w[i], load(&w[i]) + step * beta);
            store(e, ev + error);
            store(a, av + abs);
        }
    }

    /// The network as it stands (f32), with the training summary.
    pub fn network(&self) -> Network {
        let weights = self.weights.iter().map(load).collect();
        // The shape is the trainer's own, so the count always fits.
        Network::from_weights(self.features.shape().clone(), weights)
            .unwrap_or_else(|_| Network::filled(self.features.shape().clone(), 0.0))
    }

    /// The training summary of the run so far (`command` joins the runs' command lines).
    pub fn summary(&self) -> TrainingSummary {
        let p = self.progress();
        TrainingSummary {
            games: p.games,
            moves: p.moves,
            rolling_mean_score: p.rolling.mean_score(),
            seconds: p.seconds,
            command: p.commands.join(" && "),
        }
    }

    /// The trainer state a checkpoint carries after the weights (see [`Trainer::resume`]). Consistent when taken
    /// while the workers are parked or stopped.
    pub fn state_bytes(&self) -> Vec<u8> {
        let progress = self.progress();
        let json = serde_json::to_vec(&progress).unwrap_or_default();
        let mut out = Vec::with_capacity(8 + json.len() + 8 * self.coherence.len());
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        for [e, a] in &self.coherence {
            out.extend_from_slice(&e.load(Ordering::Relaxed).to_le_bytes());
            out.extend_from_slice(&a.load(Ordering::Relaxed).to_le_bytes());
        }
        out
    }

    /// Records this run's command line in the summary.
    pub fn add_command(&self, command: String) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .commands
            .push(command);
    }

    /// Trains until the game count, the duration or `stop` ends the run. Every `report_every`, `report` is called
    /// with the progress; every `checkpoint_every` (if any), the workers park at a game boundary and `checkpoint`
    /// is called (it can save [`Trainer::network`] and [`Trainer::state_bytes`]).
    pub fn run(
        &self,
        stop: &AtomicBool,
        report_every: Duration,
        mut report: impl FnMut(&Progress),
        checkpoint_every: Option<Duration>,
        mut checkpoint: impl FnMut(&Trainer),
    ) {
        let start = Instant::now();
        let base_seconds = self.progress().seconds;
        let deadline = self.config.duration.map(|d| start + d);
        let threads = self.config.threads.max(1);
        let done = AtomicBool::new(false);
        let finished = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..threads {
                let done = &done;
                let finished = &finished;
                s.spawn(move || {
                    self.worker(t, stop, done, deadline);
                    finished.fetch_add(1, Ordering::SeqCst);
                    // A parked-worker count that includes finished workers lets a checkpoint proceed.
                    let mut parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
                    *parked += 1;
                    self.parked_cv.notify_all();
                });
            }
            let mut last_report = Instant::now();
            let mut last_checkpoint = Instant::now();
            while finished.load(Ordering::SeqCst) < threads as u64 {
                std::thread::sleep(Duration::from_millis(20));
                self.set_seconds(base_seconds + start.elapsed().as_secs_f64());
                if last_report.elapsed() >= report_every {
                    last_report = Instant::now();
                    report(&self.progress());
                }
                if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                    done.store(true, Ordering::SeqCst);
                }
                if checkpoint_every.is_some_and(|every| last_checkpoint.elapsed() >= every) {
                    last_checkpoint = Instant::now();
                    self.pause.store(true, Ordering::SeqCst);
                    {
                        let mut parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
                        while *parked < threads {
                            parked = self.parked_cv.wait(parked).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    self.set_seconds(base_seconds + start.elapsed().as_secs_f64());
                    checkpoint(self);
                    let mut parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
                    *parked -= threads - finished.load(Ordering::SeqCst) as usize;
                    self.pause.store(false, Ordering::SeqCst);
                    self.parked_cv.notify_all();
                }
            }
        });
        self.set_seconds(base_seconds + start.elapsed().as_secs_f64());
        report(&self.progress());
    }

    fn set_seconds(&self, s: f64) {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).seconds = s;
    }

    /// Parks this worker while a checkpoint is taken.
    fn park_if_asked(&self) {
        if !self.pause.load(Ordering::SeqCst) {
            return;
        }
        let mut parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
        *parked += 1;
        self.parked_cv.notify_all();
        while self.pause.load(Ordering::SeqCst) {
            parked = self.parked_cv.wait(parked).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn worker(&self, t: usize, stop: &AtomicBool, done: &AtomicBool, deadline: Option<Instant>) {
        let mut state = self.progress.lock().unwrap_or_else(|e| e.into_inner()).threads[t].clone();
        let mut rng = Rng::from_state(state.rng);
        let mut path: Vec<(Board, u32)> = Vec::with_capacity(4096);
        loop {
            self.park_if_asked();
            if done.load(Ordering::SeqCst)
                || stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d)
            {
                break;
            }
            // Decide where this game starts before claiming a game number: restarted games are not counted.
            let restart = !state.pool.is_empty() && unit(&mut rng) < self.config.restart_prob;
            if !restart {
                let claimed = self.games_claimed.fetch_add(1, Ordering::SeqCst);
                if self.config.games.is_some_and(|g| claimed >= g) {
                    self.games_claimed.fetch_sub(1, Ordering::SeqCst);
                    break;
                }
            }
            let start = if restart {
                Board(state.pool[rng.below(state.pool.len() as u64) as usize])
            } else {
                Board::new_game(&mut rng)
            };
            let (score, max_exponent) = self.play_and_learn(start, &mut rng, &mut path);
            // The middle of this game joins the pool.
            if path.len() >= 2 {
                let mid = path[path.len() / 2].0 .0;
                if state.pool.len() < POOL_SIZE {
                    state.pool.push(mid);
                } else {
                    state.pool[state.pool_next] = mid;
                }
                state.pool_next = (state.pool_next + 1) % POOL_SIZE;
            }
            state.rng = rng.state();
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            if restart {
                p.restarted_games += 1;
            } else {
                p.games += 1;
                p.rolling.push(GameResult { score, max_exponent }, self.config.window);
            }
            p.threads[t] = state.clone();
        }
    }

    /// Plays one game greedily from `start` and learns from it; returns its score (rewards earned in this game) and
    /// largest exponent.
    fn play_and_learn(&self, start: Board, rng: &mut Rng, path: &mut Vec<(Board, u32)>) -> (u64, u8) {
        path.clear();
        let mut board = start;
        let mut score = 0u64;
        let mut idx = [[0u32; MAX_LOOKUPS]; 4];
        let mut counts = [0usize; 4];
        loop {
            let children = board.slide_all();
            // All lookups of the four children first, each slot's load started at once; then the sums.
            for (k, &(after, reward)) in children.iter().enumerate() {
                counts[k] = 0;
                if after != board && reward & OVERFLOW_FLAG == 0 {
                    counts[k] = self.features.indices(after, after.transpose(), &mut idx[k]);
                    for &i in &idx[k][..counts[k]] {
                        prefetch(&self.weights[i as usize]);
                    }
                }
            }
            let mut best: Option<(Board, u32)> = None;
            let mut best_value = f32::NEG_INFINITY;
            for (k, &(after, reward)) in children.iter().enumerate() {
                if counts[k] == 0 {
                    continue;
                }
                let v = reward as f32 + self.value_of(&idx[k][..counts[k]]);
                if v > best_value {
                    best_value = v;
                    best = Some((after, reward));
                }
            }
            let Some((after, reward)) = best else { break };
            path.push((after, reward));
            score += u64::from(reward);
            let Some(next) = after.spawn(rng) else { break };
            board = next;
        }
        self.moves.fetch_add(path.len() as u64, Ordering::Relaxed);
        let lambda = self.config.lambda;
        let mut g_next = 0.0f32;
        let mut v_next = 0.0f32;
        let mut r_next = 0.0f32;
        let tc = self.config.tc;
        let idx = &mut idx[0];
        for (k, &(s, reward)) in path.iter().enumerate().rev() {
            let n = self.features.indices(s, s.transpose(), idx);
            for &i in &idx[..n] {
                prefetch(&self.weights[i as usize]);
                if tc {
                    prefetch(&self.coherence[i as usize]);
                }
            }
            let v = self.value_of(&idx[..n]);
            let target = if k + 1 == path.len() {
                0.0
            } else {
                r_next + (1.0 - lambda) * v_next + lambda * g_next
            };
            self.update_at(&idx[..n], target - v);
            g_next = target;
            v_next = v;
            r_next = reward as f32;
        }
        (score, crate::eval::ntuple::max_exponent(board.0))
    }
}

/// A uniform draw in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Thread `t`'s seed: the run's seed itself with one thread, so a one-thread run is the run of its seed.
fn thread_seed(seed: u64, t: usize, threads: usize) -> u64 {
    if threads <= 1 {
        seed
    } else {
        derive_seed(seed, t as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_keeps_the_window_and_counts_reaches() {
        let mut r = Rolling::default();
        for s in 0..5 {
            r.push(
                GameResult {
                    score: s * 10,
                    max_exponent: 10 + s as u8,
                },
                3,
            );
        }
        assert_eq!(r.games.len(), 3);
        assert_eq!(r.mean_score(), 30.0);
        assert_eq!(r.reach_rate(11), 1.0);
        assert!((r.reach_rate(13) - 2.0 / 3.0).abs() < 1e-12);
    }

    /// One 4-tuple on the top row, stages from 0 and from 8192: small enough to build in a test.
    fn small_trainer() -> Trainer {
        let shape = Shape::new(vec![vec![0, 1, 2, 3]], vec![0, 13]).unwrap();
        let t = Trainer::new(shape, TrainConfig::default());
        // Different weights in the two stages: boards without and with an 8192, then one with a 16384.
        for (b, target) in [
            (Board(0x1234_0000_0000_0000), 500.0),
            (Board(0xd234_0000_0000_0000), 9000.0),
            (Board(0xe234_0000_0000_0001), 20000.0),
        ] {
            t.update(b, target);
        }
        t
    }

    #[test]
    fn promotion_copies_the_split_stage_and_keeps_its_rates() {
        let t = small_trainer();
        let net = t.network();
        let state = t.state_bytes();
        let (promoted, new_state) = promote(&net, &state, &[14, 13]).unwrap();
        assert_eq!(promoted.shape().stages, vec![0, 13, 14]);
        assert_eq!(promoted.shape().weight_count(), 3 * net.shape().weights_per_stage());
        let resumed = Trainer::resume(&promoted, &new_state, TrainConfig::default()).unwrap();
        // Every board keeps its value: below 8192, from 8192, and from 16384 (a copy of the 8192 stage).
        for b in [
            Board(0x1234_0000_0000_0000),
            Board(0xd234_0000_0000_0000),
            Board(0xe234_0000_0000_0001),
            Board(0xd234_0000_0000_000e),
        ] {
            assert_eq!(resumed.value(b), t.value(b), "{b:?}");
        }
        assert!(t.value(Board(0xe234_0000_0000_0001)) > t.value(Board(0x1234_0000_0000_0000)));
        // The new stage learns apart from the one it was copied from (its rates kept: this error is on one sign).
        let late = Board(0xe234_0000_0000_0001);
        let mid = Board(0xd234_0000_0000_0000);
        let (before_late, before_mid) = (resumed.value(late), resumed.value(mid));
        resumed.update(late, -before_late);
        assert_eq!(resumed.value(mid), before_mid);
        assert!(
            resumed.value(late) < 0.5 * before_late,
            "{} from {before_late}",
            resumed.value(late)
        );
        // The old stages keep their accumulators; the new one has those of the stage it split, scaled down.
        let per = 8 * net.shape().weights_per_stage();
        let head = new_state.len() - 3 * per;
        assert_eq!(&new_state[..head], &state[..head]);
        assert_eq!(&new_state[head..head + 2 * per], &state[head..]);
        let floats = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let split = floats(&state[head + per..]);
        assert!(split.iter().any(|&v| v != 0.0));
        let scaled: Vec<f32> = split.iter().map(|v| v * PROMOTED_MEMORY).collect();
        assert_eq!(floats(&new_state[head + 2 * per..]), scaled);
        // Too many stages, or a shipped network without trainer state, are refused.
        assert!(matches!(promote(&net, &state, &[2, 3, 4]), Err(PromoteError::Shape(_))));
        assert!(matches!(
            promote(&net, &[], &[14]),
            Err(PromoteError::State(ResumeError::NoState))
        ));
    }

    #[test]
    fn a_damaged_state_is_refused_with_its_reason() {
        let trainer = small_trainer();
        let net = trainer.network();
        let n = net.weights().len();
        assert!(Trainer::resume(&net, &trainer.state_bytes(), TrainConfig::default()).is_ok());
        let state = |json_len: u64, json: &[u8], accumulators: usize| {
            let mut s = json_len.to_le_bytes().to_vec();
            s.extend_from_slice(json);
            s.extend(std::iter::repeat_n(0u8, accumulators));
            s
        };
        let resume = |s: &[u8]| Trainer::resume(&net, s, TrainConfig::default()).err();
        assert!(matches!(resume(&[1, 2, 3]), Some(ResumeError::NoState)));
        // A length past the end (u64::MAX overflowed `8 + len` before), one weight's accumulators short or long,
        // and JSON that is not the trainer's progress.
        for bad in [
            state(u64::MAX, b"{}", 8 * n),
            state(3, b"{}", 8 * n),
            state(2, b"{}", 8 * n - 8),
            state(2, b"{}", 8 * n + 8),
        ] {
            match resume(&bad) {
                Some(ResumeError::Damaged(why)) => assert!(why.contains("bytes of state for"), "{why}"),
                other => panic!("{other:?}"),
            }
            assert!(matches!(
                promote(&net, &bad, &[14]),
                Err(PromoteError::State(ResumeError::Damaged(_)))
            ));
        }
        assert!(matches!(resume(&state(2, b"{}", 8 * n)), Some(ResumeError::Damaged(_))));
    }

    #[test]
    fn an_update_moves_the_value_towards_the_target() {
        let shape = Shape::named("4x6", vec![0]).unwrap();
        let t = Trainer::new(shape, TrainConfig::default());
        let b = Board(0x1200_0000_0000_0031);
        assert_eq!(t.value(b), 0.0);
        t.update(b, 100.0);
        // alpha = 1 with beta = 1 (every weight's errors so far have one sign): each of the 32 lookups moves its
        // weight by 100/32. A weight that k lookups share moves k times and counts k times: k^2 x 100/32.
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = t.features.indices(b, b.transpose(), &mut idx);
        let mut counts = std::collections::HashMap::new();
        for &i in &idx[..n] {
            *counts.entry(i).or_insert(0u32) += 1;
        }
        let expected: f32 = counts.values().map(|&k| (k * k) as f32 * 100.0 / 32.0).sum();
        assert!(expected > 100.0, "this board shares some weights between its lookups");
        assert!((t.value(b) - expected).abs() < 1e-3, "{} vs {expected}", t.value(b));
        // An opposite error moves the value back down.
        t.update(b, -100.0);
        assert!(t.value(b) < expected);
    }
}
