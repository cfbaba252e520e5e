//! Reach odds (`"odds": true` on `/evaluate` and `/best-move`): the shipped model belongs to the shipped network
//! and the default play; from outside, the chances hold their invariants on a fresh, a mid-game and a lost board;
//! the flag is off by default (no key, no work); the per-direction odds and the position's agree; a service running
//! a network the odds were not fitted for refuses with a 422 that says how to re-fit; the command line's `--odds`
//! answers what HTTP answers.

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use advisor2048::engine::rng::Rng;
use advisor2048::eval::ntuple::file::{self, TrainingSummary, ValueType};
use advisor2048::eval::ntuple::{self, Network, Shape};
use advisor2048::eval::odds::{self, FitSummary, OddsModel, TileModel, FEATURES, TILES};
use advisor2048::request::odds::default_fitted_for;
use advisor2048::server::{AppState, ServerConfig};
use common::{cli, post, TestServer};
use serde_json::{json, Value};

/// The shipped network, loaded once for the tests of this file and of the review with odds.
pub(crate) fn shipped_network() -> Arc<Network> {
    static NET: OnceLock<Arc<Network>> = OnceLock::new();
    NET.get_or_init(|| Arc::new(ntuple::shipped::load().expect("the shipped network loads")))
        .clone()
}

/// A fresh board, a mid-game board (4096, 2048 and 1024 on it) and a lost board holding 8192.
const FRESH: &str = "0000000000100001";
const MID: &str = "cba9000000120001";
const LOST: [[u32; 4]; 4] = [[8192, 2, 4, 8], [2, 4, 8, 16], [4, 8, 16, 32], [8, 16, 32, 64]];

/// Checks the invariants of one list of chances for a board whose largest tile is `largest`.
fn check_chances(chances: &Value, largest: u64, lost: bool, what: &str) {
    let list = chances
        .as_array()
        .unwrap_or_else(|| panic!("{what}: chances {chances}"));
    let tiles: Vec<u64> = list.iter().map(|c| c["tile"].as_u64().expect("tile")).collect();
    assert_eq!(tiles, TILES.map(u64::from), "{what}");
    let values: Vec<f64> = list.iter().map(|c| c["chance"].as_f64().expect("chance")).collect();
    for (tile, p) in tiles.iter().zip(&values) {
        assert!((0.0..=1.0).contains(p), "{what}: {tile} has {p}");
        if *tile <= largest {
            assert_eq!(*p, 1.0, "{what}: {tile} is on the board");
        } else if lost {
            assert_eq!(*p, 0.0, "{what}: the board is lost and lacks {tile}");
        } else {
            // No finite number of fitted games shows a tile off the board to be certain or impossible.
            assert!(*p > 0.0 && *p < 1.0, "{what}: {tile} is not on the board but has {p}");
        }
    }
    assert!(
        values.windows(2).all(|w| w[0] >= w[1]),
        "{what}: the chances grow with the tile: {values:?}"
    );
}

#[test]
fn the_shipped_odds_were_fitted_for_the_shipped_network_and_the_default_play() {
    let model = odds::shipped::load().expect("the shipped odds load");
    let wanted = default_fitted_for(ntuple::shipped::CHECKSUM);
    assert_eq!(
        model.check_for(Some(ntuple::shipped::CHECKSUM), &wanted),
        Ok(()),
        "the shipped network or the default play changed: re-fit the odds (docs/odds.md, one command: \
         advisor2048 odds-fit) and ship the file it writes"
    );
    let on_disk = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(odds::shipped::PATH))
        .expect("the shipped odds file is in the package");
    assert!(odds::shipped::bytes() == on_disk.as_slice());
    assert!(
        odds::shipped::PATH.contains(ntuple::shipped::CHECKSUM),
        "the odds file is named by its network"
    );
    assert!(
        model.fit.games > 0 && model.fit.positions > 0,
        "a fitted model, not a placeholder"
    );
}

#[tokio::test]
async fn evaluate_with_odds_holds_the_invariants_on_fresh_mid_and_lost_boards() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    let boards: [(Value, u64, bool); 3] = [
        (json!(FRESH), 2, false),
        (json!(MID), 4096, false),
        (json!(LOST), 8192, true),
    ];
    for (board, largest, lost) in boards {
        let (status, body) = post(&server, "/evaluate", json!({"board": board, "odds": true})).await;
        assert_eq!(status, 200, "{body}");
        let odds = &body["odds"];
        check_chances(&odds["chances"], largest, lost, &format!("{board} position"));
        assert_eq!(odds["play"]["network"], ntuple::shipped::CHECKSUM);
        assert_eq!(odds["play"]["profile"], "learned");
        assert_eq!(odds["play"]["depth"], 9);
        assert_eq!(odds["play"]["node_budget"], 40_000);
        for after in body["after_moves"].as_array().expect("after_moves") {
            let d = after["direction"].as_str().expect("direction");
            let after_largest = after["board"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|row| row.as_array().into_iter().flatten())
                .filter_map(Value::as_u64)
                .max()
                .unwrap_or(0);
            check_chances(&after["odds"], after_largest, false, &format!("{board} {d}"));
        }
        if lost {
            assert_eq!(odds["direction"], Value::Null);
            assert!(body["after_moves"].as_array().is_some_and(|a| a.is_empty()));
        } else {
            // The position's chances are those of the direction the default play chooses.
            let chosen = odds["direction"].as_str().expect("a direction");
            let after = body["after_moves"]
                .as_array()
                .and_then(|a| a.iter().find(|m| m["direction"] == chosen))
                .expect("the chosen direction is legal");
            assert_eq!(after["odds"], odds["chances"]);
        }
    }
    // A fresh game is not yet a 2048, and rarely fails to make one.
    let (_, fresh) = post(&server, "/evaluate", json!({"board": FRESH, "odds": true})).await;
    let p2048 = fresh["odds"]["chances"][0]["chance"].as_f64().expect("chance");
    assert!((0.8..=1.0).contains(&p2048), "{p2048}");
    server.stop().await.expect("stops");
}

#[tokio::test]
async fn the_odds_flag_is_off_by_default_and_the_odds_follow_the_default_play() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    for path in ["/evaluate", "/best-move"] {
        let (status, body) = post(&server, path, json!({"board": MID})).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.get("odds").is_none(), "{path}: odds without asking");
        let (_, off) = post(&server, path, json!({"board": MID, "odds": false})).await;
        // The same answer but for the search's own timing.
        let untimed = |mut v: Value| {
            if let Some(search) = v.get_mut("search").and_then(Value::as_object_mut) {
                search.remove("elapsed_ms");
            }
            v
        };
        assert_eq!(untimed(off), untimed(body), "{path}: odds false is the default");
        let (status, refused) = post(&server, path, json!({"board": MID, "odds": "yes"})).await;
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["errors"][0]["pointer"], "/odds");
    }
    // /best-move: the odds are the default play's whatever the request searched with.
    let (_, default) = post(&server, "/best-move", json!({"board": MID, "odds": true})).await;
    let (_, shallow) = post(
        &server,
        "/best-move",
        json!({"board": MID, "odds": true, "depth": 1, "profile": "tuned"}),
    )
    .await;
    let (_, evaluated) = post(&server, "/evaluate", json!({"board": MID, "odds": true})).await;
    assert_eq!(default["odds"], shallow["odds"]);
    assert_eq!(default["odds"], evaluated["odds"]);
    check_chances(&default["odds"]["chances"], 4096, false, "best-move");
    for m in default["moves"].as_array().expect("moves") {
        assert_eq!(m["legal"].as_bool(), Some(m.get("odds").is_some()), "{m}");
    }
    server.stop().await.expect("stops");
}

/// A seeded random network saved as a weight file, and its checksum.
fn other_network() -> (PathBuf, Arc<Network>, String) {
    let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0]).expect("a shape");
    let mut rng = Rng::new(7);
    let weights = (0..shape.weight_count()).map(|_| rng.below(2_000) as f32).collect();
    let net = Network::from_weights(shape, weights).expect("a network");
    let dir = std::env::temp_dir().join(format!("advisor2048-http-odds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("other.a2n");
    file::save(&path, &net, ValueType::F16, &TrainingSummary::default(), &[]).expect("saved");
    let (loaded, info, _) = file::load(&path).expect("loads");
    (path, Arc::new(loaded), info.checksum().to_owned())
}

/// A hand-made model for the network `checksum` (chances from a plain logistic curve).
fn model_for(checksum: &str) -> OddsModel {
    let tiles = TILES
        .iter()
        .map(|&tile| TileModel {
            tile,
            weights: (0..FEATURES.len()).map(|i| if i == 1 { 1.0 } else { 0.0 }).collect(),
            calibration: Vec::new(),
        })
        .collect();
    OddsModel::new(default_fitted_for(checksum), FitSummary::default(), tiles).expect("a model")
}

#[tokio::test]
async fn a_network_the_odds_were_not_fitted_for_is_a_422_that_says_how_to_refit() {
    let (path, net, checksum) = other_network();
    let server = TestServer::start_with_network(ServerConfig::default(), Some(net.clone())).await;
    for path in ["/evaluate", "/best-move"] {
        let (status, body) = post(&server, path, json!({"board": MID, "odds": true})).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["errors"][0]["pointer"], "/odds");
        let message = body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&checksum) && message.contains("odds-fit") && message.contains("--odds-model"),
            "{message}"
        );
        // Without odds the network still advises.
        let (status, _) = post(&server, path, json!({"board": MID})).await;
        assert_eq!(status, 200);
    }
    server.stop().await.expect("stops");

    // With a model fitted for it (`--odds-model`), the same network answers with odds.
    let state = AppState::with_odds(ServerConfig::default(), Some(net), Ok(Arc::new(model_for(&checksum))));
    let server = TestServer::start_with_state(state).await;
    let (status, body) = post(&server, "/evaluate", json!({"board": MID, "odds": true})).await;
    assert_eq!(status, 200, "{body}");
    check_chances(&body["odds"]["chances"], 4096, false, "fitted model");
    assert_eq!(body["odds"]["play"]["network"], checksum.as_str());
    server.stop().await.expect("stops");

    // The command line: a model for another network named with --odds-model is refused at once.
    let dir = path.parent().expect("a directory").to_path_buf();
    let wrong = dir.join("odds-wrong.json");
    std::fs::write(&wrong, odds::file::encode(&model_for("0123456789abcdef"))).expect("written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["evaluate", MID, "--odds", "--weights"])
        .arg(&path)
        .arg("--odds-model")
        .arg(&wrong)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("0123456789abcdef") && stderr.contains(&checksum),
        "{stderr}"
    );
    let right = dir.join("odds-right.json");
    std::fs::write(&right, odds::file::encode(&model_for(&checksum))).expect("written");
    let p = path.to_str().expect("a path");
    let from_cli = cli(&[
        "evaluate",
        MID,
        "--odds",
        "--weights",
        p,
        "--odds-model",
        right.to_str().expect("a path"),
        "--json",
    ]);
    check_chances(&from_cli["odds"]["chances"], 4096, false, "command line");
}

#[tokio::test]
async fn the_command_line_s_odds_are_the_http_api_s() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    for (command, path) in [("evaluate", "/evaluate"), ("best-move", "/best-move")] {
        let from_cli = cli(&[command, MID, "--odds", "--json"]);
        let (status, over_http) = post(&server, path, json!({"board": MID, "odds": true})).await;
        assert_eq!(status, 200, "{over_http}");
        assert_eq!(from_cli["odds"], over_http["odds"], "{command}");
        let directions = if command == "evaluate" { "after_moves" } else { "moves" };
        let odds_of = |v: &Value| -> Vec<Value> {
            v[directions]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| m["odds"].clone())
                .collect()
        };
        assert_eq!(odds_of(&from_cli), odds_of(&over_http), "{command}");
    }
    server.stop().await.expect("stops");
}
