//! The default play's games as labelled positions for the reach-odds model ([`crate::eval::odds`]), and the check of
//! a model against games it was not fitted on.
//!
//! # Positions
//! A game's positions are the moves of its trace: the board after the chosen move and the search's value of that
//! move (the [`Situation`] the odds are read from), labelled with the largest tile the game ended with. Moves are
//! taken sparsely (each with probability 1 / `sample_every`, drawn from the game's seed): the positions of one game
//! share its outcome, so many games matter more than many positions per game. Only games that ended with no legal
//! move count (a game cut short has no outcome).
//!
//! # The check
//! [`Reliability`]: per tile, the positions whose board after the move lacks the tile, binned by predicted chance
//! (tenths): each bin's mean prediction against the rate at which its games made the tile; the calibration error
//! averaged over the bins (plain and weighted by count) and the Brier score against the base rate's (the rate of
//! the whole set, predicted for every position); then the same positions by the largest tile on their board
//! ([`Stage`]), each group's Brier score against its own rate's and its area under the ROC curve: whether the chances
//! tell the games that will make the tile from those that will not where the game is decided.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use super::{play_game, GameRecord, Progress, SimConfig};
use crate::engine::rng::{derive_seed, Rng};
use crate::eval::odds::{Chances, OddsModel, Situation, TILES};
use crate::search::StopHandle;

/// One position of a finished game, with the game's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelledPosition {
    /// The game's index in its run.
    pub game: u64,
    /// The game's seed: one per game, across runs (the runs of several seeds have games of the same index).
    pub game_seed: u64,
    /// The move's number in the game (0-based).
    pub move_number: u64,
    /// The board after the default play's move and the search's value of it.
    pub situation: Situation,
    /// The largest tile the game ended with.
    pub final_max: u32,
}

impl LabelledPosition {
    /// Whether the game made `tile`.
    pub fn reached(&self, tile: u32) -> bool {
        self.final_max >= tile
    }
}

/// The positions of a game that ended with no legal move (none for any other: it has no outcome), each move taken
/// with probability 1 / `sample_every` (1: every move), drawn from the game's seed.
pub fn positions_of(record: &GameRecord, sample_every: u64) -> Vec<LabelledPosition> {
    let Some(trace) = record.trace.as_ref().filter(|_| record.game_over) else {
        return Vec::new();
    };
    // Apart from the game's spawn stream (which is the game's seed itself).
    let mut rng = Rng::new(derive_seed(record.seed ^ 0x0DD5_0DD5_0DD5_0DD5, 0));
    let every = sample_every.max(1);
    trace
        .iter()
        .enumerate()
        .filter(|_| rng.below(every) == 0)
        .filter_map(|(k, step)| {
            let (after, _) = step.board.play(step.direction)?;
            Some(LabelledPosition {
                game: record.index,
                game_seed: record.seed,
                move_number: k as u64,
                situation: Situation {
                    after,
                    value: step.value,
                },
                final_max: record.max_tile,
            })
        })
        .collect()
}

/// Plays games `0 .. config.games` of `config`'s run (traced, whatever the config says; the traces are dropped once
/// sampled) on `config.threads` threads and returns their positions ([`positions_of`]) in game order, with the
/// number of games that ended with no legal move. `on_game` sees each game as it ends.
pub fn play_positions(
    config: &SimConfig,
    sample_every: u64,
    stop: &StopHandle,
    progress: &Progress,
    on_game: impl Fn(&GameRecord) + Sync,
) -> (Vec<LabelledPosition>, u64) {
    let config = SimConfig {
        trace: true,
        ..config.clone()
    };
    let next = AtomicU64::new(0);
    let done = Mutex::new((Vec::new(), 0u64));
    let worker = || loop {
        if stop.is_stopped() {
            break;
        }
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= config.games {
            break;
        }
        let record = play_game(&config, config.first_game.saturating_add(k), stop, progress);
        on_game(&record);
        let positions = positions_of(&record, sample_every);
        let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
        done.0.extend(positions);
        done.1 += u64::from(record.game_over);
    };
    let threads = config
        .threads
        .clamp(1, usize::try_from(config.games).unwrap_or(usize::MAX).max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(worker);
        }
    });
    let (mut positions, games) = done.into_inner().unwrap_or_else(|e| e.into_inner());
    positions.sort_by_key(|p| (p.game, p.game_seed, p.move_number));
    (positions, games)
}

/// The number of bins of predicted chance in a [`Reliability`] table (tenths).
pub const BINS: usize = 10;

/// One bin of a reliability table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bin {
    /// The bin's range of predicted chance: `[low, high)` (the last bin includes 1).
    pub low: f64,
    pub high: f64,
    /// Positions whose predicted chance fell in the bin.
    pub count: u64,
    /// Their mean predicted chance.
    pub predicted: f64,
    /// The share of them whose game made the tile.
    pub observed: f64,
}

/// How well one tile's chances agree with the outcomes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileReliability {
    pub tile: u32,
    /// Positions whose board after the move lacked the tile (the others have chance 1 and are not counted).
    pub positions: u64,
    /// Games those positions came from.
    pub games: u64,
    /// The share of those positions whose game made the tile: the base rate.
    pub base_rate: f64,
    /// The bins that hold positions.
    pub bins: Vec<Bin>,
    /// |predicted - observed| averaged over the bins that hold positions, in probability (0.03 = 3 points).
    pub calibration_error: f64,
    /// The same, each bin weighted by its count (the expected calibration error).
    pub weighted_calibration_error: f64,
    /// Mean squared error of the predicted chances.
    pub brier: f64,
    /// Mean squared error of the base rate predicted for every position.
    pub base_brier: f64,
    /// The same positions grouped by the largest tile on their board, from the smallest.
    pub stages: Vec<Stage>,
}

/// The positions of a [`TileReliability`] whose board's largest tile is `largest` (or, for the first group, at most
/// it): how well the chances separate their games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stage {
    /// The largest tile on the board; the first group holds every board whose largest tile is at most this.
    pub largest: u32,
    pub positions: u64,
    pub games: u64,
    /// The share of these positions whose game made the tile.
    pub base_rate: f64,
    /// Mean predicted chance.
    pub predicted: f64,
    /// Mean squared error of the predicted chances.
    pub brier: f64,
    /// Mean squared error of this group's own rate predicted for each of its positions (a predictor that knows the
    /// group's outcome rate in advance: what the chances must beat to tell its games apart).
    pub base_brier: f64,
    /// Area under the ROC curve: the chance that a position whose game made the tile was predicted higher than one
    /// whose game did not (ties half); 0.5 is no separation. `None` when every game of the group fared alike.
    pub auc: Option<f64>,
}

/// The check of a model on labelled positions: one [`TileReliability`] per tile of [`TILES`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reliability {
    pub positions: u64,
    pub games: u64,
    pub tiles: Vec<TileReliability>,
}

/// Checks `model`'s chances against the outcomes of `positions`.
pub fn reliability(model: &OddsModel, positions: &[LabelledPosition]) -> Reliability {
    let chances: Vec<Chances> = positions.iter().map(|p| model.chances(&p.situation)).collect();
    reliability_of(positions, &chances)
}

/// Checks chances against the outcomes of `positions`: `chances[k]` are the chances predicted for `positions[k]`
/// (by one model, or by models fitted without each position's run: a cross-fit).
pub fn reliability_of(positions: &[LabelledPosition], chances: &[Chances]) -> Reliability {
    debug_assert_eq!(positions.len(), chances.len());
    let tiles = TILES
        .iter()
        .enumerate()
        .map(|(i, &tile)| {
            let cases: Vec<(f64, bool, &LabelledPosition)> = positions
                .iter()
                .zip(chances)
                .filter(|(p, _)| p.situation.after.max_tile() < tile)
                .map(|(p, c)| (c[i].chance, p.reached(tile), p))
                .collect();
            tile_reliability(tile, &cases)
        })
        .collect();
    Reliability {
        positions: positions.len() as u64,
        games: distinct_games(positions.iter()),
        tiles,
    }
}

/// The games the positions come from, counted once each.
fn distinct_games<'a>(positions: impl Iterator<Item = &'a LabelledPosition>) -> u64 {
    let mut ids: Vec<u64> = positions.map(|p| p.game_seed).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() as u64
}

/// Of `cases` (predicted chance, outcome): the rate of their outcomes, the Brier score of their chances and that of
/// the rate predicted for each; all 0 without cases.
fn rate_and_briers(cases: &[(f64, bool, &LabelledPosition)]) -> (f64, f64, f64) {
    if cases.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let n = cases.len() as f64;
    let outcome = |hit: bool| if hit { 1.0 } else { 0.0 };
    let rate = cases.iter().map(|c| outcome(c.1)).sum::<f64>() / n;
    let brier = cases.iter().map(|c| (c.0 - outcome(c.1)).powi(2)).sum::<f64>() / n;
    let base_brier = cases.iter().map(|c| (rate - outcome(c.1)).powi(2)).sum::<f64>() / n;
    (rate, brier, base_brier)
}

/// The area under the ROC curve of `cases` (predicted chance, outcome): the Mann-Whitney statistic, ties counted half;
/// `None` without both outcomes.
fn auc(cases: &[(f64, bool, &LabelledPosition)]) -> Option<f64> {
    let mut sorted: Vec<(f64, bool)> = cases.iter().map(|c| (c.0, c.1)).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let hits = sorted.iter().filter(|c| c.1).count() as f64;
    let misses = sorted.len() as f64 - hits;
    if hits == 0.0 || misses == 0.0 {
        return None;
    }
    // Over each run of equal predictions: every hit in it beats the misses below the run and ties half of the run's.
    let (mut below, mut wins, mut i) = (0.0, 0.0, 0);
    while i < sorted.len() {
        let j = i + sorted[i..].iter().take_while(|c| c.0 == sorted[i].0).count();
        let run_hits = sorted[i..j].iter().filter(|c| c.1).count() as f64;
        let run_misses = (j - i) as f64 - run_hits;
        wins += run_hits * (below + 0.5 * run_misses);
        below += run_misses;
        i = j;
    }
    Some(wins / (hits * misses))
}

/// `cases` grouped by the largest tile on their board: the tile's quarter and below, its quarter, its half.
fn stages(tile: u32, cases: &[(f64, bool, &LabelledPosition)]) -> Vec<Stage> {
    let bounds = [tile / 8, tile / 4, tile / 2];
    bounds
        .iter()
        .enumerate()
        .filter_map(|(k, &largest)| {
            let group: Vec<_> = cases
                .iter()
                .filter(|c| {
                    let m = c.2.situation.after.max_tile();
                    if k == 0 {
                        m <= largest
                    } else {
                        m == largest
                    }
                })
                .copied()
                .collect();
            if group.is_empty() {
                return None;
            }
            let (base_rate, brier, base_brier) = rate_and_briers(&group);
            Some(Stage {
                largest,
                positions: group.len() as u64,
                games: distinct_games(group.iter().map(|c| c.2)),
                base_rate,
                predicted: group.iter().map(|c| c.0).sum::<f64>() / group.len() as f64,
                brier,
                base_brier,
                auc: auc(&group),
            })
        })
        .collect()
}

fn tile_reliability(tile: u32, cases: &[(f64, bool, &LabelledPosition)]) -> TileReliability {
    let (base_rate, brier, base_brier) = rate_and_briers(cases);
    let outcome = |hit: bool| if hit { 1.0 } else { 0.0 };
    let mut sums = [(0u64, 0.0f64, 0.0f64); BINS];
    for &(p, hit, _) in cases {
        let b = ((p * BINS as f64) as usize).min(BINS - 1);
        sums[b].0 += 1;
        sums[b].1 += p;
        sums[b].2 += outcome(hit);
    }
    let bins: Vec<Bin> = sums
        .iter()
        .enumerate()
        .filter(|(_, s)| s.0 > 0)
        .map(|(b, &(count, p, hits))| Bin {
            low: b as f64 / BINS as f64,
            high: (b + 1) as f64 / BINS as f64,
            count,
            predicted: p / count as f64,
            observed: hits / count as f64,
        })
        .collect();
    let gaps = bins.iter().map(|b| ((b.predicted - b.observed).abs(), b.count as f64));
    let (sum, weighted, counted) = gaps.fold((0.0, 0.0, 0.0), |(s, w, c), (gap, count)| {
        (s + gap, w + gap * count, c + count)
    });
    TileReliability {
        tile,
        positions: cases.len() as u64,
        games: distinct_games(cases.iter().map(|c| c.2)),
        base_rate,
        calibration_error: if bins.is_empty() { 0.0 } else { sum / bins.len() as f64 },
        weighted_calibration_error: if counted > 0.0 { weighted / counted } else { 0.0 },
        bins,
        brier,
        base_brier,
        stages: stages(tile, cases),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Tiles;

    fn position(game: u64, largest_exponent: u8) -> LabelledPosition {
        let mut exponents = [0u8; 16];
        exponents[0] = largest_exponent;
        LabelledPosition {
            game,
            game_seed: derive_seed(7, game),
            move_number: 0,
            situation: Situation {
                after: Tiles::from_exponents(exponents).expect("exponents below 32"),
                value: 0.0,
            },
            final_max: 0,
        }
    }

    #[test]
    fn the_area_under_the_roc_curve_counts_pairs_in_order_and_ties_half() {
        let p = position(0, 1);
        let cases = |xs: &[(f64, bool)]| xs.iter().map(|&(c, h)| (c, h, &p)).collect::<Vec<_>>();
        assert_eq!(
            auc(&cases(&[(0.2, false), (0.9, true), (0.1, false), (0.8, true)])),
            Some(1.0)
        );
        assert_eq!(auc(&cases(&[(0.2, true), (0.9, false)])), Some(0.0));
        assert_eq!(auc(&cases(&[(0.5, true), (0.5, false), (0.5, true)])), Some(0.5));
        // Hits 0.3 and 0.6, misses 0.3 and 0.5: (0.5 + 0) + (1 + 1) of 4 pairs.
        assert_eq!(
            auc(&cases(&[(0.3, true), (0.6, true), (0.3, false), (0.5, false)])),
            Some(0.625)
        );
        assert_eq!(auc(&cases(&[(0.3, true), (0.6, true)])), None);
    }

    #[test]
    fn stages_group_positions_by_their_largest_tile_and_score_each_against_its_own_rate() {
        // For 32768: boards up to 4096, holding 8192, holding 16384.
        let (small, mid, big) = (position(1, 11), position(2, 13), position(3, 14));
        let cases = vec![
            (0.5, true, &small),
            (0.5, false, &small),
            (0.7, true, &mid),
            (0.9, true, &big),
            (0.3, false, &big),
        ];
        let s = stages(32768, &cases);
        assert_eq!(
            s.iter().map(|g| (g.largest, g.positions, g.games)).collect::<Vec<_>>(),
            vec![(4096, 2, 1), (8192, 1, 1), (16384, 2, 1)]
        );
        assert_eq!(s[0].base_rate, 0.5);
        assert_eq!(s[0].brier, 0.25);
        assert_eq!(s[0].auc, Some(0.5));
        assert_eq!(s[1].auc, None);
        assert!((s[2].brier - (0.01 + 0.09) / 2.0).abs() < 1e-12);
        assert_eq!(s[2].base_brier, 0.25);
        assert_eq!(s[2].auc, Some(1.0));
    }
}
