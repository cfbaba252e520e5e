//! A training run: the shared tables, the threads that play and learn on them, checkpoints taken at game
//! boundaries, and the progress the run reports.
//!
//! With one thread and a seed a run is reproducible, and a run stopped at a game boundary (every checkpoint is
//! taken there) and resumed equals an uninterrupted one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::config::TrainConfig;
use super::episode::{train_game, Segment, TdRule};
use super::start::{Origin, StartState, MID_GAME_POOL};
use super::state::{read_state, split_state, state_head, GameResult, ResumeError, ThreadState, TrainState};
use super::weights::{accumulators_from_bytes, Tables};
use crate::engine::rng::{derive_seed, Rng};
use crate::engine::Board;
use crate::eval::ntuple::file::{self, NetFileError, NetInfo, TrainingSummary, ValueType};
use crate::eval::ntuple::index::Lookups;
use crate::eval::ntuple::{Network, Shape};
use crate::with_lookups;

/// A trainable network and the run training it.
pub struct Trainer {
    tables: Tables,
    config: TrainConfig,
    progress: Mutex<TrainState>,
    moves: AtomicU64,
    games_claimed: AtomicU64,
    /// Checkpoint hand-shake: workers park at a game boundary while `pause` is set.
    pause: AtomicBool,
    parked: Mutex<usize>,
    parked_cv: Condvar,
}

/// Thread `t`'s seed: the run's seed itself with one thread, so a one-thread run is the run of its seed.
fn thread_seed(seed: u64, t: usize, threads: usize) -> u64 {
    if threads <= 1 {
        seed
    } else {
        derive_seed(seed, t as u64)
    }
}

fn new_state(config: &TrainConfig) -> TrainState {
    let threads = (0..config.threads.max(1))
        .map(|t| ThreadState {
            rng: Rng::new(thread_seed(config.seed, t, config.threads)).state(),
            start: StartState::default(),
        })
        .collect();
    TrainState {
        games: 0,
        restarted_games: 0,
        moves: 0,
        seconds: 0.0,
        rolling: Default::default(),
        threads,
        commands: Vec::new(),
        earlier: TrainingSummary::default(),
    }
}

impl Trainer {
    /// A new network of `shape`, every board first worth `config.init_value`.
    pub fn new(shape: Shape, config: TrainConfig) -> Trainer {
        let init = config.init_value / (8 * shape.tuples.len()) as f32;
        let tables = Tables::new(shape, init, config.tc, config.alpha);
        let progress = new_state(&config);
        Trainer::assemble(tables, config, progress)
    }

    /// Continues from a weight file's network and trainer state (`state` empty: a shipped network).
    ///
    /// - A checkpoint continues where it stopped: its counters, rolling statistics, generators, pools and (with
    ///   `config.tc`) accumulators. Another thread count gives each thread a generator seeded from the run's seed
    ///   and the games so far, and shares the pooled positions out.
    /// - A shipped network (no trainer state) starts new counters, generators and pools with its weights as they
    ///   are; `earlier` (the file's training summary) is kept beside the new counters, so the files this run
    ///   writes count the training before it too ([`Trainer::summary`]); a checkpoint keeps its own record and
    ///   ignores `earlier`. The shipped network's accumulators start at E = 0 for every weight and
    ///   A = `config.coherence_prior` for every weight that is not 0 (a trained one): its rate `|E| / A` starts
    ///   at 0 and grows only as errors of one sign add up, as if the weight had already seen errors of that total
    ///   size without a trend, so the trained values are not thrown about while the accumulators fill (with
    ///   A = 0 every weight would start at the full rate: measured in docs/training.md). Weights still 0 were
    ///   never visited and start at the full rate. A checkpoint trained without temporal coherence gets the same
    ///   accumulators.
    /// - `config.tc = false` drops the accumulators a checkpoint has.
    pub fn resume(
        net: Network,
        state: &[u8],
        earlier: &TrainingSummary,
        config: TrainConfig,
    ) -> Result<Trainer, ResumeError> {
        if !net.shape().is_uniform() {
            return Err(ResumeError::MixedStages(net.shape().describe()));
        }
        let n = net.shape().weight_count();
        let (mut progress, coherence) = if state.is_empty() {
            let mut progress = new_state(&config);
            progress.earlier = earlier.clone();
            (progress, None)
        } else {
            let (json, accumulators) = split_state(state, n)?;
            let progress = read_state(json)?;
            (progress, (!accumulators.is_empty()).then_some(accumulators))
        };
        let coherence = match (config.tc, coherence) {
            (true, Some(bytes)) => Some(accumulators_from_bytes(bytes)),
            _ => None,
        };
        let needs_prior = config.tc && coherence.is_none();
        let threads = config.threads.max(1);
        if progress.threads.len() != threads {
            let mids: Vec<u64> = progress
                .threads
                .iter()
                .flat_map(|t| t.start.mid_game.boards.iter().copied())
                .collect();
            progress.threads = (0..threads)
                .map(|t| {
                    let mut start = StartState::default();
                    for &b in mids.iter().skip(t).step_by(threads).take(MID_GAME_POOL) {
                        start.mid_game.boards.push(b);
                    }
                    ThreadState {
                        rng: Rng::new(derive_seed(config.seed ^ progress.games, t as u64)).state(),
                        start,
                    }
                })
                .collect();
        }
        let mut tables = Tables::from_network(net, coherence, config.alpha);
        if needs_prior {
            tables.add_prior_accumulators(config.coherence_prior);
        }
        Ok(Trainer::assemble(tables, config, progress))
    }

    fn assemble(mut tables: Tables, config: TrainConfig, mut progress: TrainState) -> Trainer {
        tables.freeze_below(config.frozen_below);
        if let Some(stage) = config.frozen_from {
            tables.freeze_from(stage);
        }
        for t in &mut progress.threads {
            t.start.fit(&config.start);
        }
        Trainer {
            tables,
            moves: AtomicU64::new(progress.moves),
            games_claimed: AtomicU64::new(progress.games),
            progress: Mutex::new(progress),
            config,
            pause: AtomicBool::new(false),
            parked: Mutex::new(0),
            parked_cv: Condvar::new(),
        }
    }

    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// A snapshot of the counters (moves are counted live; games at the end of each game).
    pub fn progress(&self) -> TrainState {
        let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
        p.moves = self.moves.load(Ordering::Relaxed);
        p
    }

    /// The value of an afterstate under the current weights.
    pub fn value(&self, board: Board) -> f32 {
        self.tables.value(board)
    }

    /// The network as it stands (a copy of the weights, f32).
    pub fn network(&self) -> Network {
        self.tables.network()
    }

    /// The training summary of the network so far: the counters of this run and the runs it resumed, plus the
    /// training of a shipped file the first of them continued ([`TrainState::earlier`]); `command` joins every
    /// command line in order, the rolling mean is this run's.
    pub fn summary(&self) -> TrainingSummary {
        let p = self.progress();
        let earlier = &p.earlier;
        let commands: Vec<&str> = std::iter::once(earlier.command.as_str())
            .filter(|c| !c.is_empty())
            .chain(p.commands.iter().map(String::as_str))
            .collect();
        TrainingSummary {
            games: earlier.games + p.games,
            moves: earlier.moves + p.moves,
            rolling_mean_score: p.rolling.mean_score(),
            seconds: earlier.seconds + p.seconds,
            command: commands.join(" && "),
        }
    }

    /// The trainer state a checkpoint carries after the weights (see [`super::state`]), as one vector (tests; a
    /// checkpoint streams it instead: [`Trainer::save_checkpoint`]).
    pub fn state_bytes(&self) -> Vec<u8> {
        let mut out = state_head(&self.progress());
        // Writing to a vector cannot fail.
        let _ = self.tables.write_coherence(&mut out);
        out
    }

    /// Writes a checkpoint (f32 weights and the trainer state) straight from the tables, without a copy of them.
    /// Consistent when taken while the workers are parked or stopped.
    pub fn save_checkpoint(&self, path: &std::path::Path) -> Result<NetInfo, NetFileError> {
        let head = state_head(&self.progress());
        let coherence_bytes = 8 * self.tables.has_coherence() as u64 * self.tables.weight_count() as u64;
        self.save(path, ValueType::F32, head.len() as u64 + coherence_bytes, &mut |out| {
            out.write_all(&head)?;
            self.tables.write_coherence(out)
        })
    }

    /// Writes the network as a shipped weight file (f16, no trainer state), straight from the tables.
    pub fn export(&self, path: &std::path::Path) -> Result<NetInfo, NetFileError> {
        self.save(path, ValueType::F16, 0, &mut |_| Ok(()))
    }

    fn save(
        &self,
        path: &std::path::Path,
        value_type: ValueType,
        state_len: u64,
        write_state: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<NetInfo, NetFileError> {
        file::save_with(
            path,
            file::Contents {
                shape: self.tables.shape(),
                value_type,
                training: &self.summary(),
                weight: &|i| self.tables.weight(i),
                state_len,
                write_state,
            },
        )
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
    /// is called (it can call [`Trainer::save_checkpoint`] and [`Trainer::export`]).
    pub fn run(
        &self,
        stop: &AtomicBool,
        report_every: Duration,
        mut report: impl FnMut(&TrainState),
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
                    with_lookups!(self.tables.indexer(), l => self.worker(l, t, stop, done, deadline));
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
                    last_checkpoint = Instant::now();
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

    fn worker<L: Lookups>(
        &self,
        lookups: &L,
        t: usize,
        stop: &AtomicBool,
        done: &AtomicBool,
        deadline: Option<Instant>,
    ) {
        let mut state = self.progress.lock().unwrap_or_else(|e| e.into_inner()).threads[t].clone();
        let mut rng = Rng::from_state(state.rng);
        let mut path: Vec<(Board, u32)> = Vec::with_capacity(1 << 14);
        let mut decisions: Vec<u8> = Vec::with_capacity(1 << 14);
        let mut segments: Vec<Segment> = Vec::with_capacity(32);
        loop {
            self.park_if_asked();
            if done.load(Ordering::SeqCst)
                || stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d)
            {
                break;
            }
            // Where this game starts is decided before a game number is claimed: only new games are counted.
            let (board, origin) = state.start.next(&self.config.start, &mut rng);
            if origin == Origin::Fresh {
                let claimed = self.games_claimed.fetch_add(1, Ordering::SeqCst);
                if self.config.games.is_some_and(|g| claimed >= g) {
                    self.games_claimed.fetch_sub(1, Ordering::SeqCst);
                    break;
                }
            }
            segments.clear();
            train_game(
                lookups,
                &self.tables,
                TdRule {
                    lambda: self.config.lambda,
                    next_value: self.config.next_value,
                    stage_target: self.config.stage_target,
                },
                &self.config.start,
                &mut state.start,
                (board, origin),
                &mut rng,
                &mut path,
                &mut decisions,
                |s, _| segments.push(s),
            );
            let moves: u64 = segments.iter().map(|s| s.moves).sum();
            self.moves.fetch_add(moves, Ordering::Relaxed);
            state.rng = rng.state();
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            for s in &segments {
                if s.origin == Origin::Fresh {
                    p.games += 1;
                    p.rolling.push(
                        GameResult {
                            score: s.score,
                            max_exponent: s.max_exponent,
                        },
                        self.config.window,
                    );
                } else {
                    p.restarted_games += 1;
                }
            }
            p.threads[t] = state.clone();
        }
    }
}
