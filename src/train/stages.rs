//! Weight promotion (Jaśkowski 2016): a network with further stages, each new stage starting as a copy of the stage
//! it splits off.

use super::state::{split_state, ResumeError};
use crate::eval::ntuple::{Network, Shape, ShapeError};

/// The share of its temporal-coherence history a promoted stage keeps (2^-10, exact in f32): see [`promote`].
pub const PROMOTED_MEMORY: f32 = 1.0 / 1024.0;

/// Why a network cannot be promoted to more stages.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    #[error(transparent)]
    State(#[from] ResumeError),
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

/// A network and its trainer state (empty for a shipped network) with further stages starting at the exponents
/// `add` (those that already start a stage change nothing). Each new stage begins as a copy of the weights of the
/// stage it splits off, so every board keeps its value until training tells the stages apart. Its
/// temporal-coherence accumulators (if the state has any) are that stage's scaled by [`PROMOTED_MEMORY`]: each
/// weight keeps its learning rate (`|E| / A` does not change with the scale) but forgets most of its history, so
/// errors particular to the new stage change the rate quickly. (Empty accumulators, the full rate for every weight,
/// upset the copied values: in a trial from the shipped network the rolling greedy mean fell from 238,000 to
/// 200,000 within 25,000 games.) The trainer's progress (games, moves, rolling statistics, pools) carries over.
pub fn promote(net: &Network, state: &[u8], add: &[u8]) -> Result<(Network, Vec<u8>), PromoteError> {
    let old = net.shape();
    if !old.is_uniform() {
        return Err(ResumeError::MixedStages(old.describe()).into());
    }
    let mut stages = old.stages.clone();
    stages.extend_from_slice(add);
    stages.sort_unstable();
    stages.dedup();
    let shape = Shape::new(old.tuples.clone(), stages)?;
    let per_stage = old.weights_per_stage();
    let coherence = if state.is_empty() {
        &[][..]
    } else {
        split_state(state, old.weight_count())?.1
    };
    let head = state.len() - coherence.len();
    let old_weights = net.weights();
    let mut weights = Vec::with_capacity(shape.weight_count());
    let mut new_state = Vec::with_capacity(head + coherence.len() / old.stages.len() * shape.stages.len());
    new_state.extend_from_slice(&state[..head]);
    for &start in &shape.stages {
        let from = old.stage_of(start) * per_stage..(old.stage_of(start) + 1) * per_stage;
        weights.extend_from_slice(&old_weights[from.clone()]);
        if coherence.is_empty() {
            continue;
        }
        let accumulators = &coherence[8 * from.start..8 * from.end];
        if old.stages.contains(&start) {
            new_state.extend_from_slice(accumulators);
        } else {
            new_state.extend(accumulators.chunks_exact(4).flat_map(|c| {
                let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * PROMOTED_MEMORY;
                v.to_le_bytes()
            }));
        }
    }
    let promoted = Network::from_weights(shape, weights).map_err(|e| ResumeError::Damaged(e.to_string()))?;
    Ok((promoted, new_state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Board;
    use crate::train::{TrainConfig, Trainer};

    /// One 4-tuple on the top row, stages from 0 and from 8192: small enough to build in a test.
    fn small_trainer() -> Trainer {
        let shape = Shape::new(vec![vec![0, 1, 2, 3]], vec![0, 13]).unwrap();
        let t = Trainer::new(shape, TrainConfig::default());
        // Different weights in the two stages: boards without and with an 8192, then one with a 16384.
        for (b, target) in [
            (Board(0x1234_0000_0000_0000), 500.0),
            (Board(0xd234_0000_0000_0000), 9000.0),
            (Board(0xe234_0000_0000_0001), 20000.0),
        ] {
            t.tables().update(b, target);
        }
        t
    }

    #[test]
    fn promotion_copies_the_split_stage_and_keeps_its_rates() {
        let t = small_trainer();
        let net = t.network();
        let state = t.state_bytes();
        let (promoted, new_state) = promote(&net, &state, &[14, 13]).unwrap();
        assert_eq!(promoted.shape().stages, vec![0, 13, 14]);
        assert_eq!(promoted.shape().weight_count(), 3 * net.shape().weights_per_stage());
        let resumed = Trainer::resume(promoted, &new_state, &Default::default(), TrainConfig::default()).unwrap();
        // Every board keeps its value: below 8192, from 8192, and from 16384 (a copy of the 8192 stage).
        for b in [
            Board(0x1234_0000_0000_0000),
            Board(0xd234_0000_0000_0000),
            Board(0xe234_0000_0000_0001),
            Board(0xd234_0000_0000_000e),
        ] {
            assert_eq!(resumed.value(b), t.value(b), "{b:?}");
        }
        assert!(t.value(Board(0xe234_0000_0000_0001)) > t.value(Board(0x1234_0000_0000_0000)));
        // The new stage learns apart from the one it was copied from (its rates kept: this error is on one sign).
        let late = Board(0xe234_0000_0000_0001);
        let mid = Board(0xd234_0000_0000_0000);
        let (before_late, before_mid) = (resumed.value(late), resumed.value(mid));
        resumed.tables().update(late, -before_late);
        assert_eq!(resumed.value(mid), before_mid);
        assert!(
            resumed.value(late) < 0.5 * before_late,
            "{} from {before_late}",
            resumed.value(late)
        );
        // The old stages keep their accumulators; the new one has those of the stage it split, scaled down.
        let per = 8 * net.shape().weights_per_stage();
        let head = new_state.len() - 3 * per;
        assert_eq!(&new_state[..head], &state[..head]);
        assert_eq!(&new_state[head..head + 2 * per], &state[head..]);
        let floats = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let split = floats(&state[head + per..]);
        assert!(split.iter().any(|&v| v != 0.0));
        let scaled: Vec<f32> = split.iter().map(|v| v * PROMOTED_MEMORY).collect();
        assert_eq!(floats(&new_state[head + 2 * per..]), scaled);
        // Too many stages are refused; a shipped network (no trainer state) is promoted without accumulators.
        assert!(matches!(promote(&net, &state, &[2, 3, 4]), Err(PromoteError::Shape(_))));
        let (shipped, no_state) = promote(&net, &[], &[14]).unwrap();
        assert!(no_state.is_empty());
        assert_eq!(shipped.shape().stages, vec![0, 13, 14]);
    }

    #[test]
    fn a_damaged_state_is_refused_with_its_reason() {
        let trainer = small_trainer();
        let net = trainer.network();
        let n = net.weights().len();
        assert!(Trainer::resume(
            net.clone(),
            &trainer.state_bytes(),
            &Default::default(),
            TrainConfig::default()
        )
        .is_ok());
        let state = |json_len: u64, json: &[u8], accumulators: usize| {
            let mut s = json_len.to_le_bytes().to_vec();
            s.extend_from_slice(json);
            s.extend(std::iter::repeat_n(0u8, accumulators));
            s
        };
        let resume = |s: &[u8]| Trainer::resume(net.clone(), s, &Default::default(), TrainConfig::default()).err();
        assert!(matches!(resume(&[1, 2, 3]), Some(ResumeError::NoState)));
        // A length past the end (u64::MAX overflowed `8 + len` before), one weight's accumulators short or long,
        // and JSON that is not the trainer's progress.
        for bad in [
            state(u64::MAX, b"{}", 8 * n),
            state(3, b"{}", 8 * n),
            state(2, b"{}", 8 * n - 8),
            state(2, b"{}", 8 * n + 8),
        ] {
            match resume(&bad) {
                Some(ResumeError::Damaged(why)) => assert!(why.contains("bytes of state for"), "{why}"),
                other => panic!("{other:?}"),
            }
            assert!(matches!(
                promote(&net, &bad, &[14]),
                Err(PromoteError::State(ResumeError::Damaged(_)))
            ));
        }
        assert!(matches!(resume(&state(2, b"{}", 8 * n)), Some(ResumeError::Damaged(_))));
    }
}
