//! Differential property tests: the fast 4x4 evaluators against the plain reference formulas.

use crate::common;

use advisor2048::engine::Tiles;
use advisor2048::eval::{classic, tuned, Evaluator, EvaluatorKind};
use proptest::prelude::*;

/// Realistic boards: mostly empties and small tiles, some large ones, and now and then 65536/131072.
fn exponent() -> impl Strategy<Value = u8> {
    prop_oneof![
        40 => Just(0u8),
        40 => 1u8..=6,
        15 => 7u8..=12,
        4 => 13u8..=15,
        1 => 16u8..=17,
    ]
}

fn tiles() -> impl Strategy<Value = Tiles> {
    proptest::array::uniform16(exponent()).prop_map(common::reachable)
}

fn grid(t: &Tiles) -> Vec<Vec<u32>> {
    t.to_rows().iter().map(|r| r.to_vec()).collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn classic_fast_equals_reference(t in tiles()) {
        let e = EvaluatorKind::Classic.default_evaluator().unwrap();
        let reference = classic::breakdown_reference(&grid(&t), &classic::ClassicWeights::default());
        let exact = e.breakdown(&t);
        for (a, b) in exact.components.iter().zip(&reference.components) {
            prop_assert!(close(a.raw, b.raw, 1e-9), "{}: {} vs {}", a.name, a.raw, b.raw);
        }
        prop_assert!(close(e.evaluate_tiles(&t), reference.total, 1e-9));
        if let Some(board) = t.to_board() {
            prop_assert!(close(e.evaluate(board), reference.total, 1e-9), "{} vs {}", e.evaluate(board), reference.total);
        }
    }

    #[test]
    fn tuned_fast_equals_reference(t in tiles()) {
        let e = EvaluatorKind::Tuned.default_evaluator().unwrap();
        let reference = tuned::breakdown_reference(&grid(&t), &tuned::TunedWeights::default());
        let exact = e.breakdown(&t);
        for (a, b) in exact.components.iter().zip(&reference.components) {
            prop_assert!(close(a.raw, b.raw, 1e-9), "{}: {} vs {}", a.name, a.raw, b.raw);
        }
        prop_assert!(close(e.evaluate_tiles(&t), reference.total, 1e-9));
        if let Some(board) = t.to_board() {
            prop_assert!(close(e.evaluate(board), reference.total, 1e-9));
        }
    }

    #[test]
    fn breakdowns_add_up(t in tiles()) {
        for kind in EvaluatorKind::HEURISTICS {
            let b = kind.default_evaluator().unwrap().breakdown(&t);
            let sum: f64 = b.components.iter().map(|c| c.contribution).sum();
            prop_assert!(close(sum, b.total, 1e-12));
            for c in &b.components {
                prop_assert_eq!(c.contribution, c.weight * c.raw);
            }
        }
    }
}
