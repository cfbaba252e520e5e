//! Golden values of the search (seed 002 section 8 and the issue) and the fast search against the reference search.

use advisor2048::engine::reference::Grid;
use advisor2048::engine::{Direction, Tiles};
use advisor2048::eval::classic::{self, ClassicWeights};
use advisor2048::eval::tuned::{self, TunedWeights};
use advisor2048::eval::EvaluatorKind;
use advisor2048::search::reference::{root_values_reference, ReferenceParams};
use advisor2048::search::{
    search, Depth, Profile, RunSettings, SearchOutcome, SearchSettings, StopHandle, Terminal, TranspositionTable,
};
use proptest::prelude::*;

const EXAMPLE: [[i64; 4]; 4] = [[0, 0, 2, 2], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]];
const SECOND: [[i64; 4]; 4] = [[2, 0, 0, 0], [4, 2, 0, 0], [16, 8, 4, 0], [256, 128, 32, 8]];

fn run(rows: &[[i64; 4]; 4], profile: Profile, depth: u32, tt: bool) -> SearchOutcome {
    let tiles = Tiles::from_rows(rows).unwrap();
    let settings = SearchSettings {
        depth: Depth::Plies(depth),
        run: RunSettings {
            tt_bits: if tt { Some(16) } else { None },
            ..RunSettings::default()
        },
        ..profile.settings()
    };
    search(
        &tiles,
        &settings.profile.evaluator().default_evaluator().unwrap(),
        &settings,
        &StopHandle::new(),
    )
}

fn rounded(values: [Option<f64>; 4], places: i32) -> [Option<f64>; 4] {
    let k = 10f64.powi(places);
    values.map(|v| v.map(|v| (v * k).round() / k))
}

fn classic_h(g: &Grid) -> f64 {
    ClassicWeights::default().total(&classic::terms_reference(g))
}

fn tuned_h(g: &Grid) -> f64 {
    tuned::breakdown_reference(g, &TunedWeights::default()).total
}

const CLASSIC_REF: ReferenceParams = ReferenceParams {
    reward_weight: 1.0,
    terminal_heuristic: true,
    prob_cutoff: 1e-4,
};
const TUNED_REF: ReferenceParams = ReferenceParams {
    reward_weight: 0.0,
    terminal_heuristic: false,
    prob_cutoff: 1e-4,
};

#[test]
fn seed_section_8_two_by_two() {
    let grid = vec![vec![2, 4], vec![0, 8]];
    let values = rounded(root_values_reference(&grid, 2, &classic_h, &CLASSIC_REF), 4);
    assert_eq!(values, [None, Some(9.6333), Some(9.2403), None]);
    assert_eq!(advisor2048::search::choose(&values), Some(Direction::Down));
}

#[test]
fn example_classic_depth_3() {
    for tt in [false, true] {
        let o = run(&EXAMPLE, Profile::Classic, 3, tt);
        assert_eq!(
            rounded(o.values, 4),
            [Some(1081.5864), Some(1155.0509), Some(1124.2152), Some(1159.2054)]
        );
        assert_eq!(o.best, Some(Direction::Right));
        assert_eq!(o.stats.depth, 3);
    }
}

#[test]
fn example_tuned_depth_3() {
    let o = run(&EXAMPLE, Profile::Tuned, 3, false);
    assert_eq!(
        rounded(o.values, 2),
        [Some(1301973.77), Some(1398263.95), Some(1395148.42), Some(1401191.42)]
    );
    assert_eq!(o.best, Some(Direction::Right));
}

#[test]
fn second_board_classic_depth_2_and_tuned_depth_3() {
    let o = run(&SECOND, Profile::Classic, 2, false);
    assert_eq!(rounded(o.values, 4), [Some(18.1009), None, None, Some(300.5621)]);
    assert_eq!(o.best, Some(Direction::Right));
    let o = run(&SECOND, Profile::Tuned, 3, false);
    assert_eq!(rounded(o.values, 2), [Some(1475411.32), None, None, Some(1539038.51)]);
}

#[test]
fn game_over_has_no_direction() {
    let full = [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]];
    let o = run(&full, Profile::Tuned, 3, true);
    assert!(o.game_over());
    assert_eq!(o.best, None);
    assert_eq!(o.values, [None; 4]);
}

#[test]
fn threads_do_not_change_the_result() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let base = SearchSettings {
        depth: Depth::Plies(5),
        ..Profile::Tuned.settings()
    };
    let eval = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let one = search(&tiles, &eval, &base, &StopHandle::new());
    let two = search(
        &tiles,
        &eval,
        &SearchSettings {
            run: RunSettings {
                threads: 2,
                ..base.run.clone()
            },
            ..base.clone()
        },
        &StopHandle::new(),
    );
    let four = search(
        &tiles,
        &eval,
        &SearchSettings {
            run: RunSettings {
                threads: 4,
                ..base.run.clone()
            },
            ..base
        },
        &StopHandle::new(),
    );
    assert_eq!(one.values, two.values);
    assert_eq!(one.values, four.values);
    assert_eq!(one.stats.nodes, two.stats.nodes);
}

#[test]
fn node_limit_cuts_the_search_and_keeps_the_last_completed_iteration() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let settings = SearchSettings {
        depth: Depth::Plies(9),
        run: RunSettings {
            node_limit: Some(200_000),
            time_budget: Some(std::time::Duration::from_secs(3600)),
            ..RunSettings::default()
        },
        ..Profile::Tuned.settings()
    };
    let o = search(
        &tiles,
        &EvaluatorKind::Tuned.default_evaluator().unwrap(),
        &settings,
        &StopHandle::new(),
    );
    assert!(o.stats.truncated);
    assert!(o.stats.depth >= 1 && o.stats.depth < 9, "depth {}", o.stats.depth);
    assert!(o.best.is_some());
    let shallow = run(&EXAMPLE, Profile::Tuned, o.stats.depth, true);
    assert_eq!(o.values, shallow.values);
}

#[test]
fn a_budgeted_search_of_a_forced_move_stops_after_one_ply() {
    // Only `down` moves this board (every row full and no pair side by side; the columns slide into the empty
    // bottom row).
    let forced = [[2, 4, 8, 16], [4, 8, 16, 32], [8, 16, 32, 64], [0, 0, 0, 0]];
    let tiles = Tiles::from_rows(&forced).unwrap();
    let evaluator = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let budgeted = SearchSettings {
        depth: Depth::Plies(7),
        run: RunSettings {
            time_budget: Some(std::time::Duration::from_secs(3600)),
            ..RunSettings::default()
        },
        ..Profile::Tuned.settings()
    };
    let o = search(&tiles, &evaluator, &budgeted, &StopHandle::new());
    assert_eq!(o.best, Some(Direction::Down));
    assert_eq!(o.values.iter().flatten().count(), 1);
    assert_eq!((o.stats.depth, o.stats.truncated), (1, false));
    // Without a budget the requested depth is searched all the same.
    let plain = SearchSettings {
        run: RunSettings::default(),
        ..budgeted
    };
    let o = search(&tiles, &evaluator, &plain, &StopHandle::new());
    assert_eq!((o.best, o.stats.depth), (Some(Direction::Down), 7));
    // A board with a choice deepens to the requested depth when the budget is ample.
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let settings = SearchSettings {
        depth: Depth::Plies(5),
        ..budgeted
    };
    let o = search(&tiles, &evaluator, &settings, &StopHandle::new());
    assert_eq!((o.stats.depth, o.stats.truncated), (5, false));
}

#[test]
fn a_tripped_stop_handle_returns_no_completed_iteration() {
    let tiles = Tiles::from_rows(&EXAMPLE).unwrap();
    let stop = StopHandle::new();
    stop.stop();
    let settings = SearchSettings {
        depth: Depth::Plies(11),
        ..Profile::Tuned.settings()
    };
    let o = search(
        &tiles,
        &EvaluatorKind::Tuned.default_evaluator().unwrap(),
        &settings,
        &stop,
    );
    assert!(o.stats.truncated);
    assert_eq!(o.best, None);
    assert!(!o.completed());
}

#[test]
fn huge_tiles_take_the_exact_path() {
    let rows = [[65536, 32768, 2, 0], [32768, 4, 0, 0], [8, 0, 0, 0], [0, 0, 0, 0]];
    let tiles = Tiles::from_rows(&rows).unwrap();
    let settings = SearchSettings {
        depth: Depth::Plies(3),
        run: RunSettings {
            tt_bits: None,
            ..RunSettings::default()
        },
        ..Profile::Tuned.settings()
    };
    let o = search(
        &tiles,
        &EvaluatorKind::Tuned.default_evaluator().unwrap(),
        &settings,
        &StopHandle::new(),
    );
    assert!(!o.stats.fast_path);
    let grid: Grid = rows.iter().map(|r| r.iter().map(|&v| v as u32).collect()).collect();
    let reference = root_values_reference(&grid, 3, &tuned_h, &TUNED_REF);
    for (a, b) in o.values.iter().zip(reference) {
        match (a, b) {
            (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} vs {b}"),
            (a, b) => assert_eq!(*a, b),
        }
    }
}

fn exponent() -> impl Strategy<Value = u8> {
    prop_oneof![45 => Just(0u8), 40 => 1u8..=5, 15 => 6u8..=11]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The fast search (no table) equals the plain recursive search over the reference model, depth 1-4, with the
    /// default cut-off and with cut-offs high enough that whole layers of move nodes fall below them (the search
    /// computes those as leaves).
    #[test]
    fn fast_search_equals_reference(
        e in proptest::array::uniform16(exponent()),
        depth in 1u32..=4,
        classic in any::<bool>(),
        prob_cutoff in prop_oneof![Just(1e-4), Just(0.02), Just(0.1), Just(0.5)],
    ) {
        let tiles = Tiles::from_exponents(e).unwrap();
        let grid: Grid = tiles.to_rows().iter().map(|r| r.to_vec()).collect();
        let profile = if classic { Profile::Classic } else { Profile::Tuned };
        let settings = SearchSettings { depth: Depth::Plies(depth), prob_cutoff, run: RunSettings { tt_bits: None, ..RunSettings::default() }, ..profile.settings() };
        let o = search(&tiles, &settings.profile.evaluator().default_evaluator().unwrap(), &settings, &StopHandle::new());
        let (h, params): (&dyn Fn(&Grid) -> f64, _) = if classic { (&classic_h, CLASSIC_REF) } else { (&tuned_h, TUNED_REF) };
        let params = ReferenceParams { prob_cutoff, ..params };
        prop_assert_eq!(settings.terminal == Terminal::Heuristic, params.terminal_heuristic);
        let reference = root_values_reference(&grid, depth, h, &params);
        for (a, b) in o.values.iter().zip(reference) {
            match (a, b) {
                (Some(a), Some(b)) => prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} vs {}", a, b),
                (a, b) => prop_assert_eq!(*a, b),
            }
        }
    }
}

/// Transposition tables outlive the threads that searched with them and are reused: searches on threads that come
/// and go (as the server's blocking pool's do) leave at most the number of CPUs of spare tables, whatever the
/// number of threads that ran them.
#[test]
fn transposition_tables_are_kept_and_reused_not_allocated_per_thread() {
    let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tiles = Tiles::from_hex("0000000000000112").unwrap();
    let settings = SearchSettings {
        depth: Depth::Plies(3),
        run: RunSettings {
            threads: 2,
            ..RunSettings::default()
        },
        ..Profile::Tuned.settings()
    };
    let eval = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let expected = search(&tiles, &eval, &settings, &StopHandle::new());
    for _ in 0..20 {
        let outcome = std::thread::spawn({
            let (eval, settings) = (eval.clone(), settings.clone());
            move || search(&tiles, &eval, &settings, &StopHandle::new())
        })
        .join()
        .unwrap();
        assert_eq!(outcome.values, expected.values);
        let (spares, bytes) = advisor2048::search::spare_tables();
        assert!(spares <= limit, "{spares} spare tables (limit {limit})");
        // Tests running beside this one return tables too, some with the leaf-value cache a learned search adds.
        let most = TranspositionTable::most_bytes(advisor2048::search::DEFAULT_TT_BITS);
        assert!(
            bytes <= limit as u64 * most,
            "{bytes} bytes in {spares} spare tables (limit {limit} of {most})"
        );
    }
    // A 1-ply search takes no table.
    let greedy = SearchSettings {
        depth: Depth::Plies(1),
        ..settings
    };
    assert_eq!(search(&tiles, &eval, &greedy, &StopHandle::new()).stats.tt_used, 0);
}

#[test]
fn a_node_budget_chooses_the_depth_by_nodes_alone_and_never_cuts_an_iteration() {
    let evaluator = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let budgeted = |rows: &[[i64; 4]; 4], budget: u64, threads: usize| {
        let settings = SearchSettings {
            depth: Depth::Plies(9),
            node_budget: Some(budget),
            run: RunSettings {
                threads,
                ..RunSettings::default()
            },
            ..Profile::Tuned.settings()
        };
        search(
            &Tiles::from_rows(rows).unwrap(),
            &evaluator,
            &settings,
            &StopHandle::new(),
        )
    };
    for rows in [&EXAMPLE, &SECOND] {
        let mut deepest = 0;
        let mut depths = Vec::new();
        for budget in [1, 200, 2_000, 20_000, 200_000, 20_000_000] {
            let o = budgeted(rows, budget, 1);
            depths.push(o.stats.depth);
            // Nothing was cut: the values are those of a plain search to the depth the budget chose.
            assert!(!o.stats.truncated, "budget {budget}");
            assert_eq!(o.stats.depth % 2, 1, "odd depths only");
            assert!(
                o.stats.depth >= deepest,
                "a larger budget never searches shallower: {depths:?}"
            );
            deepest = o.stats.depth;
            let plain = run(rows, Profile::Tuned, o.stats.depth, true);
            assert_eq!(o.values, plain.values, "budget {budget}, depth {}", o.stats.depth);
            assert_eq!(o.best, plain.best);
            // Nodes, not time: the same search on two threads, to the node.
            let two = budgeted(rows, budget, 2);
            assert_eq!(
                (two.values, two.stats.depth, two.stats.nodes),
                (o.values, o.stats.depth, o.stats.nodes)
            );
        }
        // The smallest budget stops after one ply, the largest reaches the depth asked for, and the ones between
        // go somewhere between.
        assert_eq!((depths[0], depths[depths.len() - 1]), (1, 9), "{depths:?}");
        assert!(depths.iter().any(|&d| d > 1 && d < 9), "{depths:?}");
    }
}

/// The `tuned` profile's search of `rows` deepening up to 11 plies within `budget` nodes, with `late_weight`.
fn up_to_11_plies_within(rows: &[[i64; 4]; 4], budget: u64, late_weight: f64) -> advisor2048::search::SearchOutcome {
    let settings = SearchSettings {
        depth: Depth::Plies(11),
        node_budget: Some(budget),
        late_weight,
        ..Profile::Tuned.settings()
    };
    let evaluator = EvaluatorKind::Tuned.default_evaluator().unwrap();
    search(
        &Tiles::from_rows(rows).unwrap(),
        &evaluator,
        &settings,
        &StopHandle::new(),
    )
}

#[test]
fn a_crowded_board_gets_a_deeper_search_than_an_open_one_from_the_same_node_budget() {
    // Same tiles and shape on the left; the crowded board has two empty cells, the open one seven.
    let crowded = [[2, 4, 8, 16], [32, 64, 128, 256], [4, 8, 16, 2], [0, 2, 0, 4]];
    let open = [[2, 4, 8, 16], [32, 0, 0, 0], [4, 0, 0, 0], [0, 2, 0, 4]];
    let depth_at = |rows: &[[i64; 4]; 4], budget: u64| {
        let o = up_to_11_plies_within(rows, budget, 1.0);
        (o.stats.depth, o.stats.nodes)
    };
    let budget = 20_000;
    let (deep, deep_nodes) = depth_at(&crowded, budget);
    let (shallow, shallow_nodes) = depth_at(&open, budget);
    assert!(
        deep > shallow,
        "crowded {deep} plies ({deep_nodes} nodes), open {shallow} ({shallow_nodes})"
    );
}

#[test]
fn a_board_on_the_run_to_32768_gets_the_late_weight_of_the_node_budget_and_no_other_board_does() {
    // The same shape twice: its largest tile 16384 (on the run to 32768), and 8192 (before it).
    let late = [
        [16384, 8192, 128, 16],
        [32, 1024, 128, 256],
        [4, 8, 16, 2],
        [0, 2, 0, 4],
    ];
    let before = [[8192, 4096, 128, 16], [32, 1024, 128, 256], [4, 8, 16, 2], [0, 2, 0, 4]];
    let searched = |rows: &[[i64; 4]; 4], late_weight: f64| {
        let o = up_to_11_plies_within(rows, 5_000, late_weight);
        (o.stats.depth, o.stats.nodes, o.values)
    };
    // Before 16384 the weight changes nothing, to the node.
    assert_eq!(searched(&before, 1.0), searched(&before, 4.0));
    // On the run to 32768 four times the budget searches deeper, and a weight of 0 stops after one ply.
    let (plain, plain_nodes, _) = searched(&late, 1.0);
    let (weighted, weighted_nodes, _) = searched(&late, 4.0);
    let (starved, _, _) = searched(&late, 0.0);
    assert!(
        weighted > plain && weighted_nodes > plain_nodes,
        "late weight 4: {weighted} plies ({weighted_nodes} nodes); 1: {plain} ({plain_nodes})"
    );
    assert_eq!(starved, 1, "a late weight of 0 leaves no budget past the first ply");
}
