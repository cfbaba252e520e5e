//! The network this build ships: it loads, it is the file its checksum names, and it plays. A broken load, a wrong
//! index or a wrong orientation would still give numbers, but not these scores.

use std::sync::Arc;

use advisor2048::eval::ntuple::{file, shipped, staged};
use advisor2048::eval::{AnyEvaluator, NTupleEvaluator};
use advisor2048::search::{Depth, Profile, SearchSettings};
use advisor2048::sim::{simulate, SimConfig};
use sha2::{Digest, Sha256};

/// Well below the measured greedy mean of the shipped network (two stages: 256,924 over 1000 games,
/// docs/strength.md; the single-stage networks before it: 205,669, 200,008 and 186,601), far above what an untrained
/// or scrambled network scores (a few thousand).
const GREEDY_MEAN_FLOOR: f64 = 150_000.0;

/// The hex digits of a digest.
fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_shipped_network_is_the_files_its_checksums_name() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let embedded = shipped::bytes();
    let on_disk = std::fs::read(root.join(shipped::PATH)).expect("the shipped stage list is in the package");
    assert!(
        embedded == on_disk,
        "the binary embeds another stage list than {}",
        shipped::PATH
    );
    // The list is named and known by the first 16 hex digits of its SHA-256.
    let digest = hex(&Sha256::digest(embedded));
    assert_eq!(
        shipped::CHECKSUM,
        &digest[..16],
        "the checksum named in the code is not the embedded list's"
    );
    assert!(
        shipped::PATH.ends_with(&format!("-{}.json", &digest[..16])),
        "{} is not named by its digest",
        shipped::PATH
    );

    let list = staged::StageList::parse(embedded).expect("the shipped stage list parses");
    let files = list.files();
    assert_eq!(files.len(), shipped::PARTS.len());
    for ((_, file, checksum), (name, bytes)) in files.into_iter().zip(shipped::PARTS) {
        assert_eq!(file, *name);
        let on_disk = std::fs::read(root.join("nets").join(name)).expect("the part is in nets/");
        assert!(
            *bytes == on_disk.as_slice(),
            "the binary embeds another file than nets/{name}"
        );
        // A weight file ends with the SHA-256 of all that precedes it, and is named by its first 16 hex digits.
        let (body, trailer) = bytes.split_at(bytes.len() - 32);
        let digest = hex(&Sha256::digest(body));
        assert_eq!(
            hex(trailer),
            digest,
            "{name}: the file's own digest does not match its contents"
        );
        assert_eq!(checksum, &digest[..16]);
        assert!(
            name.ends_with(&format!("-{}.a2n", &digest[..16])),
            "{name} is not named by its digest"
        );
        let (net, info, state) = file::decode(bytes).expect("the part decodes");
        assert!(state.is_empty(), "a shipped network carries no trainer state");
        assert_eq!(info.header.value_type, file::ValueType::F16);
        assert_eq!(net.shape().describe(), "4x6, 1 stage");
        // Each part under the 100 MB a file of this project may take.
        assert!(bytes.len() < 100_000_000, "{name} is {} bytes", bytes.len());
    }

    let net = shipped::load().expect("the built-in network decodes");
    assert_eq!(net.shape().describe(), "4x6, 2 stages (from tiles 0, 16384)");
    assert_eq!(net.info.as_ref().map(|i| i.checksum()), Some(shipped::CHECKSUM));
    // Held as the files store it: f16, 128 MiB per stage for the 4 x 16^6 weights (f32 would take twice that).
    assert!(net.is_f16());
    assert_eq!(net.weight_bytes(), 2 * (128 << 20));
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
