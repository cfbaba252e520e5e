//! The statistics of a run: the [`Summary`] of its games (scores, the max-tile histogram, reach rates with 95% Wilson
//! intervals, speed) and the [`SimReport`] that carries both; merging the reports of a run played in chunks.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::record::{from_millis, millis, GameRecord, MILESTONES};

/// z for a two-sided 95% interval: the 0.975 quantile of the standard normal distribution.
const Z_95: f64 = 1.959_963_984_540_054;

/// A whole run: the games in index order and their summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub games: Vec<GameRecord>,
    pub summary: Summary,
}

/// Why reports cannot be merged into one run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MergeError {
    #[error("game {index} is in two reports as two different games (seeds {first_seed} and {second_seed}): the reports are not chunks of one run (--runs pools several runs)")]
    DifferentGames {
        index: u64,
        first_seed: u64,
        second_seed: u64,
    },
    #[error("game {index} is in two reports, finished both times with different results (scores {first_score} and {second_score}): were they played with different settings?")]
    DifferentResults {
        index: u64,
        first_score: u64,
        second_score: u64,
    },
}

impl SimReport {
    /// One report of the games of `parts`: the chunks of one run (played with `first_game`), in any order.
    ///
    /// Games are merged by index. The same index twice must be the same game (same seed and start board): an
    /// unfinished copy gives way to a finished one, or to a longer unfinished one (a chunk cut by its time limit,
    /// whose last game the next chunk played again); two finished copies must have the same score, moves and final
    /// board, and count once. The summary is computed again over the merged games; its `elapsed_ms` is the sum of
    /// the parts' (time spent, which is more than the wall-clock time if the parts ran at once), each part's time
    /// counted once: a part whose every game another part already holds at least as far played (a report merged
    /// from it, or the same report again) adds no time, so a run can grow by merging new chunks into its last
    /// merged report together with the old chunks.
    ///
    /// Nothing in a report says with which settings it was played: merging chunks of different settings is the
    /// caller's mistake to avoid (the same index played differently is caught).
    pub fn merge(parts: impl IntoIterator<Item = SimReport>) -> Result<SimReport, MergeError> {
        Self::merge_by(parts, |g| (g.index, 0))
    }

    /// One report of the games of several runs (different seeds) and their chunks, in any order: as
    /// [`SimReport::merge`], but a game is known by its index and its own seed, so game 5 of one run and game 5 of
    /// another are two games, and a game in two reports (a run's chunk beside the run merged from it) counts once.
    /// The games come in index order, the runs' games of one index by seed; the summary pools them all.
    pub fn pool(parts: impl IntoIterator<Item = SimReport>) -> Result<SimReport, MergeError> {
        Self::merge_by(parts, |g| (g.index, g.seed))
    }

    /// The merge, each game known by `key`.
    fn merge_by(
        parts: impl IntoIterator<Item = SimReport>,
        key: impl Fn(&GameRecord) -> (u64, u64),
    ) -> Result<SimReport, MergeError> {
        let parts: Vec<SimReport> = parts.into_iter().collect();
        let held: Vec<Held> = parts
            .iter()
            .map(|part| part.games.iter().map(|g| (key(g), (g.finished, g.moves))).collect())
            .collect();
        let elapsed = (0..parts.len())
            .filter(|&i| !held_elsewhere(&held, i))
            .map(|i| parts[i].summary.elapsed)
            .sum();
        let mut games: BTreeMap<(u64, u64), GameRecord> = BTreeMap::new();
        for part in parts {
            for game in part.games {
                match games.entry(key(&game)) {
                    Entry::Vacant(slot) => {
                        slot.insert(game);
                    }
                    Entry::Occupied(mut slot) => {
                        if let Some(better) = merged_copy(slot.get(), game)? {
                            slot.insert(better);
                        }
                    }
                }
            }
        }
        let games: Vec<GameRecord> = games.into_values().collect();
        let summary = Summary::from_games(&games, elapsed);
        Ok(SimReport { games, summary })
    }
}

/// The games of one part: each game's key (index, and its seed when runs are pooled) -> (finished, moves).
type Held = BTreeMap<(u64, u64), (bool, u64)>;

/// Whether another part holds every game of part `i`, so that part `i`'s time is already in that part's. `held[k]`
/// maps each game index of part `k` to (finished, moves). Of parts that hold each other (the same games), the first
/// one's time counts.
fn held_elsewhere(held: &[Held], i: usize) -> bool {
    (0..held.len()).any(|j| j != i && holds(&held[j], &held[i]) && (j < i || !holds(&held[i], &held[j])))
}

/// Whether `outer` has every game of `inner`, each at least as far played: (finished, moves) compared in that order
/// (two finished copies of a game that differ are refused by the merge anyway).
fn holds(outer: &Held, inner: &Held) -> bool {
    inner
        .iter()
        .all(|(index, played)| outer.get(index).is_some_and(|outer_played| outer_played >= played))
}

/// Which of two copies of one game index a merge keeps: `Some(new)` to replace `old`, `None` to keep it.
fn merged_copy(old: &GameRecord, new: GameRecord) -> Result<Option<GameRecord>, MergeError> {
    if old.seed != new.seed || old.start_board != new.start_board {
        return Err(MergeError::DifferentGames {
            index: old.index,
            first_seed: old.seed,
            second_seed: new.seed,
        });
    }
    Ok(match (old.finished, new.finished) {
        (true, true) => {
            if (old.score, old.moves, old.final_board) != (new.score, new.moves, new.final_board) {
                return Err(MergeError::DifferentResults {
                    index: old.index,
                    first_score: old.score,
                    second_score: new.score,
                });
            }
            None
        }
        (false, true) => Some(new),
        (true, false) => None,
        (false, false) => (new.moves > old.moves).then_some(new),
    })
}

/// Summary statistics of a run. Score statistics, the histogram and the reach rates cover the finished games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Games played or started (finished and unfinished).
    pub games: u64,
    /// Games that ended by game over or `max_moves` (not cut by the stop handle).
    pub finished: u64,
    /// Mean, median, least and greatest score of the finished games (`None` when none finished).
    pub mean_score: Option<f64>,
    pub median_score: Option<f64>,
    pub min_score: Option<u64>,
    pub max_score: Option<u64>,
    /// Number of finished games by largest tile (tile -> games).
    pub max_tile_histogram: BTreeMap<u32, u64>,
    /// For each of [`MILESTONES`]: the share of finished games whose largest tile reached it.
    pub reach: Vec<ReachRate>,
    /// Moves played in all games, unfinished ones included.
    pub total_moves: u64,
    /// `total_moves` per second of the run's wall-clock time (all threads together).
    pub moves_per_second: f64,
    /// Mean time per move on one thread: the games' time summed, over `total_moves` (0 when no move was played).
    pub ms_per_move: f64,
    /// Mean CPU time per move: the games' CPU time (`cpu_ms`) summed, over `total_moves`. The cost of a move
    /// whatever else the machine was doing; a time budget counted on the CPU clock (`budget_clock: cpu`) holds
    /// this one to the budget.
    #[serde(default)]
    pub cpu_ms_per_move: f64,
    /// Wall-clock time of the run (of a merged report: the time of its parts, see [`SimReport::merge`]).
    #[serde(rename = "elapsed_ms", serialize_with = "millis", deserialize_with = "from_millis")]
    pub elapsed: Duration,
    /// Moves of all games by the search depth they reached (plies -> moves): how a time budget spent its time.
    #[serde(default)]
    pub depth_histogram: BTreeMap<u32, u64>,
}

/// How many of `games` reached `tile`, with a 95% Wilson interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReachRate {
    pub tile: u32,
    pub reached: u64,
    pub games: u64,
    /// `reached / games` (0 when there are no games).
    pub rate: f64,
    /// The 95% Wilson score interval of the rate (\[0, 1\] when there are no games).
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Summary {
    /// The summary of `games` (in any order) played in `elapsed` of wall-clock time.
    pub fn from_games(games: &[GameRecord], elapsed: Duration) -> Summary {
        let finished: Vec<&GameRecord> = games.iter().filter(|g| g.finished).collect();
        let mut scores: Vec<u64> = finished.iter().map(|g| g.score).collect();
        scores.sort_unstable();
        let n = scores.len() as u64;
        let mut max_tile_histogram = BTreeMap::new();
        for g in &finished {
            *max_tile_histogram.entry(g.max_tile).or_insert(0) += 1;
        }
        let reach = MILESTONES
            .iter()
            .map(|&tile| ReachRate::new(tile, finished.iter().filter(|g| g.reached(tile)).count() as u64, n))
            .collect();
        let total_moves: u64 = games.iter().map(|g| g.moves).sum();
        let game_time: Duration = games.iter().map(|g| g.elapsed).sum();
        let cpu_time: Duration = games.iter().map(|g| g.cpu).sum();
        let mut depth_histogram = BTreeMap::new();
        for (&depth, &moves) in games.iter().flat_map(|g| &g.depths) {
            *depth_histogram.entry(depth).or_insert(0) += moves;
        }
        let seconds = elapsed.as_secs_f64();
        Summary {
            games: games.len() as u64,
            finished: n,
            mean_score: (n > 0).then(|| scores.iter().map(|&s| s as f64).sum::<f64>() / n as f64),
            median_score: median(&scores),
            min_score: scores.first().copied(),
            max_score: scores.last().copied(),
            max_tile_histogram,
            reach,
            total_moves,
            moves_per_second: if seconds > 0.0 {
                total_moves as f64 / seconds
            } else {
                0.0
            },
            ms_per_move: if total_moves > 0 {
                game_time.as_secs_f64() * 1000.0 / total_moves as f64
            } else {
                0.0
            },
            cpu_ms_per_move: if total_moves > 0 {
                cpu_time.as_secs_f64() * 1000.0 / total_moves as f64
            } else {
                0.0
            },
            elapsed,
            depth_histogram,
        }
    }

    /// The reach rate of `tile`, if it is one of [`MILESTONES`].
    pub fn reach_rate(&self, tile: u32) -> Option<&ReachRate> {
        self.reach.iter().find(|r| r.tile == tile)
    }
}

impl ReachRate {
    /// `reached` of `games`, with its Wilson interval.
    pub fn new(tile: u32, reached: u64, games: u64) -> ReachRate {
        let (ci_low, ci_high) = wilson_interval(reached, games);
        ReachRate {
            tile,
            reached,
            games,
            rate: if games > 0 { reached as f64 / games as f64 } else { 0.0 },
            ci_low,
            ci_high,
        }
    }
}

/// The median of sorted values: the middle one, or the mean of the two middle ones; `None` when empty.
///
/// # Examples
/// ```
/// use advisor2048::sim::median;
/// assert_eq!(median(&[1, 3, 10, 20]), Some(6.5));
/// assert_eq!(median(&[]), None);
/// ```
pub fn median(sorted: &[u64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2] as f64),
        _ => Some((sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0),
    }
}

/// The 95% Wilson score interval of a proportion of `successes` in `trials`; (0, 1) when there are no trials.
///
/// With p = s / n and z = 1.96: `(p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n)`.
///
/// # Examples
/// ```
/// use advisor2048::sim::wilson_interval;
/// let (low, high) = wilson_interval(5, 10);
/// assert!((low - 0.2366).abs() < 1e-4 && (high - 0.7634).abs() < 1e-4);
/// assert_eq!(wilson_interval(0, 10).0, 0.0);
/// ```
pub fn wilson_interval(successes: u64, trials: u64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At p = 0 and p = 1 one end is exactly 0 or 1; say so rather than leave a rounding residue.
    let low = if successes == 0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if successes >= trials {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}
