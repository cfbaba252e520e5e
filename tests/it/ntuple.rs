//! The n-tuple evaluator: values against the plain reference, the weight file (round trip, f16 bound, every bad-file
//! error), and training (it learns, it is reproducible, a resumed run equals an uninterrupted one).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use advisor2048::engine::rng::Rng;
use advisor2048::engine::{Board, Tiles};
use advisor2048::eval::ntuple::file::{self, NetFileError, TrainingSummary, ValueType, F16_RELATIVE_ERROR};
use advisor2048::eval::ntuple::{f16_to_f32, value_reference, Network, Shape};
use advisor2048::eval::{AnyEvaluator, Evaluator, EvaluatorKind, NTupleEvaluator, WeightError};
use advisor2048::search::{Depth, Profile, RunSettings, SearchSettings};
use advisor2048::sim::{simulate, SimConfig};
use advisor2048::train::{StageKey, StartPolicy, StartSource, TrainConfig, Trainer};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// A network of `shape` whose weights are seeded random numbers in [-1000, 1000).
fn random_network(shape: Shape, seed: u64) -> Network {
    let mut rng = Rng::new(seed);
    let weights = (0..shape.weight_count())
        .map(|_| (rng.below(2_000_000) as f32 - 1_000_000.0) / 1000.0)
        .collect();
    Network::from_weights(shape, weights).unwrap()
}

/// Small shapes that still cover every code path: uniform 6-cell tuples (the unrolled path), mixed sizes, stages.
fn small_shapes() -> Vec<Shape> {
    vec![
        Shape::new(vec![vec![0, 1, 2, 3], vec![0, 4, 8, 12], vec![5, 6, 9, 10]], vec![0]).unwrap(),
        Shape::new(vec![vec![0, 1, 2, 3, 4], vec![3, 6, 9, 12, 15]], vec![0, 11]).unwrap(),
        Shape::new(vec![vec![15, 14, 13], vec![0, 5, 10, 15, 1], vec![7]], vec![0, 8, 13]).unwrap(),
    ]
}

fn small_networks() -> &'static [Network] {
    static NETS: std::sync::OnceLock<Vec<Network>> = std::sync::OnceLock::new();
    NETS.get_or_init(|| {
        small_shapes()
            .into_iter()
            .enumerate()
            .map(|(i, s)| random_network(s, i as u64))
            .collect()
    })
}

fn network_4x6() -> &'static Network {
    static NET: std::sync::OnceLock<Network> = std::sync::OnceLock::new();
    NET.get_or_init(|| random_network(Shape::named("4x6", vec![0]).unwrap(), 7))
}

fn exponents() -> impl Strategy<Value = [u8; 16]> {
    // Mostly small tiles, some up to 2^17: boards a game can hold (the sum check rejects the rest).
    prop::array::uniform16(prop_oneof![6 => 0u8..=11, 2 => 12u8..=15, 1 => 16u8..=17])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The fast lookups (8 symmetric boards, nibble gathers) equal the reference (coordinate maps, digit by
    /// digit), on the fast board and on exact boards with tiles above 32768 (read as 32768).
    #[test]
    fn value_equals_the_reference(e in exponents(), which in 0usize..4) {
        let Some(tiles) = Tiles::from_exponents(e) else { return Ok(()) };
        let net = if which == 3 { network_4x6() } else { &small_networks()[which] };
        let eval = NTupleEvaluator::new(Arc::new(net.clone()));
        let expected = value_reference(net.shape(), &net.weights(), &tiles);
        let tol = 1e-3 * (1.0 + expected.abs());
        prop_assert!((eval.evaluate_tiles(&tiles) - expected).abs() < tol, "tiles {:?}: {} vs {}", e, eval.evaluate_tiles(&tiles), expected);
        if let Some(board) = tiles.to_board() {
            prop_assert!((eval.evaluate(board) - expected).abs() < tol);
        }
        let b = eval.breakdown(&tiles);
        prop_assert_eq!(b.components.len(), net.shape().tuples.len());
        let sum: f64 = b.components.iter().map(|c| c.contribution).sum();
        prop_assert!((sum - b.total).abs() < tol);
        prop_assert!((b.total - expected).abs() < tol);
    }
}

/// Every symmetry of a board has the same value (the 8 lookups per tuple cover the whole symmetry group).
#[test]
fn symmetric_boards_have_equal_values() {
    let net = network_4x6();
    let eval = NTupleEvaluator::new(Arc::new(net.clone()));
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let e: [u8; 16] = std::array::from_fn(|_| rng.below(12) as u8);
        let b = Board::from_exponents(e).unwrap();
        let mirror = Board::from_exponents(std::array::from_fn(|i| e[(i / 4) * 4 + 3 - i % 4])).unwrap();
        let rot = Board::from_exponents(std::array::from_fn(|i| e[(3 - i % 4) * 4 + i / 4])).unwrap();
        let v = eval.evaluate(b);
        assert!((eval.evaluate(b.transpose()) - v).abs() < 1e-2);
        assert!((eval.evaluate(mirror) - v).abs() < 1e-2);
        assert!((eval.evaluate(rot) - v).abs() < 1e-2);
    }
}

#[test]
fn a_tile_above_32768_reads_as_32768() {
    let net = network_4x6();
    let eval = NTupleEvaluator::new(Arc::new(net.clone()));
    let mut rows = [[0i64; 4]; 4];
    rows[0] = [65536, 2, 4, 8];
    let big = Tiles::from_rows(&rows).unwrap();
    rows[0][0] = 32768;
    let capped = Tiles::from_rows(&rows).unwrap();
    assert_eq!(eval.evaluate_tiles(&big), eval.evaluate_tiles(&capped));
}

#[test]
fn save_and_load_give_the_same_values_and_f16_stays_within_its_bound() {
    let net = random_network(small_shapes()[1].clone(), 11);
    let summary = TrainingSummary {
        games: 12,
        moves: 3456,
        rolling_mean_score: 789.5,
        seconds: 1.5,
        command: "advisor2048 train --test".into(),
    };
    let bytes = file::encode(&net, ValueType::F32, &summary, &[]).unwrap();
    let (back, info, state) = file::decode(&bytes).unwrap();
    assert!(state.is_empty());
    assert_eq!(back.weights(), net.weights());
    assert_eq!(back.shape(), net.shape());
    assert_eq!(info.header.training, summary);
    assert_eq!(info.checksum().len(), 16);
    let digest: String = Sha256::digest(&bytes[..bytes.len() - 32])
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(info.sha256, digest);

    let bytes16 = file::encode(&net, ValueType::F16, &summary, &[]).unwrap();
    assert!(bytes16.len() < bytes.len());
    let (half, info16, _) = file::decode(&bytes16).unwrap();
    assert_eq!(info16.header.value_type, ValueType::F16);
    for (a, b) in net.weights().iter().zip(half.weights().iter()) {
        let bound = f64::from(a.abs()) * F16_RELATIVE_ERROR + 1e-7;
        assert!(f64::from((a - b).abs()) <= bound, "{a} stored as {b}");
    }
    // Board values move by at most the sum of their lookups' bounds.
    let (e32, e16) = (
        NTupleEvaluator::new(Arc::new(net)),
        NTupleEvaluator::new(Arc::new(half)),
    );
    let mut rng = Rng::new(5);
    for _ in 0..100 {
        let b = Board::from_exponents(std::array::from_fn(|_| rng.below(14) as u8)).unwrap();
        let bound = 16.0 * 1000.0 * F16_RELATIVE_ERROR + 1e-3;
        assert!((e32.evaluate(b) - e16.evaluate(b)).abs() <= bound);
    }
}

/// Re-signs a file whose body was edited, so that a later check (not the checksum) is what refuses it.
fn resign(mut body: Vec<u8>) -> Vec<u8> {
    let digest = Sha256::digest(&body);
    body.extend_from_slice(&digest);
    body
}

#[test]
fn every_bad_file_gets_its_own_error() {
    let net = random_network(small_shapes()[0].clone(), 1);
    let good = file::encode(&net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let body = good[..good.len() - 32].to_vec();

    let truncated = file::decode(&good[..20]).unwrap_err();
    assert!(matches!(truncated, NetFileError::Truncated(20)), "{truncated}");

    let mut magic = good.clone();
    magic[0] = b'X';
    let e = file::decode(&magic).unwrap_err();
    assert!(matches!(e, NetFileError::Magic(_)), "{e}");
    assert!(e.to_string().contains("wrong magic"));

    let mut version = body.clone();
    version[8] = 9;
    let e = file::decode(&resign(version)).unwrap_err();
    assert!(matches!(e, NetFileError::Version { found: 9 }), "{e}");
    assert!(e.to_string().contains("version 9"));

    let mut flipped = good.clone();
    let last_payload = flipped.len() - 40;
    flipped[last_payload] ^= 0x40;
    let e = file::decode(&flipped).unwrap_err();
    assert!(matches!(e, NetFileError::Checksum { .. }), "{e}");
    assert!(e.to_string().contains("checksum mismatch"));

    // Cut short inside the payload: the stored checksum no longer matches what is left.
    let e = file::decode(&good[..good.len() - 100]).unwrap_err();
    assert!(matches!(e, NetFileError::Checksum { .. }), "{e}");

    // A header that names another shape (a tuple more) than the payload holds.
    let (info, start) = file::inspect(&good).unwrap();
    // The same file with another header, re-signed.
    let with_header = |header: &file::NetHeader| {
        let header = serde_json::to_vec(header).unwrap();
        let mut out = body[..12].to_vec();
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&body[start..]);
        resign(out)
    };
    let mut header = info.header.clone();
    header.tuples.push(vec![1, 2, 3, 4]);
    let e = file::decode(&with_header(&header)).unwrap_err();
    assert!(matches!(e, NetFileError::ShapeMismatch(_)), "{e}");
    assert!(e.to_string().contains("needs"), "{e}");

    // A header whose shape is impossible.
    let mut header = info.header.clone();
    header.tuples[0] = vec![0, 16];
    let e = file::decode(&with_header(&header)).unwrap_err();
    assert!(matches!(e, NetFileError::Shape(_)), "{e}");
    assert!(e.to_string().contains("cell 16"), "{e}");

    // A header that is not JSON.
    let mut garbage = body[..16].to_vec();
    garbage.extend_from_slice(b"not json");
    garbage[12..16].copy_from_slice(&8u32.to_le_bytes());
    let e = file::decode(&resign(garbage)).unwrap_err();
    assert!(matches!(e, NetFileError::Header(_)), "{e}");
}

#[test]
fn net_info_names_the_problem_and_exits_non_zero() {
    let dir = std::env::temp_dir().join(format!("advisor2048-netinfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = random_network(small_shapes()[0].clone(), 2);
    let good = dir.join("good.a2n");
    let info = file::save(&good, &net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let bin = env!("CARGO_BIN_EXE_advisor2048");
    let out = std::process::Command::new(bin)
        .args(["net", "info"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(info.checksum()), "{text}");
    assert!(text.contains("shape      3x4, 1 stage"), "{text}");

    let bytes = std::fs::read(&good).unwrap();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("truncated.a2n", bytes[..30].to_vec(), "truncated"),
        (
            "magic.a2n",
            [b"NOTANET!".as_slice(), &bytes[8..]].concat(),
            "wrong magic",
        ),
        (
            "flipped.a2n",
            {
                let mut b = bytes.clone();
                let k = b.len() - 33;
                b[k] ^= 1;
                b
            },
            "checksum mismatch",
        ),
    ];
    for (name, content, says) in cases {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let out = std::process::Command::new(bin)
            .args(["net", "info"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let out = std::process::Command::new(bin)
        .args(["best-move", "0000000000000112", "--profile", "learned", "--weights"])
        .arg(dir.join("truncated.a2n"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `net average` writes the weight-by-weight mean of its files (f16: within the stored precision), a network that
/// values boards at the mean of their values, names what it averaged, and refuses files of another shape by position.
#[test]
fn net_average_writes_the_mean_network_and_refuses_another_shape() {
    let dir = std::env::temp_dir().join(format!("advisor2048-netavg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = small_shapes()[0].clone();
    let nets: Vec<Network> = (11..14).map(|s| random_network(shape.clone(), s)).collect();
    let mut paths = Vec::new();
    for (i, net) in nets.iter().enumerate() {
        let p = dir.join(format!("n{i}.a2n"));
        let training = TrainingSummary {
            moves: 100 * (i as u64 + 1),
            ..TrainingSummary::default()
        };
        file::save(&p, net, ValueType::F32, &training, &[]).unwrap();
        paths.push(p);
    }
    let out_path = dir.join("mean.a2n");
    let bin = env!("CARGO_BIN_EXE_advisor2048");
    let out = std::process::Command::new(bin)
        .args(["net", "average"])
        .args(&paths)
        .arg("--out")
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mean, info, state) = file::load(&out_path).unwrap();
    assert!(state.is_empty(), "a shipped file carries no trainer state");
    assert_eq!(info.header.value_type, ValueType::F16);
    assert_eq!(info.header.training.moves, 300, "the most trained network's summary");
    assert!(
        info.header.training.command.contains("net average"),
        "{:?}",
        info.header.training
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(info.checksum()));
    let (w, ws): (_, Vec<_>) = (mean.weights(), nets.iter().map(|n| n.weights()).collect());
    for i in 0..w.len() {
        let expected = (ws[0][i] + ws[1][i] + ws[2][i]) / 3.0;
        assert!(
            f64::from((w[i] - expected).abs()) <= f64::from(expected.abs()) * F16_RELATIVE_ERROR + 1e-3,
            "weight {i}: {} against {expected}",
            w[i]
        );
    }
    let mut rng = Rng::new(5);
    for _ in 0..100 {
        let board = Board(rng.next_u64() & 0x7777_7777_7777_7777);
        let t = board.transpose();
        let expected = nets.iter().map(|n| n.value(board, t)).sum::<f64>() / 3.0;
        let scale: f64 = nets.iter().map(|n| n.value(board, t).abs()).sum::<f64>() + 64.0;
        assert!((mean.value(board, t) - expected).abs() <= scale * 1e-3, "{board:?}");
    }
    let other = dir.join("other.a2n");
    file::save(
        &other,
        &random_network(small_shapes()[1].clone(), 1),
        ValueType::F32,
        &TrainingSummary::default(),
        &[],
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args(["net", "average"])
        .arg(&paths[0])
        .arg(&other)
        .arg("--out")
        .arg(dir.join("bad.a2n"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "another shape accepted");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("network 2"), "{err}");
    assert!(!dir.join("bad.a2n").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ntuple_without_a_network_says_how_to_load_one() {
    let e = EvaluatorKind::NTuple.default_evaluator().unwrap_err();
    assert_eq!(e, WeightError::NoNetwork);
    assert!(e.to_string().contains("--weights FILE"));
    let net = Arc::new(random_network(small_shapes()[0].clone(), 3));
    let err = EvaluatorKind::NTuple
        .with_network(Some(&net), &[("empty".into(), 1.0)])
        .unwrap_err();
    assert!(matches!(err, WeightError::Unknown { .. }));
    assert!(matches!(
        EvaluatorKind::NTuple.with_network(Some(&net), &[]).unwrap(),
        AnyEvaluator::NTuple(_)
    ));
}

fn quick_config(games: u64, seed: u64) -> TrainConfig {
    TrainConfig {
        games: Some(games),
        seed,
        threads: 1,
        ..TrainConfig::default()
    }
}

fn train(shape: &Shape, config: TrainConfig) -> Trainer {
    let t = Trainer::new(shape.clone(), config);
    t.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    t
}

/// A small shape that trains in a fraction of a second (4-cell lines and squares).
fn small_trainable() -> Shape {
    Shape::new(
        vec![
            vec![0, 1, 2, 3],
            vec![4, 5, 6, 7],
            vec![0, 1, 4, 5],
            vec![1, 2, 5, 6],
            vec![5, 6, 9, 10],
        ],
        vec![0],
    )
    .unwrap()
}

#[test]
fn one_thread_and_a_seed_train_the_same_network_and_a_resumed_run_equals_an_uninterrupted_one() {
    let shape = small_trainable();
    let a = train(&shape, quick_config(300, 9));
    let b = train(&shape, quick_config(300, 9));
    assert_eq!(a.network().weights(), b.network().weights());
    assert_eq!(a.progress().moves, b.progress().moves);
    let other = train(&shape, quick_config(300, 10));
    assert_ne!(a.network().weights(), other.network().weights());

    // 150 games, saved as a checkpoint file, resumed to 300: the same network as 300 at once.
    let first = train(&shape, quick_config(150, 9));
    let bytes = file::encode(&first.network(), ValueType::F32, &first.summary(), &first.state_bytes()).unwrap();
    let (net, _, state) = file::decode(&bytes).unwrap();
    let resumed = Trainer::resume(net, &state, &TrainingSummary::default(), quick_config(300, 9)).unwrap();
    resumed.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    assert_eq!(resumed.progress().games, 300);
    assert_eq!(resumed.progress().moves, a.progress().moves);
    assert_eq!(resumed.network().weights(), a.network().weights());

    // A checkpoint written straight from the tables (streamed) is the same file as one encoded from a copy.
    let dir = std::env::temp_dir().join(format!("advisor2048-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let streamed = dir.join("first.ckpt");
    let info = first.save_checkpoint(&streamed).unwrap();
    assert_eq!(std::fs::read(&streamed).unwrap(), bytes);
    assert_eq!(info.file_bytes, bytes.len() as u64);
    let exported = dir.join("first.a2n");
    first.export(&exported).unwrap();
    let shipped_bytes = file::encode(&first.network(), ValueType::F16, &first.summary(), &[]).unwrap();
    assert_eq!(std::fs::read(&exported).unwrap(), shipped_bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Mean score of `games` seeded greedy (1-ply) games.
fn greedy_mean(evaluator: AnyEvaluator, profile: Profile, games: u64) -> f64 {
    let settings = SearchSettings {
        depth: Depth::Plies(1),
        ..profile.settings()
    };
    let config = SimConfig {
        threads: 2,
        ..SimConfig::new(games, 2024, settings, evaluator)
    };
    let report = simulate(&config, &Default::default(), |_| {});
    assert_eq!(report.games.len() as u64, games);
    report.games.iter().map(|g| g.score as f64).sum::<f64>() / games as f64
}

#[test]
fn a_briefly_trained_network_plays_clearly_better_than_untrained_and_than_tuned_at_one_ply() {
    let shape = small_trainable();
    let trained = train(&shape, quick_config(3000, 1));
    let learned = |net: Network| AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(net)));
    let trained_mean = greedy_mean(learned(trained.network()), Profile::Learned, 40);
    let untrained_mean = greedy_mean(learned(Network::filled(shape, 0.0)), Profile::Learned, 40);
    let tuned_mean = greedy_mean(EvaluatorKind::Tuned.default_evaluator().unwrap(), Profile::Tuned, 40);
    eprintln!("greedy means: trained {trained_mean:.0}, untrained {untrained_mean:.0}, tuned {tuned_mean:.0}");
    assert!(
        trained_mean > 2.0 * untrained_mean,
        "trained {trained_mean} vs untrained {untrained_mean}"
    );
    assert!(
        trained_mean > 1.5 * tuned_mean,
        "trained {trained_mean} vs tuned {tuned_mean}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// Profile `learned` searches exactly as the plain recursive reference search with the network's reference value
    /// as h (reward weight 1, terminal 0): at 1 and 3 plies, with and without the transposition table, on 1 or 2
    /// threads, with the default cut-off and one that turns whole layers into leaves. With two stages (the second
    /// from 2048 on), every board of the search is valued in the stage of the root board (one stage per decision).
    #[test]
    fn learned_search_equals_the_reference_search(
        e in prop::array::uniform16(prop_oneof![45 => Just(0u8), 40 => 1u8..=5, 15 => 6u8..=11]),
        depth in prop_oneof![Just(1u32), Just(3u32)],
        tt in any::<bool>(),
        threads in 1usize..=2,
        prob_cutoff in prop_oneof![Just(1e-4), Just(0.05)],
        which in 0usize..2,
    ) {
        use advisor2048::engine::reference::Grid;
        use advisor2048::eval::ntuple::value_reference_in;
        use advisor2048::search::reference::{root_values_reference, ReferenceParams};
        use advisor2048::search::{search, StopHandle};
        let tiles = Tiles::from_exponents(e).unwrap();
        let root_max = e.iter().copied().max().unwrap_or(0);
        let net = &small_networks()[which];
        let eval = AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(net.clone())));
        let settings = SearchSettings {
            depth: Depth::Plies(depth),
            prob_cutoff,
            run: RunSettings { tt_bits: if tt { Some(12) } else { None }, threads, ..RunSettings::default() },
            ..Profile::Learned.settings()
        };
        let o = search(&tiles, &eval, &settings, &StopHandle::new());
        let grid: Grid = tiles.to_rows().iter().map(|r| r.to_vec()).collect();
        let h = |g: &Grid| {
            let rows: Vec<Vec<i64>> = g.iter().map(|r| r.iter().map(|&v| i64::from(v)).collect()).collect();
            value_reference_in(net.shape(), &net.weights(), &Tiles::from_rows(&rows).unwrap(), root_max)
        };
        let params = ReferenceParams { reward_weight: 1.0, terminal_heuristic: false, prob_cutoff };
        let reference = root_values_reference(&grid, depth, &h, &params);
        for (a, b) in o.values.iter().zip(reference) {
            match (a, b) {
                // f32 sums (and f32 table entries) against f64: a relative 1e-5 of the magnitudes involved.
                (Some(a), Some(b)) => prop_assert!((a - b).abs() <= 1e-5 * (b.abs() + 1e4), "{} vs {}", a, b),
                (a, b) => prop_assert_eq!(a.is_some(), b.is_some()),
            }
        }
    }
}

/// f16 stops at 65504; a trained network's weights can be larger: the file stores them scaled by a power of two.
#[test]
fn f16_keeps_weights_beyond_its_range() {
    let shape = small_shapes()[0].clone();
    let mut weights = vec![0.0f32; shape.weight_count()];
    weights[0] = 1_000_000.0;
    weights[1] = -250_000.5;
    weights[2] = 3.25;
    let net = Network::from_weights(shape, weights.clone()).unwrap();
    let bytes = file::encode(&net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let (back, info, _) = file::decode(&bytes).unwrap();
    assert!(info.header.scale > 1.0);
    for (a, b) in weights.iter().zip(back.weights().iter()) {
        assert!(
            f64::from((a - b).abs()) <= f64::from(a.abs()) * F16_RELATIVE_ERROR + 1e-3,
            "{a} stored as {b}"
        );
    }
}

#[test]
fn f16_to_f32_is_exact_for_every_finite_pattern() {
    let mut finite = 0;
    for h in 0..=u16::MAX {
        if h & 0x7c00 == 0x7c00 {
            continue; // infinities and NaNs: no network holds one
        }
        finite += 1;
        let expected = half::f16::from_bits(h).to_f32();
        assert_eq!(
            f16_to_f32(h).to_bits(),
            expected.to_bits(),
            "pattern {h:#06x}: {expected}"
        );
    }
    assert_eq!(finite, 63_488);
}

/// `net`'s weights, held as f32.
fn widened(net: &Network) -> Network {
    Network::from_weights(net.shape().clone(), net.weights().into_owned()).unwrap()
}

#[test]
fn an_f16_file_stays_f16_in_memory_with_exactly_the_values_of_its_weights_as_f32() {
    // Weights up to 5e6 need a file scale of 128; the shapes cover stages, mixed tuple sizes and 6-cell tuples.
    let mut rng = Rng::new(77);
    let six = Shape::new(vec![vec![0, 1, 2, 4, 5, 6]], vec![0]).unwrap();
    let shapes = small_shapes().into_iter().chain([six]);
    for (k, shape) in shapes.enumerate() {
        let magnitude = if k == 1 { 5_000_000 } else { 2_000 };
        let weights = (0..shape.weight_count())
            .map(|_| (rng.below(2 * magnitude) as f32 - magnitude as f32) / 1000.0 * 997.0)
            .collect();
        let net = Network::from_weights(shape, weights).unwrap();
        let bytes = file::encode(&net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
        let (f16, info, _) = file::decode(&bytes).unwrap();
        assert!(f16.is_f16(), "{}", f16.shape().describe());
        assert_eq!(f16.weight_bytes(), 2 * f16.shape().weight_count());
        if k == 1 {
            assert!(info.header.scale >= 128.0, "scale {}", info.header.scale);
        }
        let f32 = widened(&f16);
        assert!(!f32.is_f16());
        assert_eq!(f32.weight_bytes(), 4 * f16.shape().weight_count());
        for _ in 0..2000 {
            let b = Board::from_exponents(std::array::from_fn(|_| rng.below(16) as u8)).unwrap();
            let t = b.transpose();
            assert_eq!(f16.value(b, t).to_bits(), f32.value(b, t).to_bits(), "{b:?}");
            assert_eq!(f16.contributions(b), f32.contributions(b));
        }
        // Searches agree to the bit as well.
        let (e16, e32) = (
            AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(f16))),
            AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(f32))),
        );
        let settings = SearchSettings {
            depth: Depth::Plies(3),
            ..Profile::Learned.settings()
        };
        let board = Tiles::from_hex("0123456789a00000").unwrap();
        let stop = Default::default();
        let (a, b) = (
            advisor2048::search::search(&board, &e16, &settings, &stop),
            advisor2048::search::search(&board, &e32, &settings, &stop),
        );
        assert_eq!(a.best, b.best);
        assert_eq!(
            a.values.map(|v| v.map(f64::to_bits)),
            b.values.map(|v| v.map(f64::to_bits))
        );
    }
}

#[test]
fn an_f16_file_with_a_scale_that_is_no_power_of_two_is_widened_to_f32() {
    let net = random_network(small_shapes()[0].clone(), 8);
    let bytes = file::encode(&net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let (plain, info, _) = file::decode(&bytes).unwrap();
    assert_eq!(info.header.scale, 1.0);
    // Same length, so the header's length field still holds; signed again, so only the scale differs.
    let body = &bytes[..bytes.len() - 32];
    let at = body
        .windows(11)
        .position(|w| w == b"\"scale\":1.0")
        .expect("the header names its scale");
    let mut edited = body.to_vec();
    edited[at..at + 11].copy_from_slice(b"\"scale\":1.5");
    let (scaled, info, _) = file::decode(&resign(edited)).unwrap();
    assert_eq!(info.header.scale, 1.5);
    assert!(!scaled.is_f16());
    for (a, b) in plain.weights().iter().zip(scaled.weights().iter()) {
        assert_eq!(a * 1.5, *b);
    }
}

/// A small two-stage network: a second weight set from 256 on.
fn small_two_stage() -> Shape {
    Shape::new(small_trainable().tuples, vec![0, 8]).unwrap()
}

#[test]
fn stage_pools_hold_only_boards_of_their_stage_and_games_start_from_them() {
    let key: StageKey = "256".parse().unwrap();
    let pair: StageKey = "256+128".parse().unwrap();
    let config = TrainConfig {
        start: StartPolicy {
            source: StartSource::StagePools {
                keys: vec![key.clone(), pair.clone()],
                pool_size: 50,
            },
            halving: None,
        },
        ..quick_config(600, 3)
    };
    let t = train(&small_trainable(), config);
    let p = t.progress();
    assert_eq!(p.games, 600);
    let (pool, pool_pair) = (p.stage_pool(0), p.stage_pool(1));
    assert!(!pool.is_empty() && pool.len() <= 50, "{}", pool.len());
    assert!(!pool_pair.is_empty() && pool_pair.len() <= 50);
    assert!(pool.iter().all(|&b| key.holds(b)));
    assert!(pool_pair.iter().all(|&b| pair.holds(b)));
    // Two turns in three start from a pool once the pools fill: far more than none.
    assert!(p.restarted_games > 200, "{}", p.restarted_games);
}

#[test]
fn a_frozen_stage_keeps_its_weights_bit_for_bit_while_the_next_one_learns() {
    let shape = small_two_stage();
    let first = train(&shape, quick_config(300, 5));
    let before = first.network();
    let per = shape.weights_per_stage();
    let frozen = Trainer::resume(
        before.clone(),
        &first.state_bytes(),
        &TrainingSummary::default(),
        TrainConfig {
            frozen_below: 1,
            ..quick_config(900, 5)
        },
    )
    .unwrap();
    frozen.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    let after = frozen.network();
    let (b, a) = (before.weights(), after.weights());
    assert_eq!(b[..per], a[..per], "the frozen stage moved");
    assert_ne!(b[per..], a[per..], "the later stage did not learn");
}

#[test]
fn training_continues_from_a_shipped_file_with_its_values_and_new_state() {
    let shape = small_trainable();
    let trained = train(&shape, quick_config(300, 2));
    trained.add_command("first leg".to_owned());
    let shipped = file::encode(&trained.network(), ValueType::F16, &trained.summary(), &[]).unwrap();
    let (net, info, state) = file::decode(&shipped).unwrap();
    assert!(state.is_empty());
    let values = net.weights().into_owned();
    let prior = 500.0;
    let resumed = Trainer::resume(
        net,
        &state,
        &info.header.training,
        TrainConfig {
            coherence_prior: prior,
            ..quick_config(50, 2)
        },
    )
    .unwrap();
    // The weights are the file's; the counters start anew; a trained weight's accumulators are (0, prior), an
    // untrained one's (0, 0).
    let tables = resumed.tables();
    assert!((0..tables.weight_count()).all(|i| tables.weight(i) == values[i]));
    assert_eq!(resumed.progress().games, 0);
    let trained_at = values.iter().position(|&w| w != 0.0).unwrap();
    let untrained_at = values.iter().position(|&w| w == 0.0).unwrap();
    assert_eq!(tables.accumulator(trained_at), (0.0, prior));
    assert_eq!(tables.accumulator(untrained_at), (0.0, 0.0));
    resumed.add_command("second leg".to_owned());
    resumed.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    assert_eq!(resumed.progress().games, 50);
    assert_ne!(resumed.network().weights(), values.as_slice());
    // The files it writes count the file's training and this run's, and so does a run resumed from its checkpoint
    // (which ignores the summary it is given: the checkpoint keeps its own).
    let first_leg = trained.summary();
    let both = resumed.summary();
    assert_eq!(both.games, first_leg.games + 50);
    assert_eq!(both.moves, first_leg.moves + resumed.progress().moves);
    assert!(both.moves > first_leg.moves);
    assert_eq!(both.seconds, first_leg.seconds + resumed.progress().seconds);
    assert_eq!(both.command, "first leg && second leg");
    let exported = file::encode(&resumed.network(), ValueType::F16, &both, &[]).unwrap();
    assert_eq!(file::decode(&exported).unwrap().1.header.training, both);
    let (net, _, _) = file::decode(&shipped).unwrap();
    let unrelated = TrainingSummary {
        games: 1,
        ..TrainingSummary::default()
    };
    let continued = Trainer::resume(net, &resumed.state_bytes(), &unrelated, quick_config(50, 2)).unwrap();
    assert_eq!(continued.summary(), both);
    // Without temporal coherence no accumulators are kept, and a checkpoint of it has none either.
    let (net, _, _) = file::decode(&shipped).unwrap();
    let plain = Trainer::resume(
        net,
        &[],
        &TrainingSummary::default(),
        TrainConfig {
            tc: false,
            ..quick_config(10, 2)
        },
    )
    .unwrap();
    assert!(!plain.tables().has_coherence());
    assert_eq!(plain.tables().bytes(), 4 * shape.weight_count());
}

/// The four boards valued together (lookups prefetched first) get the values of one board at a time, bit for bit,
/// for the compile-time sets (4x6, 8x6, with stages), shapes grouped at load, and f32 and f16 weights.
#[test]
fn four_boards_at_once_are_valued_as_one_at_a_time() {
    let mut nets: Vec<Network> = small_networks().to_vec();
    nets.push(network_4x6().clone());
    nets.push(random_network(Shape::named("8x6", vec![0, 14]).unwrap(), 3));
    let half = network_4x6()
        .weights()
        .iter()
        .map(|&w| half::f16::from_f32(w / 64.0).to_bits())
        .collect();
    nets.push(Network::from_f16(Shape::named("4x6", vec![0]).unwrap(), half, 64.0).unwrap());
    let mut rng = Rng::new(31);
    for net in &nets {
        for _ in 0..500 {
            let boards: [Option<(Board, Board)>; 4] = std::array::from_fn(|_| {
                let b = Board(rng.next_u64());
                (rng.below(5) != 0).then(|| (b, b.transpose()))
            });
            let one_by_one = boards.map(|b| b.map(|(b, t)| net.value(b, t).to_bits()));
            let together = net.values_of_four(boards).map(|v| v.map(f64::to_bits));
            assert_eq!(together, one_by_one, "{:?}", net.shape());
        }
    }
}

/// A network of two stages (the second from the 8 tile on) whose second stage values every board at -1e6 per
/// lookup: a search on a board of the first stage values the boards after its moves, and every board below them,
/// in the first stage, so the move that makes the 8 (the largest reward) is still the best one, at 1 and 3 plies.
#[test]
fn a_search_values_its_whole_tree_in_the_stage_of_the_root_board() {
    use advisor2048::search::{search, StopHandle};
    let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0, 3]).unwrap();
    let per = shape.weights_per_stage();
    let weights = (0..shape.weight_count())
        .map(|i| if i < per { 0.0 } else { -1e6 })
        .collect();
    let net = Arc::new(Network::from_weights(shape, weights).unwrap());
    let eval = AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::clone(&net)));
    // 4 4 2 _ on the top row: left (or right) merges the 4s into an 8 for 8 points.
    let tiles = Tiles::from_rows(&[vec![4, 4, 2, 0], vec![0; 4], vec![0; 4], vec![0; 4]]).unwrap();
    for depth in [1, 3] {
        let settings = SearchSettings {
            depth: Depth::Plies(depth),
            ..Profile::Learned.settings()
        };
        let o = search(&tiles, &eval, &settings, &StopHandle::new());
        assert_eq!(
            o.best.map(|d| d.to_string()),
            Some("left".to_owned()),
            "depth {depth}: {:?}",
            o.values
        );
        for v in o.values.iter().flatten() {
            assert!(
                *v >= 0.0,
                "depth {depth}: a value from the second stage: {:?}",
                o.values
            );
        }
    }
    // On a board of the second stage, its own weights value the tree.
    let late = Tiles::from_rows(&[vec![8, 4, 2, 0], vec![0; 4], vec![0; 4], vec![0; 4]]).unwrap();
    let o = search(
        &late,
        &eval,
        &SearchSettings {
            depth: Depth::Plies(1),
            ..Profile::Learned.settings()
        },
        &StopHandle::new(),
    );
    assert!(o.values.iter().flatten().all(|v| *v < -1e6), "{:?}", o.values);
}

/// A network split into files: a stage list and one-stage parts. Each stage values boards exactly as its part does
/// on its own (the parts' f16 scales differ: the smaller is brought to the larger, exactly for these weights), and a
/// missing, corrupt or replaced part is refused, naming its file, at load time and when a server starts.
#[test]
fn a_stage_list_loads_its_parts_as_one_network_and_names_a_bad_part() {
    use advisor2048::eval::ntuple::staged::{self, StagedError};
    let dir = std::env::temp_dir().join(format!("advisor2048-staged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = small_shapes()[0].clone();
    let open = random_network(shape.clone(), 11);
    // Weights up to 200,000: stored with a larger f16 scale than the first part's.
    let late = Network::from_weights(shape.clone(), open.weights().iter().map(|w| w * 200.0 + 1.0).collect()).unwrap();
    let (open_path, late_path) = (dir.join("open.a2n"), dir.join("late.a2n"));
    file::save(&open_path, &open, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    file::save(&late_path, &late, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let list_path = dir.join("net.json");
    let (list, _) = staged::write_list(
        &list_path,
        &[(0, vec![open_path.clone()]), (256, vec![late_path.clone()])],
    )
    .unwrap();
    assert_eq!(list.stages[1].file, "late.a2n");
    let net = staged::load_any(&list_path).unwrap();
    assert_eq!(net.shape().stages, vec![0, 8]);
    assert_eq!(net.shape().describe(), "3x4, 2 stages (from tiles 0, 256)");
    let (open16, late16) = (file::load(&open_path).unwrap().0, file::load(&late_path).unwrap().0);
    assert_ne!(open16.f16_scale(), late16.f16_scale());
    let mut rng = Rng::new(5);
    // Ten spawns, then a top-left tile of any stage.
    let random_board = |rng: &mut Rng| {
        let mut board = Board::default();
        for _ in 0..10 {
            board = board.spawn(rng).unwrap_or(board);
        }
        Board(board.0 | (u64::from(rng.below(12) as u8) << 60))
    };
    for _ in 0..500 {
        let board = random_board(&mut rng);
        let t = board.transpose();
        let part = if board.max_exponent() >= 8 { &late16 } else { &open16 };
        let (got, want) = (net.value(board, t), part.value(board, t));
        assert!(
            (got - want).abs() <= 1e-3 * want.abs().max(1.0),
            "{board:?}: {got} against {want}"
        );
    }
    // The network's checksum is the list's.
    let digest = Sha256::digest(std::fs::read(&list_path).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(net.info.as_ref().unwrap().checksum(), &hex[..16]);
    // An f32 part beside an f16 one: the network holds f32 weights, each stage exactly its part's values.
    let open32_path = dir.join("open32.a2n");
    file::save(&open32_path, &open, ValueType::F32, &TrainingSummary::default(), &[]).unwrap();
    let mixed_path = dir.join("mixed.json");
    staged::write_list(
        &mixed_path,
        &[(0, vec![open32_path.clone()]), (256, vec![late_path.clone()])],
    )
    .unwrap();
    let mixed = staged::load_any(&mixed_path).unwrap();
    assert!(!mixed.is_f16());
    let open32 = file::load(&open32_path).unwrap().0;
    for _ in 0..200 {
        let board = random_board(&mut rng);
        let t = board.transpose();
        let part = if board.max_exponent() >= 8 { &late16 } else { &open32 };
        assert_eq!(mixed.value(board, t), part.value(board, t), "{board:?}");
    }

    // A corrupt part: its checksum error names its file.
    let good_late = std::fs::read(&late_path).unwrap();
    let mut bad = good_late.clone();
    let k = bad.len() - 40;
    bad[k] ^= 1;
    std::fs::write(&late_path, &bad).unwrap();
    let e = staged::load_any(&list_path).unwrap_err();
    assert!(matches!(e, StagedError::Part { stage: 1, .. }), "{e}");
    assert!(
        e.to_string().contains("late.a2n") && e.to_string().contains("checksum"),
        "{e}"
    );
    // Another valid network in its place: refused against the list's checksum.
    std::fs::copy(&open_path, &late_path).unwrap();
    let e = staged::load_any(&list_path).unwrap_err();
    assert!(matches!(e, StagedError::PartChecksum { stage: 1, .. }), "{e}");
    // A missing part.
    std::fs::remove_file(&late_path).unwrap();
    let e = staged::load_any(&list_path).unwrap_err();
    assert!(e.to_string().contains("late.a2n"), "{e}");
    // A server given that list does not start, and says which file.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["serve", "--listen", "127.0.0.1:0", "--weights"])
        .arg(&list_path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("late.a2n"), "{stderr}");
    // Restored, the list loads again; a list that is not JSON is named as such.
    std::fs::write(&late_path, &good_late).unwrap();
    assert!(staged::load_any(&list_path).is_ok());
    std::fs::write(dir.join("junk.json"), b"{\"format\": 1}").unwrap();
    let e = staged::load_any(&dir.join("junk.json")).unwrap_err();
    assert!(matches!(e, StagedError::List { .. }), "{e}");
    // Stages out of order are refused when the list is written.
    let e = staged::write_list(
        &dir.join("bad.json"),
        &[(0, vec![open_path.clone()]), (0, vec![late_path.clone()])],
    )
    .unwrap_err();
    assert!(e.to_string().contains("increase"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Stages that read different tuples (a narrow opening stage beside a wider late one, each stage's tuples the
/// first of the widest's), one of them kept in two files: the stage list loads them as one network that values
/// each board exactly as its stage's files do on their own, at every entry the search uses; such a network is not
/// one weight file and is not trained, and a stage whose tuples are not the first of the widest's is refused,
/// naming its file.
#[test]
fn stages_of_different_tuples_load_from_several_files_and_value_boards_as_their_own_files() {
    use advisor2048::eval::ntuple::staged::{self, StagedError};
    let dir = std::env::temp_dir().join(format!("advisor2048-wider-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let narrow = random_network(
        Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0]).unwrap(),
        21,
    );
    let wide_shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9, 13, 14]], vec![0]).unwrap();
    let wide = random_network(wide_shape.clone(), 22);
    // The wide stage in two files: its first two tuples, then its third.
    let (head, tail) = (wide.tuple_range(0..2).unwrap(), wide.tuple_range(2..3).unwrap());
    assert!(wide.tuple_range(2..4).is_none() && wide.tuple_range(1..1).is_none());
    let save = |name: &str, net: &Network| {
        let path = dir.join(name);
        file::save(&path, net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
        path
    };
    let (narrow_path, head_path, tail_path, wide_path) = (
        save("narrow.a2n", &narrow),
        save("head.a2n", &head),
        save("tail.a2n", &tail),
        save("wide.a2n", &wide),
    );
    let list_path = dir.join("net.json");
    let (list, net) = staged::write_list(
        &list_path,
        &[
            (0, vec![narrow_path.clone()]),
            (256, vec![head_path.clone(), tail_path.clone()]),
        ],
    )
    .unwrap();
    assert_eq!(list.stages[1].more_tuples.len(), 1);
    assert_eq!(list.files().len(), 3);
    assert_eq!(
        net.shape().describe(),
        "3x4, 2 stages (from tiles 0, 256), reading the first 2, 3 tuples"
    );
    let net = staged::load_any(&list_path).unwrap();
    assert_eq!(net.shape().weight_count(), 2 * 65536 + 3 * 65536);
    let (narrow16, wide16) = (file::load(&narrow_path).unwrap().0, file::load(&wide_path).unwrap().0);
    assert_eq!(narrow16.f16_scale(), wide16.f16_scale());
    // Stage k as a network of its own is its files' network, weight for weight.
    assert_eq!(net.stage(0).unwrap().weights(), narrow16.weights());
    assert_eq!(net.stage(1).unwrap().weights(), wide16.weights());
    assert_eq!(net.stage(1).unwrap().shape(), &wide_shape);
    let mut rng = Rng::new(9);
    for _ in 0..500 {
        let mut board = Board::default();
        for _ in 0..10 {
            board = board.spawn(&mut rng).unwrap_or(board);
        }
        let board = Board(board.0 | (u64::from(rng.below(12) as u8) << 60));
        let t = board.transpose();
        let own = if board.max_exponent() >= 8 { &wide16 } else { &narrow16 };
        assert_eq!(net.value(board, t), own.value(board, t), "{board:?}");
        for (k, part) in [&narrow16, &wide16].into_iter().enumerate() {
            let want = part.value(board, t);
            assert_eq!(net.value_in(k, board, t), want, "stage {k}, {board:?}");
            let four = net.values_of_four_in(Some(k), [Some((board, t)), None, Some((board, t)), None]);
            assert_eq!(four, [Some(want), None, Some(want), None], "stage {k}");
            let first = net.values_of_first(Some(k), [(board, t); 4], 3);
            assert_eq!(&first[..3], &[want; 3], "stage {k}");
        }
        let parts = net.contributions(board);
        assert_eq!(parts.len(), own.shape().tuples.len());
        let (sum, value) = (parts.iter().sum::<f64>(), own.value(board, t));
        assert!(
            (sum - value).abs() <= 1e-3 * value.abs().max(1.0),
            "{sum} against {value}"
        );
    }
    // Not one weight file, not trained.
    let e = file::save(
        &dir.join("one.a2n"),
        &net,
        ValueType::F16,
        &TrainingSummary::default(),
        &[],
    )
    .unwrap_err();
    assert!(matches!(e, NetFileError::MixedStages(_)), "{e}");
    let e = Trainer::resume(net.clone(), &[], &TrainingSummary::default(), TrainConfig::default()).err();
    assert!(e.is_some_and(|e| e.to_string().contains("different tuples")));
    // A stage whose tuples are not the first of the widest's: refused, naming its file.
    let e = staged::write_list(
        &dir.join("bad.json"),
        &[(0, vec![tail_path.clone()]), (256, vec![wide_path.clone()])],
    )
    .unwrap_err();
    assert!(matches!(e, StagedError::PartShape { stage: 0, .. }), "{e}");
    assert!(
        e.to_string().contains("tail.a2n") && e.to_string().contains("first tuples"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A network widened to more tuples values every board exactly as before (the new tables are 0), in every stage,
/// and a resumed training run teaches the new tables; a set that does not begin with the network's tuples is refused.
#[test]
fn a_widened_network_values_every_board_as_before_and_training_fills_its_new_tables() {
    let narrow = random_network(
        Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0, 9]).unwrap(),
        31,
    );
    let wide = narrow
        .widen(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![0, 4, 8, 12]])
        .unwrap();
    assert_eq!(wide.shape().stages, vec![0, 9]);
    assert_eq!(wide.shape().weight_count(), 2 * 3 * 65536);
    let mut rng = Rng::new(4);
    for _ in 0..500 {
        let b = Board(rng.next_u64());
        let t = b.transpose();
        assert_eq!(wide.value(b, t), narrow.value(b, t), "{b:?}");
        for k in 0..2 {
            assert_eq!(wide.value_in(k, b, t), narrow.value_in(k, b, t), "stage {k}, {b:?}");
        }
    }
    assert!(narrow
        .widen(vec![vec![4, 5, 6, 7], vec![0, 1, 2, 3], vec![0, 4, 8, 12]])
        .is_err());
    assert!(narrow.widen(narrow.shape().tuples.clone()).is_err());
    // Training from the widened network: the new tables (every weight 0) learn.
    let trainer = Trainer::resume(wide, &[], &TrainingSummary::default(), quick_config(20, 3)).unwrap();
    trainer.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    let trained = trainer.network();
    let per = trained.shape().weights_per_stage();
    let learned = trained.weights()[2 * 65536..per].iter().filter(|w| **w != 0.0).count();
    assert!(learned > 100, "{learned} weights of the new table learned");
}

/// The compile-time lookups of the 8x6 set with a first stage that reads only its first four tuples (the 4x6 set):
/// the network the shipped files make when a 4x6 opening stage sits beside an 8x6 late stage. Each stage values
/// every board, at every entry the search uses, exactly as that stage alone (the 4x6 and the 8x6 lookups), with f16
/// weights (as shipped) and f32 ones.
#[test]
fn a_4x6_stage_beside_an_8x6_stage_values_boards_as_each_stage_alone() {
    let tuples = Shape::named("8x6", vec![0]).unwrap().tuples;
    let shape = Shape::with_stage_tuples(tuples, vec![0, 14], vec![4, 8]).unwrap();
    assert!(!shape.is_uniform());
    assert_eq!(shape.weight_count(), 12 << 24);
    let mut rng = Rng::new(3);
    let bits: Vec<u16> = (0..shape.weight_count())
        .map(|_| half::f16::from_f32((rng.below(2_000_000) as f32 - 1_000_000.0) / 1000.0).to_bits())
        .collect();
    let net16 = Network::from_f16(shape.clone(), bits, 1.0).unwrap();
    let (open, late) = (net16.stage(0).unwrap(), net16.stage(1).unwrap());
    assert_eq!(open.shape(), &Shape::named("4x6", vec![0]).unwrap());
    assert_eq!(late.shape(), &Shape::named("8x6", vec![0]).unwrap());
    let net32 = Network::from_weights(shape, net16.weights().into_owned()).unwrap();
    drop(net16);
    let net16 = Network::from_f16(
        net32.shape().clone(),
        net32
            .weights()
            .iter()
            .map(|&w| half::f16::from_f32(w).to_bits())
            .collect(),
        1.0,
    )
    .unwrap();
    for net in [&net16, &net32] {
        for _ in 0..300 {
            let mut board = Board::default();
            for _ in 0..12 {
                board = board.spawn(&mut rng).unwrap_or(board);
            }
            let board = Board(board.0 | (u64::from(10 + rng.below(6) as u8) << 60));
            let t = board.transpose();
            let own = if board.max_exponent() >= 14 { &late } else { &open };
            assert_eq!(net.value(board, t), own.value(board, t), "{board:?}");
            assert_eq!(
                net.values_of_four([Some((board, t)), None, None, Some((board, t))]),
                own.values_of_four([Some((board, t)), None, None, Some((board, t))]),
            );
            for (k, part) in [&open, &late].into_iter().enumerate() {
                let want = part.value(board, t);
                assert_eq!(net.value_in(k, board, t), want, "stage {k}, {board:?}");
                for n in 1..=4 {
                    let got = net.values_of_first(Some(k), [(board, t); 4], n);
                    assert_eq!(&got[..n], &vec![want; n][..], "stage {k}, {n} boards");
                }
                let four = net.values_of_four_in(Some(k), [Some((board, t)); 4]);
                assert_eq!(four, [Some(want); 4], "stage {k}");
            }
        }
    }
}

/// A stage of a shipped stage list trained where it begins: `train --resume LIST --freeze-below TILE` continues the
/// list's network (its parts' weights, the first stage kept bit for bit), and `net export --stage K` writes one
/// stage of the checkpoint as a one-stage file that a new stage list names beside the part it was trained with.
#[test]
fn a_stage_list_trains_as_one_network_and_one_stage_exports_as_its_own_file() {
    use advisor2048::eval::ntuple::staged;
    let dir = std::env::temp_dir().join(format!("advisor2048-stagetrain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = small_trainable();
    let open = train(&shape, quick_config(200, 3)).network();
    let late = train(&shape, quick_config(200, 4)).network();
    let (open_path, late_path) = (dir.join("open.a2n"), dir.join("late.a2n"));
    file::save(&open_path, &open, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    file::save(&late_path, &late, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let list_path = dir.join("net.json");
    staged::write_list(
        &list_path,
        &[(0, vec![open_path.clone()]), (64, vec![late_path.clone()])],
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_advisor2048");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin)
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // 300 games of the stage list on one thread, the weights learning at once, written to `out`.
    let train_list = |flags: &[&str], out: &str| {
        let mut args = vec!["train", "--resume", "net.json", "--games", "300", "--threads", "1"];
        args.extend_from_slice(&["--coherence-prior", "0", "--out", out, "--json"]);
        args.extend_from_slice(flags);
        run(&args)
    };
    let (ok, err) = train_list(
        &["--freeze-below", "64", "--start", "stage-pools", "--pool-keys", "64"],
        "run.ckpt",
    );
    assert!(ok, "{err}");
    let (trained, _, state) = file::load(&dir.join("run.ckpt")).unwrap();
    assert!(!state.is_empty(), "a checkpoint carries the trainer's state");
    assert_eq!(trained.shape().stages, vec![0, 6]);
    for (k, part) in [(0, &open_path), (1, &late_path)] {
        let name = format!("stage{k}.a2n");
        let (ok, err) = run(&["net", "export", "run.ckpt", &name, "--stage", &k.to_string()]);
        assert!(ok, "{err}");
        let (exported, info, _) = file::load(&dir.join(&name)).unwrap();
        assert_eq!(exported.shape().stages, vec![0], "one stage");
        let from = if k == 0 { "from tile 0" } else { "from tile 64" };
        assert!(
            info.header
                .training
                .command
                .starts_with(&format!("net export --stage {k} ({from}) of a 2-stage network")),
            "{}",
            info.header.training.command
        );
        let (before, _, _) = file::load(part).unwrap();
        let (b, e) = (before.weights(), exported.weights());
        if k == 0 {
            // Its part's weights (a weight far below the list's larger f16 scale may round: see `staged`).
            for (i, (&x, &y)) in e.iter().zip(b.iter()).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-3,
                    "the frozen stage moved, weight {i}: {x} against {y}"
                );
            }
        } else {
            assert_ne!(b, e, "the late stage learned");
            // Each weight of the stage's file is the checkpoint's weight of that stage, within f16's rounding.
            let (all, per) = (trained.weights(), shape.weights_per_stage());
            for (i, (&x, &y)) in e.iter().zip(&all[per..]).enumerate() {
                assert!(
                    (x - y).abs() <= y.abs() * F16_RELATIVE_ERROR as f32 + 1e-3,
                    "weight {i}: {x} against {y}"
                );
            }
        }
    }
    // The two files stack into a list that loads: the trained network, each stage valued as its file.
    let new_list = dir.join("new.json");
    staged::write_list(
        &new_list,
        &[(0, vec![dir.join("stage0.a2n")]), (64, vec![dir.join("stage1.a2n")])],
    )
    .unwrap();
    let net = staged::load_any(&new_list).unwrap();
    let mut rng = Rng::new(9);
    let mut board = Board::default();
    for _ in 0..12 {
        board = board.spawn(&mut rng).unwrap_or(board);
    }
    for top in [1u64, 7] {
        let b = Board(board.0 | (top << 60));
        let (got, want) = (net.value(b, b.transpose()), trained.value(b, b.transpose()));
        assert!(
            (got - want).abs() <= 1e-2 * want.abs().max(1.0),
            "{b:?}: {got} against {want}"
        );
    }
    // A stage the network does not have is refused, naming how many it has.
    let (ok, err) = run(&["net", "export", "run.ckpt", "stage2.a2n", "--stage", "2"]);
    assert!(!ok);
    assert!(
        err.contains("--stage 2") && err.contains("has 2 stages (0 to 1)"),
        "{err}"
    );

    // The other way round: the late stage frozen, the first learns (towards the late stage's values where its games
    // cross, each game ending there).
    let (ok, err) = train_list(&["--freeze-from", "64", "--stage-target", "next"], "early.ckpt");
    assert!(ok, "{err}");
    let (early, _, _) = file::load(&dir.join("early.ckpt")).unwrap();
    let per = shape.weights_per_stage();
    let (parts, weights) = (staged::load_any(&list_path).unwrap(), early.weights());
    let listed = parts.weights();
    assert_ne!(&weights[..per], &listed[..per], "the first stage learned");
    assert_eq!(&weights[per..], &listed[per..], "the frozen late stage moved");
    for (flags, says) in [
        (
            &["--freeze-from", "64", "--freeze-below", "64"][..],
            "cannot be used with",
        ),
        (&["--freeze-from", "128"][..], "--freeze-from 128 freezes no stage"),
        (&["--freeze-from", "100"][..], "--freeze-from: 100 is not a tile"),
    ] {
        let mut args = vec!["train", "--resume", "net.json", "--games", "1", "--out", "x.ckpt"];
        args.extend_from_slice(flags);
        let (ok, err) = run(&args);
        assert!(!ok && err.contains(says), "{flags:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The search keeps the values of its leaves' boards from one search to the next when the evaluator's values key
/// says the values are the same. Searches alternating between two networks (and a stage-pinned evaluator) on the
/// same boards must each give the values a search without any table gives: one network's cached values never
/// reach another's search.
#[test]
fn the_leaf_value_cache_never_carries_one_networks_values_into_another_networks_search() {
    use advisor2048::search::{search, StopHandle};
    let shape = small_shapes()[1].clone();
    let a = Arc::new(random_network(shape.clone(), 21));
    let b = Arc::new(random_network(shape, 22));
    let (ea, eb) = (
        NTupleEvaluator::new(Arc::clone(&a)),
        NTupleEvaluator::new(Arc::clone(&b)),
    );
    assert_ne!(ea.values_key(), eb.values_key());
    // A clone has the same weights, so the same key; a stage-pinned evaluator values boards otherwise.
    assert_eq!(
        NTupleEvaluator::new(Arc::new((*a).clone())).values_key(),
        ea.values_key()
    );
    let pinned = ea.for_decision(3).expect("a network of two stages pins a stage");
    assert_ne!(pinned.values_key(), ea.values_key());
    assert!(ea.values_key().is_some() && pinned.values_key().is_some());
    let cached = SearchSettings {
        depth: Depth::Plies(5),
        node_budget: None,
        ..Profile::Learned.settings()
    };
    let plain = SearchSettings {
        run: RunSettings {
            tt_bits: None,
            ..cached.run.clone()
        },
        ..cached.clone()
    };
    let boards = [
        Tiles::from_rows(&[vec![2, 4, 8, 16], vec![0, 2, 4, 8], vec![0, 0, 2, 4], vec![0, 0, 0, 2]]).unwrap(),
        Tiles::from_rows(&[
            vec![64, 32, 16, 8],
            vec![2, 4, 0, 0],
            vec![0, 2, 0, 0],
            vec![0, 0, 0, 4],
        ])
        .unwrap(),
    ];
    let evaluators = [
        AnyEvaluator::NTuple(ea.clone()),
        AnyEvaluator::NTuple(eb.clone()),
        AnyEvaluator::NTuple(pinned),
    ];
    for round in 0..3 {
        for tiles in &boards {
            for (k, eval) in evaluators.iter().enumerate() {
                let got = search(tiles, eval, &cached, &StopHandle::new());
                let want = search(tiles, eval, &plain, &StopHandle::new());
                for (g, w) in got.values.iter().zip(&want.values) {
                    let (g, w) = (g.unwrap_or(0.0), w.unwrap_or(0.0));
                    assert!(
                        (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                        "round {round}, evaluator {k}: {:?} against {:?} without a table",
                        got.values,
                        want.values
                    );
                }
            }
        }
    }
}

/// A node budget counts a node at what it costs: on a board of a stage that reads twice the tuples of the first, a
/// search plans for half the nodes (as a one-stage network would at half the budget), and on a first-stage board
/// for all of them.
#[test]
fn a_node_budget_counts_a_node_of_a_stage_that_reads_twice_the_tuples_twice() {
    use advisor2048::search::{search, SearchOutcome, StopHandle};
    let tuples = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
    let shape = Shape::with_stage_tuples(tuples.clone(), vec![0, 9], vec![1, 2]).unwrap();
    let mixed = AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(random_network(shape, 5))));
    let one = Shape::new(tuples[..1].to_vec(), vec![0]).unwrap();
    let plain = AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::new(random_network(one, 6))));
    assert_eq!(plain.node_cost(), 1.0);
    let run = |eval: &AnyEvaluator, tiles: &Tiles, budget: u64| -> SearchOutcome {
        let settings = SearchSettings {
            depth: Depth::Plies(9),
            node_budget: Some(budget),
            ..Profile::Learned.settings()
        };
        search(tiles, eval, &settings, &StopHandle::new())
    };
    // Three empty cells: the budget's weight is 1, and depths 5, 7 and 9 are within reach of small budgets.
    let late = Tiles::from_rows(&[
        vec![512, 256, 128, 64],
        vec![4, 8, 16, 32],
        vec![2, 4, 2, 0],
        vec![0, 2, 0, 4],
    ])
    .unwrap();
    let open = Tiles::from_rows(&[
        vec![256, 128, 64, 4],
        vec![4, 8, 2, 32],
        vec![2, 4, 2, 0],
        vec![0, 2, 0, 4],
    ])
    .unwrap();
    let mut differs = false;
    for budget in [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000] {
        let (late_mixed, late_half) = (run(&mixed, &late, budget), run(&plain, &late, budget / 2));
        assert_eq!(
            (late_mixed.stats.depth, late_mixed.stats.nodes),
            (late_half.stats.depth, late_half.stats.nodes),
            "budget {budget}, a second-stage board"
        );
        let (open_mixed, open_plain) = (run(&mixed, &open, budget), run(&plain, &open, budget));
        assert_eq!(
            (open_mixed.stats.depth, open_mixed.stats.nodes),
            (open_plain.stats.depth, open_plain.stats.nodes),
            "budget {budget}, a first-stage board"
        );
        differs |= late_mixed.stats.depth < run(&plain, &late, budget).stats.depth;
    }
    assert!(
        differs,
        "no budget where the cost changed the depth: the test proves nothing"
    );
}
