//! Golden numbers of the evaluators (seed 002 and the issue), breakdown invariants and weight overrides.

use advisor2048::engine::Tiles;
use advisor2048::eval::classic::{breakdown_reference, ClassicWeights};
use advisor2048::eval::{Evaluator, EvaluatorKind, WeightError};

const EXAMPLE: [[i64; 4]; 4] = [[0, 0, 2, 2], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]];

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn raw(b: &advisor2048::eval::Breakdown, name: &str) -> f64 {
    b.component(name).unwrap_or_else(|| panic!("no component {name}")).raw
}

#[test]
fn classic_seed_2x2_golden_numbers() {
    let cases: [([[u32; 2]; 2], f64); 7] = [
        ([[2, 4], [0, 8]], 12.1533),
        ([[8, 4], [2, 0]], 12.07),
        ([[4, 8], [2, 0]], 12.1533),
        ([[2, 4], [2, 8]], 9.6033),
        ([[4, 4], [2, 8]], 9.9033),
        ([[2, 4], [8, 2]], 9.1667),
        ([[2, 4], [8, 4]], 9.9033),
    ];
    for (rows, expected) in cases {
        let grid: Vec<Vec<u32>> = rows.iter().map(|r| r.to_vec()).collect();
        let b = breakdown_reference(&grid, &ClassicWeights::default());
        assert_eq!(round4(b.total), expected, "{rows:?}");
    }
    let b = breakdown_reference(&vec![vec![2, 4], vec![0, 8]], &ClassicWeights::default());
    assert_eq!(raw(&b, "empty"), 1.0);
    assert_eq!(round4(raw(&b, "smoothness")), 1.4667);
    assert_eq!(raw(&b, "monotonicity"), 0.0);
    assert_eq!(round4(raw(&b, "corner")), 9.6);
    assert_eq!(raw(&b, "merges"), 0.0);
}

#[test]
fn classic_4x4_golden_number_fast_and_exact() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let e = EvaluatorKind::Classic.default_evaluator().unwrap();
    let b = e.breakdown(&tiles);
    assert_eq!(round4(b.total), 1125.1164);
    assert_eq!(raw(&b, "empty"), 3.0);
    assert_eq!(round4(raw(&b, "smoothness")), 178.8361);
    assert_eq!(raw(&b, "monotonicity"), 96.0);
    assert_eq!(round4(raw(&b, "corner")), 1228.8);
    assert_eq!(raw(&b, "merges"), 14.0);
    assert_eq!(round4(e.evaluate(tiles.to_board().unwrap())), 1125.1164);
    assert_eq!(round4(e.evaluate_tiles(&tiles)), 1125.1164);
}

#[test]
fn tuned_golden_numbers() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let e = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let b = e.breakdown(&tiles);
    assert_eq!(round4(b.total), 1403437.2234, "{b:?}");
    assert_eq!(raw(&b, "empty"), 6.0);
    assert_eq!(raw(&b, "merges"), 6.0);
    assert_eq!(raw(&b, "monotonicity"), 1776.0);
    assert_eq!(round4(raw(&b, "sum")), 10810.0706);
    assert_eq!(b.component("lost_penalty").unwrap().contribution, 1_600_000.0);
    assert_eq!(round4(e.evaluate(tiles.to_board().unwrap())), round4(b.total));

    let small = Tiles::from_rows(&[[0, 0, 2, 0], [0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0]]).unwrap();
    assert_eq!(e.breakdown(&small).total.round(), 1607422.0);
    assert_eq!(e.evaluate(small.to_board().unwrap()).round(), 1607422.0);
}

#[test]
fn contributions_add_up_and_overrides_change_only_their_component() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    for kind in EvaluatorKind::HEURISTICS {
        let base = kind.default_evaluator().unwrap().breakdown(&tiles);
        let sum: f64 = base.components.iter().map(|c| c.contribution).sum();
        assert!((sum - base.total).abs() < 1e-9 * base.total.abs().max(1.0));
        for (name, default) in kind.default_weights() {
            let changed = kind.with_weights(&[(name.to_string(), default * 2.0 + 1.0)]).unwrap();
            let b = changed.breakdown(&tiles);
            for (old, new) in base.components.iter().zip(&b.components) {
                assert_eq!(old.raw, new.raw);
                if old.name == name {
                    assert_eq!(new.weight, default * 2.0 + 1.0);
                } else {
                    assert_eq!(old.weight, new.weight, "{kind} {name} changed {}", old.name);
                }
            }
            // The fast path uses the overridden table too.
            let fast = changed.evaluate(tiles.to_board().unwrap());
            assert!(
                (fast - b.total).abs() < 1e-6 * b.total.abs().max(1.0),
                "{kind} {name}: {fast} vs {}",
                b.total
            );
        }
    }
}

#[test]
fn bad_weights_are_errors_naming_the_weight() {
    let e = EvaluatorKind::Classic
        .with_weights(&[("smoothnes".into(), 1.0)])
        .unwrap_err();
    assert!(matches!(e, WeightError::Unknown { .. }));
    assert!(e.to_string().contains("smoothnes"), "{e}");
    let e = EvaluatorKind::Tuned
        .with_weights(&[("sum".into(), f64::NAN)])
        .unwrap_err();
    assert!(matches!(e, WeightError::NotFinite { .. }));
    assert!(e.to_string().contains("sum"), "{e}");
}
