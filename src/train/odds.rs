//! Fitting a reach-odds model ([`crate::eval::odds`]) on positions of the default play's games, each labelled with
//! whether its game went on to make the tile.
//!
//! Per tile, on the positions whose board after the move lacks it: a logistic regression over the situation's
//! features ([`crate::eval::odds::FEATURES`]), fitted by Newton's method (iteratively reweighted least squares) with a
//! small ridge penalty; then a monotone calibration map from its score to the observed rate (isotonic regression,
//! pool-adjacent-violators, its blocks merged until each holds at least a 1/[`CALIBRATION_POINTS`] share of the
//! positions and positions of [`MIN_BLOCK_GAMES`] games), so that the chances agree with the outcomes where the logistic curve bends the wrong way.

use crate::eval::odds::{FitSummary, FittedFor, ModelError, OddsModel, Situation, TileModel, FEATURES, TILES};

/// One position: what the odds are read from, the game it comes from, and the largest tile its game ended with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Example {
    pub situation: Situation,
    /// The game's index in its run: positions of one game share its outcome.
    pub game: u64,
    pub final_max: u32,
}

/// The most points of a calibration map (each block holds at least this share of the tile's positions).
pub const CALIBRATION_POINTS: usize = 40;
/// Each block of a calibration map holds positions of at least this many games (or of every game, when fewer were
/// played): the positions of one game share its outcome, so a block drawn from a few games is their luck.
pub const MIN_BLOCK_GAMES: usize = 30;
/// The ridge penalty on the weights (but the bias), per position.
const RIDGE: f64 = 1e-6;
/// Newton steps at most.
const STEPS: usize = 50;

/// Fits one model per tile of [`TILES`] on `examples`; `fitted_for` and `fit` are recorded in the model.
pub fn fit(examples: &[Example], fitted_for: FittedFor, fit: FitSummary) -> Result<OddsModel, ModelError> {
    let tiles = TILES.iter().map(|&tile| fit_tile(tile, examples)).collect();
    OddsModel::new(fitted_for, fit, tiles)
}

/// One tile's model (a tile no position lacks, or that every or no position's game made, gets a flat map).
pub fn fit_tile(tile: u32, examples: &[Example]) -> TileModel {
    let exponent = tile.trailing_zeros() as u8;
    let lacking: Vec<&Example> = examples
        .iter()
        .filter(|e| e.situation.after.max_tile() < tile)
        .collect();
    let cases: Vec<([f64; FEATURES.len()], f64)> = lacking
        .iter()
        .map(|e| {
            (
                e.situation.features(exponent),
                if e.final_max >= tile { 1.0 } else { 0.0 },
            )
        })
        .collect();
    let weights = logistic(&cases);
    let mut scored: Vec<Scored> = cases
        .iter()
        .zip(&lacking)
        .map(|((x, y), e)| Scored {
            score: x.iter().zip(&weights).map(|(a, w)| a * w).sum(),
            outcome: *y,
            game: e.game,
        })
        .collect();
    scored.sort_by(|a, b| a.score.total_cmp(&b.score));
    TileModel {
        tile,
        weights: weights.to_vec(),
        calibration: isotonic(&scored, CALIBRATION_POINTS, MIN_BLOCK_GAMES),
    }
}

/// Logistic regression by Newton's method: the weights maximising the likelihood of `cases` (features, 0 or 1)
/// less a small ridge penalty. All-zero weights when there are no cases.
#[allow(clippy::needless_range_loop)] // matrix arithmetic reads best with its indices
fn logistic(cases: &[([f64; FEATURES.len()], f64)]) -> [f64; FEATURES.len()] {
    const K: usize = FEATURES.len();
    let mut w = [0.0; K];
    if cases.is_empty() {
        return w;
    }
    let n = cases.len() as f64;
    for _ in 0..STEPS {
        let mut grad = [0.0; K];
        let mut hess = [[0.0; K]; K];
        for (x, y) in cases {
            let z: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            let s = (p * (1.0 - p)).max(1e-12);
            for i in 0..K {
                grad[i] += (p - y) * x[i];
                for j in 0..=i {
                    hess[i][j] += s * x[i] * x[j];
                }
            }
        }
        for i in 0..K {
            for j in 0..i {
                hess[j][i] = hess[i][j];
            }
            // The bias is not penalised.
            if i > 0 {
                grad[i] += RIDGE * n * w[i];
                hess[i][i] += RIDGE * n;
            }
            hess[i][i] += 1e-9 * n;
        }
        let Some(step) = solve(hess, grad) else { break };
        let mut largest = 0.0f64;
        for i in 0..K {
            w[i] -= step[i];
            largest = largest.max(step[i].abs());
        }
        if largest < 1e-9 {
            break;
        }
    }
    if w.iter().all(|x| x.is_finite()) {
        w
    } else {
        [0.0; K]
    }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
#[allow(clippy::needless_range_loop)] // matrix arithmetic reads best with its indices
fn solve<const K: usize>(mut a: [[f64; K]; K], mut b: [f64; K]) -> Option<[f64; K]> {
    for col in 0..K {
        let pivot = (col..K).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..K {
            let f = a[row][col] / a[col][col];
            for k in col..K {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; K];
    for row in (0..K).rev() {
        let rest: f64 = (row + 1..K).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// A fitted position: its regression score, its outcome (0 or 1) and its game.
#[derive(Clone, Copy, Debug)]
struct Scored {
    score: f64,
    outcome: f64,
    game: u64,
}

/// A block of consecutive positions: sums of scores and outcomes, and its positions `sorted[start..end]`.
#[derive(Clone, Copy)]
struct Block {
    scores: f64,
    outcomes: f64,
    start: usize,
    end: usize,
}

impl Block {
    fn count(&self) -> f64 {
        (self.end - self.start) as f64
    }
    fn rate(&self) -> f64 {
        self.outcomes / self.count()
    }
    /// This block and the next one as one.
    fn join(self, next: Block) -> Block {
        Block {
            scores: self.scores + next.scores,
            outcomes: self.outcomes + next.outcomes,
            start: self.start,
            end: next.end,
        }
    }
}

/// The isotonic regression of the outcomes of `sorted` (increasing scores) on the scores, as at most about `points`
/// points (mean score, rate) with increasing scores and non-decreasing rates, each from positions of at least
/// `min_games` games (of every game, when fewer are there).
fn isotonic(sorted: &[Scored], points: usize, min_games: usize) -> Vec<(f64, f64)> {
    // Pool adjacent violators.
    let mut blocks: Vec<Block> = Vec::new();
    for (i, s) in sorted.iter().enumerate() {
        blocks.push(Block {
            scores: s.score,
            outcomes: s.outcome,
            start: i,
            end: i + 1,
        });
        while blocks.len() > 1 {
            let (b, a) = (blocks[blocks.len() - 1], blocks[blocks.len() - 2]);
            if a.rate() < b.rate() {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = a.join(b);
        }
    }
    // Merge neighbours until every block holds enough positions and games (merging keeps the rates non-decreasing).
    let least = sorted.len() as f64 / points.max(1) as f64;
    let all_games = sorted
        .iter()
        .map(|s| s.game)
        .collect::<std::collections::HashSet<_>>()
        .len();
    let min_games = min_games.min(all_games);
    let mut merged: Vec<Block> = Vec::new();
    let mut games_of_last = std::collections::HashSet::new();
    for b in blocks {
        match merged.last_mut() {
            Some(last) if last.count() < least || games_of_last.len() < min_games => *last = last.join(b),
            _ => {
                merged.push(b);
                games_of_last.clear();
            }
        }
        games_of_last.extend(sorted[b.start..b.end].iter().map(|s| s.game));
    }
    if merged.len() > 1 && (merged[merged.len() - 1].count() < least || games_of_last.len() < min_games) {
        let b = merged.pop().expect("two blocks");
        let last = merged.len() - 1;
        merged[last] = merged[last].join(b);
    }
    let mut out: Vec<(f64, f64)> = merged.iter().map(|b| (b.scores / b.count(), b.rate())).collect();
    // Equal mean scores (ties) cannot be told apart: keep the last.
    out.dedup_by(|b, a| {
        if b.0 <= a.0 {
            a.1 = a.1.max(b.1);
            true
        } else {
            false
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_solves_a_small_system() {
        let x = solve([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).expect("regular");
        assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12, "{x:?}");
        assert_eq!(solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]), None);
    }

    #[test]
    fn the_isotonic_map_is_monotone_and_keeps_the_mean() {
        let sorted: Vec<Scored> = (0..1000)
            .map(|i| Scored {
                score: i as f64,
                outcome: if (i * 7919) % 1000 < i { 1.0 } else { 0.0 },
                game: i % 100,
            })
            .collect();
        let map = isotonic(&sorted, 20, 1);
        assert!(map.len() <= 21 && map.len() > 3, "{}", map.len());
        assert!(map.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{map:?}");
        let mean: f64 = sorted.iter().map(|s| s.outcome).sum::<f64>() / 1000.0;
        assert!(map[0].1 < mean && map[map.len() - 1].1 > mean);
    }

    #[test]
    fn no_block_of_the_map_rests_on_a_few_games() {
        // 100 games, each with 10 positions spread over the scores, 30 of them made the tile; but the 50 highest
        // scores all come from two lucky games that made it. By positions alone they are a block of their own at 1.0.
        let mut sorted: Vec<Scored> = (0..1000)
            .map(|i| Scored {
                score: i as f64,
                outcome: if (i % 100) % 10 < 3 { 1.0 } else { 0.0 },
                game: i % 100,
            })
            .collect();
        sorted.extend((0..50).map(|i| Scored {
            score: 1000.0 + i as f64,
            outcome: 1.0,
            game: 200 + i % 2,
        }));
        let by_positions = isotonic(&sorted, 40, 1);
        assert_eq!(by_positions.last().map(|p| p.1), Some(1.0), "{by_positions:?}");
        let by_games = isotonic(&sorted, 40, 30);
        // Pooled with the positions of at least 28 more games below it (a 30% rate), the top block comes down.
        let top = by_games.last().map_or(1.0, |p| p.1);
        assert!(top < 0.9, "the top block still rests on two games: {by_games:?}");
        assert!(
            by_games.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{by_games:?}"
        );
    }
}
