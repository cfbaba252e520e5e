//! What training changed: two networks of one shape compared weight by weight, grouped by stage and by the largest
//! tile of each weight's pattern (the cells of its tuple), so a run can be checked for learning where it should
//! (for the late game: the patterns holding a 16384 or a 32768) and for leaving alone what it should.
//!
//! A weight's pattern is its index read as one exponent per cell (the first cell the most significant digit), so
//! the largest tile of the pattern is the largest of those digits. Weights are compared as the networks hold them
//! (f16 files widened to f32): a change smaller than a stored value's precision (2^-11 of it in an f16 file) is
//! invisible, and counts as no change.

use crate::eval::ntuple::Network;

/// The bands of the largest tile of a weight's pattern, as exponent ranges (inclusive): up to 2048, then 4096,
/// 8192, 16384 and 32768 each on their own (the late game is where training is watched).
pub const BANDS: [(u8, u8); 5] = [(0, 11), (12, 12), (13, 13), (14, 14), (15, 15)];

/// How the weights of one stage and one band differ between two networks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BandChange {
    /// The stage (0 is the first).
    pub stage: usize,
    /// The band's smallest and largest exponent of the pattern's largest tile.
    pub largest_exponent: (u8, u8),
    /// Weights in the band.
    pub weights: u64,
    /// Weights that are not 0 in the first network (trained at some time, or set by hand).
    pub trained_before: u64,
    /// Weights whose values differ.
    pub changed: u64,
    /// Mean of |after - before| over the band's weights that were not 0 before (0 when there are none).
    pub mean_abs_change: f64,
    /// The largest |after - before| in the band.
    pub max_abs_change: f64,
    /// Mean of |before| over the same weights (the scale `mean_abs_change` is measured against).
    pub mean_abs_before: f64,
}

/// Two networks that cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the networks differ in shape, or their stages read different tuples: {before} against {after}")]
pub struct ShapeMismatch {
    pub before: String,
    pub after: String,
}

impl ShapeMismatch {
    /// `Ok` when the two networks have one shape, whose stages all read every tuple.
    pub fn check(before: &Network, after: &Network) -> Result<(), ShapeMismatch> {
        if before.shape() == after.shape() && before.shape().is_uniform() {
            return Ok(());
        }
        Err(ShapeMismatch {
            before: before.shape().describe(),
            after: after.shape().describe(),
        })
    }
}

/// Compares `after` with `before`, weight by weight: one [`BandChange`] per stage and band of [`BANDS`].
pub fn compare(before: &Network, after: &Network) -> Result<Vec<BandChange>, ShapeMismatch> {
    ShapeMismatch::check(before, after)?;
    let shape = before.shape();
    let (a, b) = (before.weights(), after.weights());
    let mut out: Vec<BandChange> = (0..shape.stages.len())
        .flat_map(|stage| {
            BANDS.iter().map(move |&largest_exponent| BandChange {
                stage,
                largest_exponent,
                ..BandChange::default()
            })
        })
        .collect();
    let mut sums = vec![(0.0f64, 0.0f64); out.len()];
    let mut offset = 0;
    for stage in 0..shape.stages.len() {
        for tuple in &shape.tuples {
            let cells = tuple.len();
            for index in 0..1usize << (4 * cells) {
                let largest = (0..cells).map(|c| (index >> (4 * c)) & 15).max().unwrap_or(0) as u8;
                let band = BANDS
                    .iter()
                    .position(|&(lo, hi)| (lo..=hi).contains(&largest))
                    .unwrap_or(0);
                let k = stage * BANDS.len() + band;
                let (x, y) = (a[offset + index], b[offset + index]);
                let o = &mut out[k];
                o.weights += 1;
                if x != y {
                    o.changed += 1;
                }
                let d = f64::from((y - x).abs());
                o.max_abs_change = o.max_abs_change.max(d);
                if x != 0.0 {
                    o.trained_before += 1;
                    sums[k].0 += d;
                    sums[k].1 += f64::from(x.abs());
                }
            }
            offset += 1 << (4 * cells);
        }
    }
    for (o, (change, size)) in out.iter_mut().zip(sums) {
        if o.trained_before > 0 {
            o.mean_abs_change = change / o.trained_before as f64;
            o.mean_abs_before = size / o.trained_before as f64;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::ntuple::Shape;

    /// Two tuples of 4 cells, two stages: 2 x (16^4 + 16^4) weights.
    fn shape() -> Shape {
        Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0, 14]).unwrap()
    }

    #[test]
    fn a_network_against_itself_changes_nothing() {
        let net = Network::filled(shape(), 3.0);
        let bands = compare(&net, &net).unwrap();
        assert_eq!(bands.len(), 2 * BANDS.len());
        assert_eq!(
            bands.iter().map(|b| b.weights).sum::<u64>(),
            net.shape().weight_count() as u64
        );
        for b in &bands {
            assert_eq!((b.changed, b.max_abs_change, b.mean_abs_change), (0, 0.0, 0.0), "{b:?}");
            assert_eq!(b.trained_before, b.weights);
            assert_eq!(b.mean_abs_before, 3.0);
        }
    }

    #[test]
    fn each_change_is_counted_in_its_stage_and_band() {
        let shape = shape();
        let per_stage = shape.weights_per_stage();
        let before = Network::filled(shape.clone(), 1.0);
        let mut w = before.weights().into_owned();
        // Stage 1, second tuple, pattern (15, 0, 0, 1): largest tile 32768.
        w[per_stage + (1 << 16) + 0xf001] = 5.0;
        // Stage 0, first tuple, pattern (2, 14, 0, 0): largest tile 16384; and a pattern of small tiles.
        w[0x2e00] = -1.0;
        w[0x0123] = 1.5;
        let after = Network::from_weights(shape, w).unwrap();
        let bands = compare(&before, &after).unwrap();
        let changed: Vec<(usize, u8, u64, f64)> = bands
            .iter()
            .filter(|b| b.changed > 0)
            .map(|b| (b.stage, b.largest_exponent.0, b.changed, b.max_abs_change))
            .collect();
        assert_eq!(changed, vec![(0, 0, 1, 0.5), (0, 14, 1, 2.0), (1, 15, 1, 4.0)]);
        // The band of 16384 in stage 0: one change of 2 among its weights.
        let b = &bands[3];
        assert_eq!((b.stage, b.largest_exponent), (0, (14, 14)));
        assert!((b.mean_abs_change - 2.0 / b.trained_before as f64).abs() < 1e-12);
        // Patterns of a tuple with largest exponent exactly 14: 15^4 - 14^4 per tuple.
        assert_eq!(b.weights, 2 * (15u64.pow(4) - 14u64.pow(4)));
    }

    #[test]
    fn networks_of_different_shapes_are_refused() {
        let a = Network::filled(shape(), 0.0);
        let b = Network::filled(Shape::new(vec![vec![0, 1, 2, 3]], vec![0]).unwrap(), 0.0);
        let e = compare(&a, &b).unwrap_err();
        assert!(e.to_string().contains("differ in shape"), "{e}");
    }
}
