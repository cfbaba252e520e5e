//! The validated settings of a training run: limits, learning rule, where games start, which stages learn.

use std::time::Duration;

use serde::{Deserialize, Serialize};

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
    /// Which value of the next afterstate the TD(lambda) target reads.
    pub next_value: NextValue,
    /// Which stage values the next afterstate where a game crosses into a later stage.
    #[serde(default)]
    pub stage_target: StageTarget,
    /// The learning rate, divided by the lookups per board.
    pub alpha: f32,
    /// Temporal coherence: each weight's own adaptive rate.
    pub tc: bool,
    /// Optimistic initialisation of a new network: the value every board starts with.
    pub init_value: f32,
    /// Where games start and what is replayed.
    pub start: StartPolicy,
    /// Games in the rolling statistics.
    pub window: usize,
    /// Stages below this one keep their weights (`0`: every stage learns). A frozen stage's boards are still played
    /// and valued; only their updates are skipped.
    pub frozen_below: usize,
    /// This stage and the later ones keep their weights (`None`: none); only the stages before it learn, and each
    /// game ends at its first decision in a frozen stage (nothing after it could learn).
    #[serde(default)]
    pub frozen_from: Option<usize>,
    /// How the temporal-coherence accumulators start when the run begins from a file that has none (a shipped
    /// network, or a checkpoint trained with `tc = false`): see [`TrainConfig::coherence_prior`].
    pub coherence_prior: f32,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            games: None,
            duration: None,
            seed: 1,
            threads: 1,
            lambda: 0.5,
            next_value: NextValue::default(),
            stage_target: StageTarget::default(),
            alpha: 1.0,
            tc: true,
            init_value: 0.0,
            start: StartPolicy::default(),
            window: 1000,
            frozen_below: 0,
            frozen_from: None,
            coherence_prior: DEFAULT_COHERENCE_PRIOR,
        }
    }
}

/// The default [`TrainConfig::coherence_prior`] (1e7). Measured from the network trained with halving restarts,
/// continued with its own recipe (docs/training.md, "Does a continued run learn?"): every prior from 1e7 to 1e9 kept
/// the rolling greedy mean within its noise, but with 1e9 (and 1e8) the trained weights barely moved (`net diff`: a
/// hundredth of a point in eight minutes), while with 1e7 the 3-ply 32768 rate rose from 13.7% to 19.7% within a
/// billion moves. (From a network trained with another start policy every prior below 1e9 lost strength at first:
/// changing the policy changes what the values mean.)
pub const DEFAULT_COHERENCE_PRIOR: f32 = 1e7;

impl TrainConfig {
    /// Every problem with the settings, each naming its setting (empty when the settings can run).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.games.is_none() && self.duration.is_none() {
            out.push("say when to stop: games, duration, or both".to_owned());
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            out.push(format!("lambda {} is not from 0 to 1", self.lambda));
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            out.push(format!("alpha {} is not a positive number", self.alpha));
        }
        if !self.init_value.is_finite() {
            out.push(format!("init value {} is not a finite number", self.init_value));
        }
        if !(self.coherence_prior >= 0.0 && self.coherence_prior.is_finite()) {
            out.push(format!("coherence prior {} is not a number >= 0", self.coherence_prior));
        }
        if self.threads == 0 {
            out.push("threads must be at least 1".to_owned());
        }
        if self.window == 0 {
            out.push("the rolling window must hold at least 1 game".to_owned());
        }
        if self.frozen_below > 0 && self.frozen_from.is_some() {
            out.push("freeze the early stages or the late ones, not both".to_owned());
        }
        if self.frozen_from == Some(0) {
            out.push("freezing from the first stage would freeze every stage".to_owned());
        }
        out.extend(self.start.problems());
        out
    }
}

/// Which value of the next afterstate s_{t+1} the backward TD(lambda) target of s_t reads,
/// `G_t = r_{t+1} + (1 - lambda) V(s_{t+1}) + lambda G_{t+1}`. Going backwards, s_{t+1} has just been updated
/// towards its own target G_{t+1}.
///
/// After the update is the default: from an empty 4x6 network, one thread each, same seed, it played greedy 32768 in
/// 1.49% of 10,000 games after 3.07 billion moves against 0.80% after 3.19 billion before it (mean 171,231 against
/// 160,251; docs/training.md, "The TD target").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextValue {
    /// Its value just before its own update (the rule the networks before the shipped one were trained with).
    BeforeUpdate,
    /// Its value just after its own update (the rule of the public trainers ziap/2048-tdl and TDL2048+). It has moved
    /// towards G_{t+1} by its weights' rates, so where those rates are high (weights seen rarely, as in the late game)
    /// the target leans further on the return.
    #[default]
    AfterUpdate,
}

/// Where a game crosses into a later stage (its afterstate s_t made the start tile of the stage its next decision is
/// made in), which stage values s_{t+1} in s_t's target `r_{t+1} + V(s_{t+1})`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StageTarget {
    /// s_t's own stage: a stage learns from its own values only (Yeh et al. 2016; the rule every network so far was
    /// trained with). Its values of the next stage's boards are learned from nothing else.
    #[default]
    Own,
    /// The stage of s_{t+1}'s decision, whose values were learned on those boards: with the later stage frozen, the
    /// earlier one learns to hand over the boards the later one values most.
    Next,
}

/// Where each training game begins, and what of it is played again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StartPolicy {
    /// Where a new game begins.
    pub source: StartSource,
    /// Replaying the end of every game (`None`: each game is played once).
    pub halving: Option<Halving>,
}

impl Default for StartPolicy {
    /// Halving restarts from fresh games: what measured strongest (docs/training.md).
    fn default() -> Self {
        StartPolicy {
            source: StartSource::Fresh,
            halving: Some(Halving::default()),
        }
    }
}

impl StartPolicy {
    fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(h) = &self.halving {
            if !(h.fraction > 0.0 && h.fraction < 1.0) {
                out.push(format!("halving fraction {} is not between 0 and 1", h.fraction));
            }
            if h.min_moves == 0 {
                out.push("halving needs at least 1 move left to restart from".to_owned());
            }
        }
        match &self.source {
            StartSource::Fresh => {}
            StartSource::MidGame { probability } => {
                if !(0.0..=1.0).contains(probability) {
                    out.push(format!("mid-game restart probability {probability} is not from 0 to 1"));
                }
            }
            StartSource::StagePools { keys, pool_size } => {
                if keys.is_empty() {
                    out.push("stage pools need at least one stage key".to_owned());
                }
                if *pool_size == 0 {
                    out.push("a stage pool must hold at least 1 position".to_owned());
                }
                for k in keys {
                    if k.tiles.is_empty() {
                        out.push("a stage key needs at least one tile".to_owned());
                    }
                }
            }
        }
        out
    }
}

/// Where a new training game begins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StartSource {
    /// Every game from a new board (two spawns on the empty board).
    Fresh,
    /// With `probability`, from the middle of one of the thread's earlier games (a pool of 1024 positions per thread).
    MidGame { probability: f64 },
    /// Carousel shaping (Jaśkowski 2016): for each key, the first afterstate of a game that satisfies it is kept in
    /// the key's pool (at most `pool_size` per thread, the oldest replaced); games start in turn from a new board and
    /// from each key's pool (a key whose pool is still empty gives its turn to a new board).
    StagePools { keys: Vec<StageKey>, pool_size: usize },
}

/// A stage a game enters: the board holds every one of these tiles (e.g. 16384, or 16384 and 8192).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageKey {
    /// Exponents that must all be on the board.
    pub tiles: Vec<u8>,
}

impl StageKey {
    /// Whether a board (exponents in nibbles) holds every tile of the key.
    #[inline]
    pub fn holds(&self, board: u64) -> bool {
        self.tiles.iter().all(|&e| {
            let mut x = board;
            (0..16).any(|_| {
                let hit = x & 15 == u64::from(e);
                x >>= 4;
                hit
            })
        })
    }

    /// The key's name: its tiles joined by `+`, e.g. `16384+8192`.
    pub fn name(&self) -> String {
        self.tiles
            .iter()
            .map(|&e| (1u32 << e).to_string())
            .collect::<Vec<_>>()
            .join("+")
    }
}

impl std::str::FromStr for StageKey {
    type Err = String;

    /// `16384` or `16384+8192`: tiles from 4 to 32768, each at most once.
    fn from_str(s: &str) -> Result<StageKey, String> {
        let mut tiles = Vec::new();
        for part in s.split('+') {
            let tile: u32 = part
                .trim()
                .parse()
                .map_err(|_| format!("stage key {s:?}: {part:?} is not a tile"))?;
            if !tile.is_power_of_two() || !(4..=32768).contains(&tile) {
                return Err(format!("stage key {s:?}: {tile} is not a tile from 4 to 32768"));
            }
            let e = tile.trailing_zeros() as u8;
            if tiles.contains(&e) {
                return Err(format!("stage key {s:?} names {tile} twice"));
            }
            tiles.push(e);
        }
        Ok(StageKey { tiles })
    }
}

/// Halving restarts: a finished game is played again from the move at `fraction` of its length (a new spawn on that
/// afterstate), then the part played again likewise, until fewer than `min_moves` moves are left; so the last
/// stretch of every game, where large tiles are made and games are lost, is trained about log2(length / min_moves)
/// times with fresh spawns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Halving {
    pub min_moves: usize,
    pub fraction: f64,
}

impl Default for Halving {
    fn default() -> Self {
        Halving {
            min_moves: 10,
            fraction: 0.5,
        }
    }
}
