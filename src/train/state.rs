//! The trainer's state besides the weights (counters, rolling statistics, each thread's generator and start pools)
//! and its one encoding in a checkpoint.
//!
//! # Encoding
//! A checkpoint's trainer state is the length of a JSON document (u64, little-endian), the document ([`TrainState`]),
//! then either nothing (trained without temporal coherence) or E and A of every weight (f32 little-endian each, E
//! first). A file without trainer state (a shipped network) starts a run with new state: see
//! [`super::Trainer::resume`] (which keeps its training summary in [`TrainState::earlier`]).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::start::StartState;
use crate::engine::MILESTONES;
use crate::eval::ntuple::file::TrainingSummary;

/// The tiles whose reach rates are tracked, as exponents: the milestones ([`MILESTONES`]) up to 32768 (2^11 .. 2^15),
/// the tiles a training run's rolling window can show.
pub const REACH_EXPONENTS: [u8; 5] = {
    let mut exponents = [0u8; 5];
    let mut i = 0;
    while i < exponents.len() {
        exponents[i] = MILESTONES[i].trailing_zeros() as u8;
        i += 1;
    }
    exponents
};

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
    pub(super) fn push(&mut self, g: GameResult, window: usize) {
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
pub struct ThreadState {
    pub rng: [u64; 4],
    #[serde(default)]
    pub start: StartState,
}

/// The trainer's state besides its tables: counters, rolling statistics and per-thread state, everything a resumed
/// run needs (a snapshot of it is what progress reports show).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// Games from the start, over all runs.
    pub games: u64,
    /// Games started elsewhere (a pooled position, or a halving restart), over all runs.
    pub restarted_games: u64,
    /// Moves trained on, over all runs.
    pub moves: u64,
    /// Seconds of training, over all runs.
    pub seconds: f64,
    pub rolling: Rolling,
    pub(super) threads: Vec<ThreadState>,
    /// The command lines of the runs so far.
    pub commands: Vec<String>,
    /// The training of the file the first run continued when that file had no trainer state (a shipped network):
    /// what the weights had learned before these counters started at 0 (all zero otherwise). The network's
    /// [`TrainingSummary`] adds it to these counters, so a file tells its whole training over every leg.
    #[serde(default)]
    pub earlier: TrainingSummary,
}

impl TrainState {
    /// The boards in stage key `k`'s pools, over all threads (afterstates, before their spawn).
    pub fn stage_pool(&self, k: usize) -> Vec<u64> {
        self.threads
            .iter()
            .filter_map(|t| t.start.stages.get(k))
            .flat_map(|p| p.boards.iter().copied())
            .collect()
    }

    /// Pooled positions per pool, summed over the threads: the mid-game pool, then each stage key's.
    pub fn pool_sizes(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for t in &self.threads {
            for (k, n) in t.start.sizes().into_iter().enumerate() {
                if out.len() <= k {
                    out.push(0);
                }
                out[k] += n;
            }
        }
        out
    }
}

/// Why a checkpoint's state cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("the trainer state is too short to hold its own length")]
    NoState,
    #[error("the trainer state is damaged: {0}")]
    Damaged(String),
    #[error(
        "a network whose stages read different tuples ({0}) cannot be trained: train a network whose stages read \
         the same tuples (net widen gives a narrower stage the wider one's tuples, at 0)"
    )]
    MixedStages(String),
}

/// A checkpoint's trainer state split into its progress (JSON) and the temporal-coherence accumulators of `weights`
/// weights (empty when it was trained without them).
pub fn split_state(state: &[u8], weights: usize) -> Result<(&[u8], &[u8]), ResumeError> {
    let (len, rest) = state.split_first_chunk::<8>().ok_or(ResumeError::NoState)?;
    let damaged = || ResumeError::Damaged(format!("{} bytes of state for {weights} weights", state.len()));
    let json_len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| damaged())?;
    if json_len > rest.len() {
        return Err(damaged());
    }
    let (json, coherence) = rest.split_at(json_len);
    if !coherence.is_empty() && Some(coherence.len()) != weights.checked_mul(8) {
        return Err(damaged());
    }
    Ok((json, coherence))
}

/// The head of an encoded state: the JSON's length and the JSON.
pub fn state_head(progress: &TrainState) -> Vec<u8> {
    let json = serde_json::to_vec(progress).unwrap_or_default();
    let mut out = Vec::with_capacity(8 + json.len());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out
}

/// The progress of an encoded state.
pub fn read_state(json: &[u8]) -> Result<TrainState, ResumeError> {
    serde_json::from_slice(json).map_err(|e| ResumeError::Damaged(e.to_string()))
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

    #[test]
    fn a_state_splits_into_progress_and_accumulators() {
        let mut s = 2u64.to_le_bytes().to_vec();
        s.extend_from_slice(b"{}");
        assert_eq!(split_state(&s, 10).unwrap(), (&b"{}"[..], &[][..]));
        s.extend(std::iter::repeat_n(0u8, 80));
        assert_eq!(split_state(&s, 10).unwrap().1.len(), 80);
        s.push(0);
        assert!(matches!(split_state(&s, 10), Err(ResumeError::Damaged(_))));
        assert!(matches!(split_state(&[1, 2], 10), Err(ResumeError::NoState)));
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(matches!(split_state(&huge, 10), Err(ResumeError::Damaged(_))));
    }
}
