//! Training an n-tuple network by temporal-difference learning on afterstates (the boards right after a move).
//!
//! - [`config`]: the validated settings of a run ([`TrainConfig`]), start policies ([`StartPolicy`]).
//! - [`state`]: counters, rolling statistics and per-thread state, and their one encoding in a checkpoint.
//! - [`weights`]: the shared tables (weights, temporal-coherence accumulators) and the update rule.
//! - [`start`]: where games begin: new boards, a mid-game pool, stage pools (carousel shaping).
//! - [`episode`]: one game: greedy play, the backward TD(lambda) update, halving restarts.
//! - [`run`]: the run: threads, checkpoints at game boundaries, progress ([`Trainer`]).
//! - [`stages`]: weight promotion (a network with more stages, each new one a copy of the stage it splits).
//! - [`average`]: the mean of networks of one shape, weight by weight (an ensemble at the cost of one network).
//! - [`compare`]: what training changed between two networks, by stage and by the largest tile of each pattern.
//! - [`odds`]: fitting a reach-odds model on labelled positions of the default play's games.
//!
//! # The method
//! Self-play, greedy on the network, learning by TD(lambda) applied backwards at the end of each game (Szubert and
//! Jaśkowski 2014; the delayed update of Jaśkowski 2016), with temporal coherence (Beal and Smith 1999; Jaśkowski
//! 2016: each weight's own rate `|E| / A`), optional optimistic initialisation (Guei, Wu and Chen 2021), and
//! **halving restarts** by default: every game is played again from the middle of what was just played until
//! fewer than ten moves are left, so the end of the game, where the large tiles are made and games are lost, is
//! trained about log2(length / 10) times as often as with single games. Restarted games are trained on but not
//! counted in the rolling statistics (which describe games from the start).

pub mod average;
pub mod compare;
pub mod config;
pub mod episode;
pub mod odds;
pub mod run;
pub mod stages;
pub mod start;
pub mod state;
pub mod weights;

pub use config::{
    Halving, NextValue, StageKey, StageTarget, StartPolicy, StartSource, TrainConfig, DEFAULT_COHERENCE_PRIOR,
};
pub use run::Trainer;
pub use stages::{promote, PromoteError, PROMOTED_MEMORY};
pub use state::{GameResult, ResumeError, Rolling, TrainState, REACH_EXPONENTS};
