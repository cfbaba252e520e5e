//! The network this build ships: it loads, it is the file its checksum names, and it plays. A broken load, a wrong
//! index or a wrong orientation would still give numbers, but not these scores.

use std::sync::Arc;

use advisor2048::eval::ntuple::{file, shipped};
use advisor2048::eval::{AnyEvaluator, NTupleEvaluator};
use advisor2048::search::{Depth, Profile, SearchSettings};
use advisor2048::sim::{simulate, SimConfig};

/// Well below the measured greedy mean of the shipped network over these 20 games (215,981; its mean over 1000 games:
/// 174,202, docs/strength.md), far above
/// what an untrained or scrambled network scores (a few thousand).
const GREEDY_MEAN_FLOOR: f64 = 100_000.0;

#[test]
fn the_shipped_network_is_the_file_its_checksum_names() {
    let net = shipped::load().expect("the built-in network decodes");
    let on_disk = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(shipped::PATH)).unwrap();
    let (_, info, state) = file::decode(&on_disk).unwrap();
    assert_eq!(info.checksum(), shipped::CHECKSUM);
    assert!(shipped::PATH.contains(shipped::CHECKSUM));
    assert!(state.is_empty(), "a shipped network carries no trainer state");
    assert_eq!(info.header.value_type, file::ValueType::F16);
    assert_eq!(net.shape().describe(), "4x6, 1 stage");
    // Held as the file stores it: f16, 128 MiB for the 4 x 16^6 weights (f32 would take 256 MiB).
    assert!(net.is_f16());
    assert_eq!(net.weight_bytes(), 128 << 20);
}

#[test]
fn twenty_greedy_games_with_the_shipped_network_score_above_the_floor() {
    let net = Arc::new(shipped::load().expect("the built-in network decodes"));
    let settings = SearchSettings {
        depth: Depth::Plies(1),
        time_budget: None,
        ..Profile::Learned.settings()
    };
    let config = SimConfig {
        threads: 2,
        ..SimConfig::new(20, 1, settings, AnyEvaluator::NTuple(NTupleEvaluator::new(net)))
    };
    let report = simulate(&config, &Default::default(), |_| {});
    assert_eq!(report.games.len(), 20);
    assert!(report.games.iter().all(|g| g.finished));
    let mean = report.games.iter().map(|g| g.score as f64).sum::<f64>() / 20.0;
    eprintln!("shipped network, 20 greedy games: mean score {mean:.0}");
    assert!(
        mean >= GREEDY_MEAN_FLOOR,
        "mean score {mean:.0} is below the floor {GREEDY_MEAN_FLOOR}"
    );
}
