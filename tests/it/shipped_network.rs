//! The network this build ships: it loads, it is the file its checksum names, and it plays. A broken load, a wrong
//! index or a wrong orientation would still give numbers, but not these scores.

use std::sync::Arc;

use advisor2048::eval::ntuple::{file, shipped};
use advisor2048::eval::{AnyEvaluator, NTupleEvaluator};
use advisor2048::search::{Depth, Profile, SearchSettings};
use advisor2048::sim::{simulate, SimConfig};
use sha2::{Digest, Sha256};

/// Well below the measured greedy mean of the shipped network over these 20 games (248,026; its mean over 1000
/// games: 205,669, docs/strength.md; the networks before it: 200,008 and 186,601), far above what an untrained or
/// scrambled network scores (a few thousand).
const GREEDY_MEAN_FLOOR: f64 = 150_000.0;

/// The hex digits of a digest.
fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_shipped_network_is_the_file_its_checksum_names() {
    let embedded = shipped::bytes();
    let on_disk = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(shipped::PATH))
        .expect("the shipped file is in the package");
    assert!(
        embedded == on_disk,
        "the binary embeds another file than {}",
        shipped::PATH
    );
    // The checksum computed here from the embedded bytes: a weight file ends with the SHA-256 of all that precedes
    // it, and is named and known by that digest's first 16 hex digits.
    let (body, trailer) = embedded.split_at(embedded.len() - 32);
    let digest = hex(&Sha256::digest(body));
    assert_eq!(
        hex(trailer),
        digest,
        "the file's own digest does not match its contents"
    );
    assert_eq!(
        shipped::CHECKSUM,
        &digest[..16],
        "the checksum named in the code is not the embedded file's"
    );
    let name = std::path::Path::new(shipped::PATH)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        name.ends_with(&format!("-{}.a2n", &digest[..16])),
        "{name} is not named by its digest"
    );

    let net = shipped::load().expect("the built-in network decodes");
    let (_, info, state) = file::decode(embedded).expect("the embedded file decodes");
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
