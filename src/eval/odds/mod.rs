//! Reach odds: the chance that the default play, from a board, goes on to make each tile from 2048 to 65536
//! ([`TILES`]).
//!
//! # What a chance is read from
//! A direction's odds are read from its [`Situation`]: the board right after the move (before the spawn) and the
//! default play's search value of the move (its reward plus the expected score still to come, as the learned
//! network and the search at the default settings judge it). For each tile a per-tile model maps a few features of
//! the situation ([`FEATURES`]: how far the board's tile sum and the expected score still to come are from the
//! tile, the largest tile, the empty cells) to a probability: a logistic regression, then a monotone calibration
//! map fitted on held-apart positions of the default play's own games (`advisor2048 odds-fit`, `train::odds`).
//!
//! # Invariants, by construction
//! A tile already on the board has chance 1; the chances never grow with the tile (a game that makes 32768 has
//! made 16384 first); every chance is in \[0, 1\]; a board with no legal move has 0 for every tile it lacks
//! ([`lost`]). The position's own odds are those of the direction the default play chooses.
//!
//! # Which play a model predicts
//! A model belongs to the play it was fitted on: the network (its checksum) and the search settings (profile,
//! depth, cut-off) are recorded in its file ([`FittedFor`]), and [`OddsModel::check_for`] refuses a model fitted
//! for another network or other settings, so a service never answers with odds of a play it does not advise.
//! [`shipped`] holds the model fitted for the shipped network at the default settings.

pub mod file;
pub mod shipped;

use serde::{Deserialize, Serialize};

use crate::engine::{Tiles, MILESTONES};

/// The tiles whose odds are given, smallest first: 2048 to 65536.
pub const TILES: [u32; 6] = MILESTONES;

/// The names of the features a per-tile model reads, in order (a model file lists them; a file whose list differs
/// was fitted by another build and is refused).
pub const FEATURES: [&str; 12] = [
    "bias",
    "progress",
    "to_come",
    "progress_squared",
    "to_come_squared",
    "progress_x_to_come",
    "largest",
    "largest_squared",
    "empty",
    "corner",
    "second_adjacent",
    "third_adjacent",
];

/// What one direction's odds are read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Situation {
    /// The board right after the move, before the spawn.
    pub after: Tiles,
    /// The default play's search value of the move: its reward plus the expected score still to come.
    pub value: f64,
}

impl Situation {
    /// The features of this situation for the tile `2^exponent` (see [`FEATURES`]): `progress` is log2 of the tile
    /// sum minus the tile's exponent, `to_come` log2 of 1 + the value minus the exponent, `largest` the largest
    /// tile's exponent minus the tile's, `empty` the share of empty cells; then the shape of the board's largest
    /// tiles ([`chain`]): the largest in a corner, the next largest beside it, the third beside that (1 or 0).
    pub fn features(&self, exponent: u8) -> [f64; FEATURES.len()] {
        let t = f64::from(exponent);
        let progress = (self.after.tile_sum().max(1) as f64).log2() - t;
        let value = if self.value.is_finite() {
            self.value.max(0.0)
        } else {
            0.0
        };
        let to_come = (1.0 + value).log2() - t;
        let largest = f64::from(self.after.max_tile().max(1)).log2() - t;
        let empty = f64::from(self.after.empty_count()) / 16.0;
        let [corner, second, third] = chain(&self.after.exponents()).map(|b| if b { 1.0 } else { 0.0 });
        [
            1.0,
            progress,
            to_come,
            progress * progress,
            to_come * to_come,
            progress * to_come,
            largest,
            largest * largest,
            empty,
            corner,
            second,
            third,
        ]
    }
}

/// The shape of a board's largest tiles (cells row-major): whether the largest is in a corner, whether a neighbour
/// of it holds the largest of the other tiles, and whether a neighbour of that one (not the largest's cell) holds the
/// largest of the rest. A board kept in order (largest in a corner, the next ones along an edge) is the board that
/// goes on; one whose largest tiles are scattered is the board that dies.
pub fn chain(exponents: &[u8; 16]) -> [bool; 3] {
    let neighbours = |i: usize, j: usize| (i / 4).abs_diff(j / 4) + (i % 4).abs_diff(j % 4) == 1;
    // The cell holding the largest exponent among the cells `allowed` leaves, the first such cell.
    let largest_of = |allowed: &dyn Fn(usize) -> bool| -> Option<(usize, u8)> {
        (0..16)
            .filter(|&i| allowed(i) && exponents[i] > 0)
            .fold(None, |best: Option<(usize, u8)>, i| match best {
                Some((_, e)) if e >= exponents[i] => best,
                _ => Some((i, exponents[i])),
            })
    };
    let Some((first, _)) = largest_of(&|_| true) else {
        return [false; 3];
    };
    let corner = matches!(first, 0 | 3 | 12 | 15);
    let Some((_, second_value)) = largest_of(&|i| i != first) else {
        return [corner, false, false];
    };
    // The second: a neighbour of the first holding that value, if any.
    let beside = (0..16).find(|&j| j != first && neighbours(first, j) && exponents[j] == second_value);
    let Some(second) = beside else {
        return [corner, false, false];
    };
    let third = largest_of(&|i| i != first && i != second).is_some_and(|(_, third_value)| {
        (0..16).any(|k| k != first && neighbours(second, k) && exponents[k] == third_value)
    });
    [corner, true, third]
}

/// The chance of one tile.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chance {
    pub tile: u32,
    /// In \[0, 1\].
    pub chance: f64,
}

/// The chances of every tile of [`TILES`], smallest tile first.
pub type Chances = [Chance; TILES.len()];

/// The play a model predicts: the network and the search settings of the games it was fitted on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedFor {
    /// The network's checksum (the first 16 hex digits of its file's SHA-256).
    pub network: String,
    /// The search profile (`learned`).
    pub profile: String,
    /// Plies (the deepest, with a node budget).
    pub depth: u32,
    pub prob_cutoff: f64,
    /// The search's node budget (`None`: every search to `depth`; absent from the files of the models fitted before
    /// the default had one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_budget: Option<u64>,
    /// The node budget's weight on boards on the run to 32768 (1 in the files of the models fitted before the
    /// default had one).
    #[serde(default = "no_late_weight")]
    pub late_weight: f64,
}

fn no_late_weight() -> f64 {
    1.0
}

/// How a model was fitted: which games, how many positions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitSummary {
    /// The seeds of the self-play runs fitted on, each run's games `0 .. games` (a file of format version 1 names
    /// one run, as `seed`).
    #[serde(alias = "seed", deserialize_with = "one_or_more")]
    pub seeds: Vec<u64>,
    /// Games of each run.
    pub games: u64,
    /// Positions sampled from those games and used in the fit.
    pub positions: u64,
    /// Each move of a game was taken with probability 1 / `sample_every`.
    pub sample_every: u64,
}

impl FitSummary {
    /// The games fitted on, over all runs.
    pub fn total_games(&self) -> u64 {
        self.games.saturating_mul(self.seeds.len() as u64)
    }
}

/// A seed or a list of seeds (the files of format version 1 hold one seed as a number).
fn one_or_more<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seeds {
        One(u64),
        More(Vec<u64>),
    }
    Ok(match Seeds::deserialize(deserializer)? {
        Seeds::One(seed) => vec![seed],
        Seeds::More(seeds) => seeds,
    })
}

/// One tile's model: a logistic regression over [`FEATURES`], then a monotone calibration map of its output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileModel {
    pub tile: u32,
    /// One weight per feature: the linear score is their dot product with the features.
    pub weights: Vec<f64>,
    /// The calibration map: points (score, probability) with increasing scores and non-decreasing probabilities;
    /// between two points the probability is interpolated linearly, beyond the ends it is the end's. Empty: the
    /// logistic function of the score.
    pub calibration: Vec<(f64, f64)>,
}

impl TileModel {
    /// The linear score of a situation's features.
    pub fn score(&self, features: &[f64]) -> f64 {
        self.weights.iter().zip(features).map(|(w, x)| w * x).sum()
    }

    /// The probability of a linear score.
    pub fn probability(&self, score: f64) -> f64 {
        let p = match self.calibration.as_slice() {
            [] => 1.0 / (1.0 + (-score).exp()),
            points => interpolate(points, score),
        };
        if p.is_finite() {
            p.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// The piecewise-linear function through `points` (increasing x) at `x`, flat beyond the ends.
fn interpolate(points: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (points[0], points[points.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    let i = points.partition_point(|p| p.0 <= x);
    let (a, b) = (points[i - 1], points[i]);
    if b.0 > a.0 {
        a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0)
    } else {
        b.1
    }
}

/// A reach-odds model: one [`TileModel`] per tile of [`TILES`], and the play it predicts.
#[derive(Clone, Debug, PartialEq)]
pub struct OddsModel {
    pub fitted_for: FittedFor,
    pub fit: FitSummary,
    /// One per tile of [`TILES`], in that order.
    tiles: Vec<TileModel>,
}

/// Why a model does not fit its tiles (a hand-built or damaged model).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("the model has {found} tiles, expected one per tile of {TILES:?}")]
    TileCount { found: usize },
    #[error("tile {index} of the model is {found}, expected {expected}")]
    Tile { index: usize, found: u32, expected: u32 },
    #[error("the model of tile {tile} has {found} weights, expected {} (one per feature)", FEATURES.len())]
    Weights { tile: u32, found: usize },
    #[error("the model of tile {tile} has a weight or calibration point that is not a finite number")]
    NotFinite { tile: u32 },
    #[error(
        "the calibration map of tile {tile} is not monotone (its scores must increase and its probabilities, \
         from 0 to 1, must not decrease)"
    )]
    Calibration { tile: u32 },
}

impl OddsModel {
    /// A model from its tiles, checked: one per tile of [`TILES`] in order, one weight per feature, finite numbers,
    /// monotone calibration maps within \[0, 1\].
    pub fn new(fitted_for: FittedFor, fit: FitSummary, tiles: Vec<TileModel>) -> Result<OddsModel, ModelError> {
        if tiles.len() != TILES.len() {
            return Err(ModelError::TileCount { found: tiles.len() });
        }
        for (index, (model, expected)) in tiles.iter().zip(TILES).enumerate() {
            let tile = model.tile;
            if tile != expected {
                return Err(ModelError::Tile {
                    index,
                    found: tile,
                    expected,
                });
            }
            if model.weights.len() != FEATURES.len() {
                return Err(ModelError::Weights {
                    tile,
                    found: model.weights.len(),
                });
            }
            let finite = model.weights.iter().all(|w| w.is_finite())
                && model.calibration.iter().all(|(x, p)| x.is_finite() && p.is_finite());
            if !finite {
                return Err(ModelError::NotFinite { tile });
            }
            let in_range = model.calibration.iter().all(|(_, p)| (0.0..=1.0).contains(p));
            let monotone = model
                .calibration
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
            if !in_range || !monotone {
                return Err(ModelError::Calibration { tile });
            }
        }
        Ok(OddsModel { fitted_for, fit, tiles })
    }

    /// The per-tile models, smallest tile first.
    pub fn tiles(&self) -> &[TileModel] {
        &self.tiles
    }

    /// The chances of one direction: the default play after this move. 1 for every tile the board after the move
    /// holds, non-increasing with the tile, each in \[0, 1\].
    pub fn chances(&self, situation: &Situation) -> Chances {
        let on_board = situation.after.max_tile();
        let mut previous = 1.0f64;
        std::array::from_fn(|i| {
            let tile = TILES[i];
            let chance = if on_board >= tile {
                1.0
            } else {
                let model = &self.tiles[i];
                let exponent = tile.trailing_zeros() as u8;
                model.probability(model.score(&situation.features(exponent)))
            };
            previous = previous.min(chance);
            Chance { tile, chance: previous }
        })
    }

    /// `Ok` when this model predicts the play of the network `checksum` (`None`: a network without a file, which
    /// no model can name) searched with `settings`; else why not.
    pub fn check_for(&self, checksum: Option<&str>, settings: &FittedFor) -> Result<(), OddsUnavailable> {
        let fitted = &self.fitted_for;
        let Some(checksum) = checksum else {
            return Err(OddsUnavailable::NoChecksum);
        };
        if fitted.network != checksum {
            return Err(OddsUnavailable::OtherNetwork {
                fitted: fitted.network.clone(),
                running: checksum.to_owned(),
            });
        }
        if fitted.profile != settings.profile
            || fitted.depth != settings.depth
            || fitted.prob_cutoff != settings.prob_cutoff
            || fitted.node_budget != settings.node_budget
            || fitted.late_weight != settings.late_weight
        {
            return Err(OddsUnavailable::OtherSettings {
                fitted: describe(fitted),
                default: describe(settings),
            });
        }
        Ok(())
    }
}

/// A play for the tests of the odds: a made-up network checksum at the default settings.
#[cfg(test)]
pub(crate) fn test_play() -> FittedFor {
    FittedFor {
        network: "0123456789abcdef".to_owned(),
        profile: "learned".to_owned(),
        depth: 9,
        prob_cutoff: 0.0001,
        node_budget: Some(40_000),
        late_weight: 1.0,
    }
}

fn describe(s: &FittedFor) -> String {
    let budget = crate::search::node_budget_words(s.node_budget, s.late_weight);
    format!(
        "profile {}, depth {}, cut-off {}{budget}",
        s.profile, s.depth, s.prob_cutoff
    )
}

/// The chances of a board with no legal move: 1 for the tiles it holds, 0 for the others.
pub fn lost(board: &Tiles) -> Chances {
    let largest = board.max_tile();
    std::array::from_fn(|i| Chance {
        tile: TILES[i],
        chance: if largest >= TILES[i] { 1.0 } else { 0.0 },
    })
}

/// Why a service or command has no odds to give.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OddsUnavailable {
    #[error("reach odds need the learned network, and none is loaded (--weights none); start without --weights none")]
    NoNetwork,
    #[error(
        "reach odds need a network loaded from a weight file (its checksum names the play the odds were fitted on)"
    )]
    NoChecksum,
    #[error(
        "the reach odds were fitted for network {fitted}, but this service runs network {running}: fit odds for it \
         with `advisor2048 odds-fit --games 300 --seed 1001 --sample-every 20 --weights FILE --out ODDS.json` and \
         start the service with --odds-model ODDS.json"
    )]
    OtherNetwork { fitted: String, running: String },
    #[error(
        "the reach odds were fitted for {fitted}, but the default play is now {default}: re-fit them with \
         `advisor2048 odds-fit --games 300 --seed 1001 --sample-every 20 --out ODDS.json` and start the service \
         with --odds-model ODDS.json"
    )]
    OtherSettings { fitted: String, default: String },
    #[error(
        "no reach-odds model is built in for network {running}: fit one with `advisor2048 odds-fit --games 300 \
         --seed 1001 --sample-every 20 --weights FILE --out ODDS.json` and load it with --odds-model ODDS.json"
    )]
    NoModel { running: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(weights: Vec<f64>) -> OddsModel {
        let fitted_for = test_play();
        let tiles = TILES
            .iter()
            .map(|&tile| TileModel {
                tile,
                weights: weights.clone(),
                calibration: Vec::new(),
            })
            .collect();
        OddsModel::new(fitted_for, FitSummary::default(), tiles).expect("a valid model")
    }

    fn board(exponents: [u8; 16]) -> Tiles {
        Tiles::from_exponents(exponents).expect("a board")
    }

    #[test]
    fn the_chances_hold_their_invariants_whatever_the_weights() {
        // Weights that would make larger tiles likelier than smaller ones, and a board holding 4096.
        let mut weights = vec![0.0; FEATURES.len()];
        weights[2] = 3.0;
        weights[6] = -5.0;
        let m = model(weights);
        let after = board([12, 11, 10, 9, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
        for value in [0.0, 1e3, 1e5, 1e7, f64::NAN, f64::INFINITY] {
            let chances = m.chances(&Situation { after, value });
            assert_eq!(chances.map(|c| c.tile), TILES);
            assert_eq!(chances[0].chance, 1.0, "2048 is on the board");
            assert_eq!(chances[1].chance, 1.0, "4096 is on the board");
            assert!(chances.iter().all(|c| (0.0..=1.0).contains(&c.chance)));
            assert!(chances.windows(2).all(|w| w[0].chance >= w[1].chance), "{chances:?}");
        }
    }

    #[test]
    fn the_chain_reads_the_shape_of_the_largest_tiles() {
        // 2^12 in the top-left corner, 2^11 beside it, 2^10 beside that.
        assert_eq!(
            chain(&[12, 11, 10, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            [true, true, true]
        );
        // 2^12 in the middle, 2^11 far from it.
        assert_eq!(
            chain(&[0, 0, 0, 11, 0, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10]),
            [false, false, false]
        );
        // 2^12 in a corner, 2^11 beside it, 2^10 not beside 2^11.
        assert_eq!(
            chain(&[0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 12, 11, 0, 0]),
            [true, true, false]
        );
        assert_eq!(chain(&[0; 16]), [false; 3]);
    }

    #[test]
    fn a_lost_board_has_one_for_its_tiles_and_zero_for_the_others() {
        let b = board([13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2, 3, 4]);
        let chances = lost(&b);
        assert_eq!(chances.map(|c| c.chance), [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn the_calibration_map_interpolates_and_is_flat_beyond_its_ends() {
        let points = [(-1.0, 0.1), (0.0, 0.2), (2.0, 0.6)];
        assert_eq!(interpolate(&points, -5.0), 0.1);
        assert!((interpolate(&points, -0.5) - 0.15).abs() < 1e-12);
        assert!((interpolate(&points, 1.0) - 0.4).abs() < 1e-12);
        assert_eq!(interpolate(&points, 9.0), 0.6);
    }

    #[test]
    fn a_model_that_breaks_its_shape_is_refused() {
        let m = model(vec![0.0; FEATURES.len()]);
        let mut tiles = m.tiles().to_vec();
        tiles[3].calibration = vec![(0.0, 0.5), (1.0, 0.4)];
        assert_eq!(
            OddsModel::new(m.fitted_for.clone(), FitSummary::default(), tiles.clone()),
            Err(ModelError::Calibration { tile: 16384 })
        );
        tiles[3].calibration.clear();
        tiles[1].weights.pop();
        assert!(matches!(
            OddsModel::new(m.fitted_for.clone(), FitSummary::default(), tiles),
            Err(ModelError::Weights { tile: 4096, .. })
        ));
    }

    #[test]
    fn a_model_names_the_network_and_settings_it_was_fitted_for() {
        let m = model(vec![0.0; FEATURES.len()]);
        let same = m.fitted_for.clone();
        assert_eq!(m.check_for(Some("0123456789abcdef"), &same), Ok(()));
        assert!(matches!(
            m.check_for(Some("fedcba9876543210"), &same),
            Err(OddsUnavailable::OtherNetwork { .. })
        ));
        let deeper = FittedFor {
            depth: 7,
            ..same.clone()
        };
        assert!(matches!(
            m.check_for(Some("0123456789abcdef"), &deeper),
            Err(OddsUnavailable::OtherSettings { .. })
        ));
        // A model does not predict a play with another late weight.
        let weighted = FittedFor {
            late_weight: 2.0,
            ..same
        };
        let refused = m.check_for(Some("0123456789abcdef"), &weighted);
        assert!(
            matches!(&refused, Err(OddsUnavailable::OtherSettings { default, .. }) if default.contains("late weight 2")),
            "{refused:?}"
        );
        let old_file = r#"{"network": "0123456789abcdef", "profile": "learned", "depth": 9, "prob_cutoff": 0.0001,
            "node_budget": 40000}"#;
        let old: FittedFor = serde_json::from_str(old_file).expect("a play without a late weight");
        assert_eq!(
            old, m.fitted_for,
            "a file without a late weight names the play of weight 1"
        );
        assert_eq!(m.check_for(None, &m.fitted_for), Err(OddsUnavailable::NoChecksum));
    }
}
