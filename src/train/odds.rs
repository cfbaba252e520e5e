//! Fitting a reach-odds model ([`crate::eval::odds`]) on positions of the default play's games, each labelled with
//! whether its game went on to make the tile.
//!
//! Per tile, on the positions whose board after the move lacks it: a logistic regression over the situation's
//! features ([`crate::eval::odds::FEATURES`]), fitted by Newton's method (iteratively reweighted least squares) with a
//! small ridge penalty; then a monotone calibration map from its score to the observed rate (isotonic regression,
//! pool-adjacent-violators, its blocks merged until each holds at least a 1/[`CALIBRATION_POINTS`] share of the
//! positions and [`CALIBRATION_GAMES`] independent games by [`effective_games`]), so that the chances agree with the
//! outcomes where the logistic curve bends the wrong way. The map's rates stay within (0.5 / (g + 1), (g + 0.5) /
//! (g + 1)) for g fitted games: a tile that all of 900 games made gets 99.94%, not a certainty no finite number of
//! games can show (the positions of one game share its outcome, so the games, not the positions, are what a rate is
//! known from).

use crate::eval::odds::{FitSummary, FittedFor, ModelError, OddsModel, Situation, TileModel, FEATURES, TILES};

/// One position: what the odds are read from, the game it was taken from, and the largest tile that game ended with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Example {
    pub situation: Situation,
    /// The game it was taken from, one number per game (the game's seed, unique across runs): the positions of one
    /// game share its outcome.
    pub game: u64,
    pub final_max: u32,
}

/// The most points of a calibration map (each block holds at least this share of the tile's positions).
pub const CALIBRATION_POINTS: usize = 40;
/// The fewest independent games a point of a calibration map rests on ([`effective_games`]): a rate known from 40
/// games is known to within about 8 points (one standard error at a rate near 1/2).
pub const CALIBRATION_GAMES: f64 = 40.0;
/// The ridge penalty on the weights (but the bias), per position.
const RIDGE: f64 = 1e-6;
/// Newton steps at most.
const STEPS: usize = 50;

/// Fits one model per tile of [`TILES`] on `examples`; `fitted_for` and `fit` are recorded in the model.
pub fn fit(examples: &[Example], fitted_for: FittedFor, fit: FitSummary) -> Result<OddsModel, ModelError> {
    let tiles = TILES
        .iter()
        .map(|&tile| fit_tile(tile, examples, fit.total_games()))
        .collect();
    OddsModel::new(fitted_for, fit, tiles)
}

/// One tile's model (a tile no position lacks, or that every or no position's game made, gets a flat map), its
/// rates kept within what `games` fitted games can show.
pub fn fit_tile(tile: u32, examples: &[Example], games: u64) -> TileModel {
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
        calibration: bounded(isotonic(&scored, CALIBRATION_POINTS, CALIBRATION_GAMES), games),
    }
}

/// The calibration map with its rates kept within (0.5 / (g + 1), (g + 0.5) / (g + 1)) for `games` games g: no
/// finite number of games shows a chance of exactly 0 or 1.
fn bounded(mut map: Vec<(f64, f64)>, games: u64) -> Vec<(f64, f64)> {
    let g = games.max(1) as f64;
    let (low, high) = (0.5 / (g + 1.0), (g + 0.5) / (g + 1.0));
    for point in &mut map {
        point.1 = point.1.clamp(low, high);
    }
    map
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

/// A position scored by a tile's regression: its score, whether its game made the tile (1 or 0), and its game.
#[derive(Clone, Copy, Debug)]
struct Scored {
    score: f64,
    outcome: f64,
    game: u64,
}

/// How many independent games `counts` (positions per game, any order) are worth: (sum k)^2 / sum k^2, the design
/// effect's count. The positions of one game share its outcome, so n positions of one game are worth one game, and n
/// positions spread evenly over n games are worth n.
pub fn effective_games(counts: impl IntoIterator<Item = u64>) -> f64 {
    let (positions, squares) = counts.into_iter().fold((0, 0), |(s, q), k| (s + k, q + k * k));
    games_worth(positions, squares)
}

/// [`effective_games`] from the positions' count and the sum of each game's positions squared.
fn games_worth(positions: u64, squares: u64) -> f64 {
    if squares == 0 {
        0.0
    } else {
        (positions as f64).powi(2) / squares as f64
    }
}

/// Consecutive positions of a sorted list, `first..end`, with the sums of their scores and outcomes.
#[derive(Clone, Copy, Debug)]
struct Block {
    first: usize,
    end: usize,
    scores: f64,
    outcomes: f64,
}

impl Block {
    /// How many positions the block holds.
    fn positions(&self) -> u64 {
        (self.end - self.first) as u64
    }

    fn len(&self) -> f64 {
        self.positions() as f64
    }

    fn rate(&self) -> f64 {
        self.outcomes / self.len()
    }

    /// This block and `next`, the block that follows it.
    fn joined(self, next: Block) -> Block {
        Block {
            first: self.first,
            end: next.end,
            scores: self.scores + next.scores,
            outcomes: self.outcomes + next.outcomes,
        }
    }
}

/// The isotonic regression of the outcomes of `sorted` (increasing scores) on the scores, as at most about `points`
/// points (mean score, rate) with increasing scores and non-decreasing rates, each resting on at least `games`
/// independent games ([`effective_games`]) where the positions hold that many.
fn isotonic(sorted: &[Scored], points: usize, games: f64) -> Vec<(f64, f64)> {
    // Pool adjacent violators.
    let mut blocks: Vec<Block> = Vec::new();
    for (i, p) in sorted.iter().enumerate() {
        let mut block = Block {
            first: i,
            end: i + 1,
            scores: p.score,
            outcomes: p.outcome,
        };
        while let Some(&before) = blocks.last() {
            if before.rate() < block.rate() {
                break;
            }
            blocks.pop();
            block = before.joined(block);
        }
        blocks.push(block);
    }
    // Merge neighbours until every block holds enough positions and enough games (merging keeps the rates
    // non-decreasing); a last block short of either joins the one before.
    let least = sorted.len() as f64 / points.max(1) as f64;
    let mut merged: Vec<Block> = Vec::new();
    let mut open: Option<Block> = None;
    let mut per_game: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    // The open block's sum of squared positions per game, kept as positions join.
    let mut squares = 0u64;
    for b in blocks {
        let grown = open.map_or(b, |o| o.joined(b));
        for p in &sorted[b.first..b.end] {
            let k = per_game.entry(p.game).or_insert(0);
            squares += 2 * *k + 1;
            *k += 1;
        }
        if grown.len() >= least && games_worth(grown.positions(), squares) >= games {
            merged.push(grown);
            open = None;
            per_game.clear();
            squares = 0;
        } else {
            open = Some(grown);
        }
    }
    if let Some(o) = open {
        match merged.last_mut() {
            Some(last) => *last = last.joined(o),
            None => merged.push(o),
        }
    }
    let mut out: Vec<(f64, f64)> = merged.iter().map(|b| (b.scores / b.len(), b.rate())).collect();
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
                game: i,
            })
            .collect();
        let map = isotonic(&sorted, 20, CALIBRATION_GAMES);
        assert!(map.len() <= 21 && map.len() > 3, "{}", map.len());
        assert!(map.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{map:?}");
        let mean: f64 = sorted.iter().map(|s| s.outcome).sum::<f64>() / 1000.0;
        assert!(map[0].1 < mean && map[map.len() - 1].1 > mean);
    }

    #[test]
    fn a_tile_every_fitted_game_made_is_likely_not_certain() {
        let situation = Situation {
            after: crate::engine::Tiles::from_rows(&[[2, 4, 8, 16], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
                .expect("a board"),
            value: 1000.0,
        };
        let made = |final_max| Example {
            situation,
            game: 0,
            final_max,
        };
        let all: Vec<Example> = (0..300).map(|_| made(4096)).collect();
        let model = fit_tile(2048, &all, 150);
        assert_eq!(
            model.calibration.iter().map(|p| p.1).collect::<Vec<_>>(),
            vec![150.5 / 151.0]
        );
        let none = fit_tile(8192, &all, 150);
        assert_eq!(
            none.calibration.iter().map(|p| p.1).collect::<Vec<_>>(),
            vec![0.5 / 151.0]
        );
    }

    #[test]
    fn positions_of_one_game_are_worth_one_game() {
        assert_eq!(effective_games([500]), 1.0);
        assert_eq!(effective_games([1; 40]), 40.0);
        assert_eq!(effective_games([3, 3]), 2.0);
        // One game dominating: 10 + 1 + 1 positions are worth 144 / 102 games.
        assert!((effective_games([10, 1, 1]) - 144.0 / 102.0).abs() < 1e-12);
        assert_eq!(effective_games([]), 0.0);
    }

    #[test]
    fn a_calibration_point_rests_on_enough_games() {
        // The 300 lowest scores all come from one game that missed the tile: alone they would make a point at
        // rate 0 (300 positions are plenty), but they are worth one game, so they join the games above them.
        let one_game = (0..300).map(|i| Scored {
            score: i as f64,
            outcome: 0.0,
            game: 0,
        });
        let many = (300..1000).map(|i| Scored {
            score: i as f64,
            outcome: (i % 2) as f64,
            game: i,
        });
        let sorted: Vec<Scored> = one_game.chain(many).collect();
        let map = isotonic(&sorted, 20, CALIBRATION_GAMES);
        assert!(map[0].1 > 0.0, "a point from one game: {map:?}");
        // Without the rule, the one game would be a point of its own.
        let plain = isotonic(&sorted, 20, 0.0);
        assert_eq!(plain[0].1, 0.0, "{plain:?}");
    }
}
