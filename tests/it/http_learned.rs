//! Profile `learned` over HTTP: answers that equal the CLI's for the same network and board, every body valid
//! against `openapi.yaml`, `/healthz` naming the network, and a 422 that says how to load one when none is loaded.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use advisor2048::engine::rng::Rng;
use advisor2048::eval::ntuple::file::{self, TrainingSummary, ValueType};
use advisor2048::eval::ntuple::{Network, Shape};
use advisor2048::server::ServerConfig;
use common::{assert_matches_schema, cli, healthz, post, TestServer, EXAMPLE};
use serde_json::{json, Value};

/// A seeded random network (small tuples), saved as a weight file.
fn network_file(name: &str) -> (PathBuf, Arc<Network>, String) {
    let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![0, 1, 4, 5]], vec![0]).unwrap();
    let mut rng = Rng::new(42);
    let weights = (0..shape.weight_count())
        .map(|_| rng.below(20_000) as f32 - 10_000.0)
        .collect();
    let net = Network::from_weights(shape, weights).unwrap();
    let dir = std::env::temp_dir().join(format!("advisor2048-http-learned-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    file::save(&path, &net, ValueType::F16, &TrainingSummary::default(), &[]).unwrap();
    let (loaded, info, _) = file::load(&path).unwrap();
    (path, Arc::new(loaded), info.checksum().to_owned())
}

#[tokio::test]
async fn learned_answers_equal_the_cli_and_match_the_spec() {
    let (path, net, checksum) = network_file("http.a2n");
    let server = TestServer::start_with_network(ServerConfig::default(), Some(net)).await;
    let p = path.to_str().unwrap();

    for depth in [1, 3] {
        let (status, body) = post(
            &server,
            "/best-move",
            json!({"board": common::example(), "profile": "learned", "depth": depth}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_matches_schema("BestMoveResponse", &body);
        assert_eq!(body["search"]["profile"], "learned");
        assert_eq!(body["search"]["evaluator"], "ntuple");
        assert_eq!(body["search"]["depth"], depth);
        let d = depth.to_string();
        let from_cli = cli(&[
            "best-move",
            EXAMPLE,
            "--profile",
            "learned",
            "--depth",
            &d,
            "--weights",
            p,
            "--json",
        ]);
        // The service deepens iteratively under its budget (more nodes counted); the answer itself is the same.
        assert_eq!(body["direction"], from_cli["direction"]);
        assert_eq!(body["moves"], from_cli["moves"]);
        assert_eq!(body["search"]["depth"], from_cli["search"]["depth"]);
        // The breakdown of each after-move board lists the tuples and adds up to its total.
        for m in body["moves"].as_array().unwrap().iter().filter(|m| m["legal"] == true) {
            let h = &m["heuristic"];
            assert_eq!(h["evaluator"], "ntuple");
            let names: Vec<&str> = h["components"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["tuple_1", "tuple_2", "tuple_3"]);
            let sum: f64 = h["components"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["contribution"].as_f64().unwrap())
                .sum();
            assert!((sum - h["total"].as_f64().unwrap()).abs() < 1e-3);
        }
    }
    // An even depth keeps the leaves right after a move: 2 plies are searched as 3.
    let (_, even) = post(
        &server,
        "/best-move",
        json!({"board": common::example(), "profile": "learned", "depth": 2}),
    )
    .await;
    assert_eq!(even["search"]["target_depth"], 3);

    let (status, body) = post(
        &server,
        "/evaluate",
        json!({"board": common::example(), "evaluator": "ntuple"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("EvaluateResponse", &body);
    assert_eq!(
        body,
        cli(&["evaluate", EXAMPLE, "--evaluator", "ntuple", "--weights", p, "--json"])
    );

    let (status, body) = post(
        &server,
        "/simulate",
        json!({"games": 2, "seed": 5, "profile": "learned", "depth": 1}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("SimulateResponse", &body);
    assert_eq!(body["games"].as_array().unwrap().len(), 2);

    let health = healthz(&server.url("/healthz")).await;
    assert_matches_schema("Health", &health);
    assert_eq!(health["network"]["checksum"], checksum.as_str());
    assert_eq!(health["network"]["shape"], "3x4, 1 stage");

    // ntuple takes no weights by name.
    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": common::example(), "profile": "learned", "weights": {"empty": 1}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["pointer"], "/weights/empty");
}

#[tokio::test]
async fn without_a_network_learned_is_a_422_that_says_how_to_load_one() {
    let server = TestServer::start(ServerConfig::default()).await;
    let cases = [
        (
            "/best-move",
            json!({"board": common::example(), "profile": "learned"}),
            "/profile",
        ),
        (
            "/best-move",
            json!({"board": common::example(), "evaluator": "ntuple"}),
            "/evaluator",
        ),
        (
            "/evaluate",
            json!({"board": common::example(), "evaluator": "ntuple"}),
            "/evaluator",
        ),
        (
            "/simulate",
            json!({"games": 1, "profile": "learned", "depth": 1}),
            "/profile",
        ),
    ];
    for (path, body, pointer) in cases {
        let (status, problem) = post(&server, path, body).await;
        assert_eq!(status, 422, "{path}: {problem}");
        assert_matches_schema("Problem", &problem);
        assert_eq!(problem["errors"][0]["pointer"], pointer, "{problem}");
        let message = problem["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("no") && message.contains("--weights FILE"),
            "{message}"
        );
    }
    let health = healthz(&server.url("/healthz")).await;
    assert_matches_schema("Health", &health);
    assert_eq!(health["network"], Value::Null);
}

/// The legal moves' `tuned_heuristic`, by direction.
fn tuned_breakdowns(answer: &Value) -> Vec<(String, Value)> {
    answer["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["legal"] == true)
        .map(|m| {
            (
                m["direction"].as_str().unwrap().to_owned(),
                m["tuned_heuristic"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_default_profile_is_learned_with_a_network_and_tuned_without() {
    let (path, net, _) = network_file("default.a2n");
    let p = path.to_str().unwrap();
    let server = TestServer::start_with_network(ServerConfig::default(), Some(net)).await;
    assert_eq!(healthz(&server.url("/healthz")).await["default_profile"], "learned");

    let (status, default) = post(&server, "/best-move", json!({"board": common::example()})).await;
    assert_eq!(status, 200, "{default}");
    assert_matches_schema("BestMoveResponse", &default);
    assert_eq!(default["search"]["profile"], "learned");
    assert_eq!(default["search"]["evaluator"], "ntuple");
    let (_, named) = post(
        &server,
        "/best-move",
        json!({"board": common::example(), "profile": "learned"}),
    )
    .await;
    assert_eq!(default["moves"], named["moves"]);
    assert_eq!(default["direction"], named["direction"]);

    // Each legal move also carries the tuned heuristic's breakdown of its board: what /evaluate says with tuned.
    let (_, tuned) = post(
        &server,
        "/evaluate",
        json!({"board": common::example(), "evaluator": "tuned"}),
    )
    .await;
    let readable = tuned_breakdowns(&default);
    assert_eq!(readable.len(), 4);
    for (direction, breakdown) in &readable {
        let after = tuned["after_moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["direction"] == direction.as_str())
            .unwrap();
        assert_eq!(breakdown, &after["heuristic"], "{direction}");
        assert_eq!(breakdown["evaluator"], "tuned");
    }
    // The hand-written evaluators explain themselves: no second breakdown.
    let (_, heuristic) = post(
        &server,
        "/best-move",
        json!({"board": common::example(), "profile": "tuned", "depth": 3}),
    )
    .await;
    assert!(heuristic["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m.get("tuned_heuristic").is_none()));

    // The command line has the same default, and `--weights none` falls back to tuned.
    let from_cli = cli(&["best-move", EXAMPLE, "--weights", p, "--json"]);
    assert_eq!(from_cli["search"]["profile"], "learned");
    assert_eq!(from_cli["moves"], default["moves"]);
    let without = cli(&["best-move", EXAMPLE, "--weights", "none", "--depth", "3", "--json"]);
    assert_eq!(without["search"]["profile"], "tuned");
    assert_eq!(without["moves"], heuristic["moves"]);

    // A service without a network defaults to tuned (and says so).
    let bare = TestServer::start(ServerConfig::default()).await;
    assert_eq!(healthz(&bare.url("/healthz")).await["default_profile"], "tuned");
    let (status, answer) = post(&bare, "/best-move", json!({"board": common::example(), "depth": 3})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["search"]["profile"], "tuned");
    assert_eq!(answer["moves"], heuristic["moves"]);
}

#[tokio::test]
async fn the_learned_default_searches_within_its_node_budget_unless_a_depth_or_time_is_asked_for() {
    let (path, net, _) = network_file("budget.a2n");
    let server = TestServer::start_with_network(ServerConfig::default(), Some(net)).await;
    let search_of = |body: &Value| body["search"].clone();
    let ask = |extra: Value| {
        let mut body = json!({"board": common::example()});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };

    // The default: up to 9 plies within the profile's node budget, said in the answer.
    let (status, default) = post(&server, "/best-move", ask(json!({}))).await;
    assert_eq!(status, 200, "{default}");
    assert_matches_schema("BestMoveResponse", &default);
    let s = search_of(&default);
    assert_eq!(
        (s["profile"].as_str(), s["target_depth"].as_u64()),
        (Some("learned"), Some(9))
    );
    assert_eq!(s["node_budget"], 40_000);
    let depth = s["depth"].as_u64().unwrap();
    assert!(depth % 2 == 1 && (1..=9).contains(&depth), "{s}");
    assert_eq!(s["truncated"], false);
    // The command line searches the same: nodes, not time, choose the depth.
    let p = path.to_str().unwrap();
    let from_cli = cli(&["best-move", EXAMPLE, "--weights", p, "--json"]);
    assert_eq!(from_cli["moves"], default["moves"]);
    assert_eq!(
        (&from_cli["search"]["depth"], &from_cli["search"]["nodes"]),
        (&s["depth"], &s["nodes"])
    );
    // Its values are a plain search's at the depth it chose.
    let (_, plain) = post(&server, "/best-move", ask(json!({"depth": depth}))).await;
    assert_eq!(plain["moves"], default["moves"]);
    assert_eq!(plain["search"]["node_budget"], Value::Null);

    // A depth or a time budget asked for is searched as asked; a node budget given with a depth bounds it.
    let (_, deep) = post(&server, "/best-move", ask(json!({"depth": 7}))).await;
    assert_eq!(
        (&deep["search"]["depth"], &deep["search"]["node_budget"]),
        (&json!(7), &Value::Null)
    );
    let (_, timed) = post(&server, "/best-move", ask(json!({"time_budget_ms": 2000}))).await;
    assert_eq!(timed["search"]["node_budget"], Value::Null);
    let (status, small) = post(&server, "/best-move", ask(json!({"depth": 9, "node_budget": 1}))).await;
    assert_eq!(status, 200, "{small}");
    assert_eq!(
        (&small["search"]["depth"], &small["search"]["node_budget"]),
        (&json!(1), &json!(1))
    );
    let from_cli = cli(&[
        "best-move",
        EXAMPLE,
        "--weights",
        p,
        "--depth",
        "9",
        "--node-budget",
        "1",
        "--json",
    ]);
    assert_eq!(from_cli["moves"], small["moves"]);

    // Out of range: a clear 422 at the field.
    for bad in [json!(0), json!(-5), json!(1.5), json!("40000"), json!(1_000_000_001u64)] {
        let (status, problem) = post(&server, "/best-move", ask(json!({"node_budget": bad}))).await;
        assert_eq!(status, 422, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["pointer"], "/node_budget", "{problem}");
    }

    // The late weight: 1 unless given, said in the answer; on a board before 16384 (the example) another weight
    // searches the same nodes (tests/it/search_golden.rs has a board it deepens).
    assert_eq!(s["late_weight"], 1.0);
    let (status, weighted) = post(&server, "/best-move", ask(json!({"late_weight": 3.5}))).await;
    assert_eq!(status, 200, "{weighted}");
    assert_eq!(weighted["search"]["late_weight"], 3.5);
    assert_eq!(weighted["search"]["nodes"], s["nodes"]);
    let from_cli = cli(&["best-move", EXAMPLE, "--weights", p, "--late-weight", "3.5", "--json"]);
    assert_eq!(from_cli["search"]["late_weight"], 3.5);
    assert_eq!(from_cli["search"]["nodes"], s["nodes"]);
    for bad in [json!(-1), json!(100), json!("2"), json!(null)] {
        let (status, problem) = post(&server, "/best-move", ask(json!({"late_weight": bad}))).await;
        assert_eq!(status, 422, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["pointer"], "/late_weight", "{problem}");
        assert!(
            problem["errors"][0]["message"]
                .as_str()
                .unwrap_or("")
                .contains("late_weight"),
            "{problem}"
        );
    }
}
