//! The review with reach odds (`"odds": true` on `/analyze`, `advisor2048 analyze --odds`): the odds fields are there
//! only with the flag; each move's milestones are the next two tiles its board lacks, with chances in [0, 1] that are
//! the ones `/evaluate` gives for the same board; the loss is the best move's chance minus the played move's (never
//! below 0, 0 for a move graded best); the summary's largest losses are sorted and are the moves' own; the streamed
//! form carries the same; a service without odds refuses at `/odds`; the command line answers what HTTP answers.
//! Every answer is checked against `openapi.yaml`.

use crate::common;
use crate::http_odds::shipped_network;

use advisor2048::engine::{Direction, Tiles};
use advisor2048::request::analyze::{LARGEST_ODDS_LOSSES, NEXT_MILESTONES};
use advisor2048::request::odds::default_search;
use advisor2048::search::StopHandle;
use advisor2048::server::ServerConfig;
use common::{assert_matches_schema, cli, post, TestServer};
use serde_json::{json, Value};

/// The moves where the game below plays the direction the default play values least.
const BAD: [usize; 3] = [3, 8, 12];

/// A game of 16 moves from a mid-game board (4096, 2048, 1024 and 512 along the top): the default play's choice at
/// every move but [`BAD`]; each spawn a 2 on the first empty cell. The `moves` form of `/analyze`.
fn game() -> Value {
    let net = shipped_network();
    let mut board = Tiles::from_exponents([12, 11, 10, 9, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 1]).expect("a board");
    let mut moves = Vec::new();
    for i in 0..16 {
        let outcome = default_search(&board, &net, &StopHandle::new());
        let best = outcome.best.expect("a legal move");
        let direction = if BAD.contains(&i) {
            let (worst, _) = Direction::ALL
                .into_iter()
                .filter_map(|d| Some((d, outcome.values[d.index()]?)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("a legal move");
            assert_ne!(worst, best, "move {i} is forced: pick other bad moves");
            worst
        } else {
            best
        };
        moves.push(json!({"board": board.to_rows(), "direction": direction.as_str()}));
        let (after, _) = board.play(direction).expect("legal");
        let cell = after.exponents().iter().position(|&e| e == 0).expect("an empty cell");
        board = after.with_exponent_at(cell, 1);
    }
    json!({ "moves": moves })
}

fn with(mut body: Value, extra: Value) -> Value {
    let map = body.as_object_mut().expect("an object");
    for (k, v) in extra.as_object().expect("an object") {
        map.insert(k.clone(), v.clone());
    }
    body
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The largest tile of rows.
fn largest(rows: &Value) -> u64 {
    rows.as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row.as_array().into_iter().flatten())
        .filter_map(Value::as_u64)
        .max()
        .unwrap_or(0)
}

/// The chance of `tile` in a list of chances.
fn chance_of(chances: &Value, tile: u64) -> f64 {
    let found = chances
        .as_array()
        .and_then(|list| list.iter().find(|c| c["tile"] == tile))
        .unwrap_or_else(|| panic!("no chance of {tile} in {chances}"));
    number(&found["chance"])
}

/// The largest loss of a reviewed move's milestones (0 when none lost anything).
fn largest_loss(m: &Value) -> f64 {
    m["odds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| number(&x["loss"]))
        .fold(0.0, f64::max)
}

/// Checks one reviewed move's odds: the next milestones of its board, chances in [0, 1], the loss.
fn check_move(m: &Value) {
    let odds = m["odds"].as_array().unwrap_or_else(|| panic!("no odds: {m}"));
    let board_largest = largest(&m["board"]);
    let expected: Vec<u64> = [2048u64, 4096, 8192, 16384, 32768, 65536]
        .into_iter()
        .filter(|&t| t > board_largest)
        .take(NEXT_MILESTONES)
        .collect();
    let tiles: Vec<u64> = odds.iter().map(|x| x["tile"].as_u64().expect("a tile")).collect();
    assert_eq!(tiles, expected, "{m}");
    for x in odds {
        for key in ["before", "after_played", "after_best", "loss"] {
            let p = number(&x[key]);
            assert!((0.0..=1.0).contains(&p), "{key} {p}: {m}");
        }
        let (played, best, loss) = (number(&x["after_played"]), number(&x["after_best"]), number(&x["loss"]));
        if m["grade"] == "best" {
            assert_eq!(loss, 0.0, "a move graded best lost nothing: {m}");
        } else {
            assert!((loss - (best - played).max(0.0)).abs() < 1e-12, "{m}");
        }
        if m["played"] == m["best"] {
            assert_eq!(played, best, "{m}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_with_odds_gives_each_move_its_milestones_and_the_summary_its_largest_losses() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    let record = game();

    // Without the flag: no odds anywhere.
    let (status, plain) = post(&server, "/analyze", record.clone()).await;
    assert_eq!(status, 200, "{plain}");
    assert!(plain["summary"].get("odds").is_none(), "{}", plain["summary"]);
    assert!(plain["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .all(|m| m.get("odds").is_none()));

    let (status, review) = post(&server, "/analyze", with(record.clone(), json!({"odds": true}))).await;
    assert_eq!(status, 200, "{review}");
    let moves = review["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 16);
    for (i, m) in moves.iter().enumerate() {
        check_move(m);
        // The grades are the review's own, odds or not.
        assert_eq!(m["grade"], plain["moves"][i]["grade"]);
        assert_eq!(m["best"], plain["moves"][i]["best"]);
        // The chances are the ones /evaluate gives for the same board.
        let (status, evaluated) = post(&server, "/evaluate", json!({"board": m["board"], "odds": true})).await;
        assert_eq!(status, 200, "{evaluated}");
        let after = |d: &Value| {
            evaluated["after_moves"]
                .as_array()
                .and_then(|a| a.iter().find(|x| &x["direction"] == d))
                .map(|x| x["odds"].clone())
                .unwrap_or_else(|| panic!("no odds after {d}"))
        };
        for x in m["odds"].as_array().expect("odds") {
            let tile = x["tile"].as_u64().expect("a tile");
            assert_eq!(
                number(&x["before"]),
                chance_of(&evaluated["odds"]["chances"], tile),
                "move {i}"
            );
            assert_eq!(
                number(&x["after_played"]),
                chance_of(&after(&m["played"]), tile),
                "move {i}"
            );
            assert_eq!(
                number(&x["after_best"]),
                chance_of(&after(&m["best"]), tile),
                "move {i}"
            );
        }
    }
    // The bad moves are the only ones graded below best, and they cost chance.
    for (i, m) in moves.iter().enumerate() {
        assert_eq!(m["grade"] != "best", BAD.contains(&i), "move {i}: {m}");
    }
    assert!(
        BAD.iter().any(|&i| largest_loss(&moves[i]) > 0.0),
        "no bad move cost any chance"
    );

    // The summary: the play, and the largest losses sorted, each the move's own largest.
    let odds = &review["summary"]["odds"];
    assert_eq!(odds["play"]["profile"], "learned");
    assert_eq!(odds["play"]["depth"], 9);
    assert_eq!(odds["play"]["node_budget"], 40_000);
    let listed = odds["largest_losses"].as_array().expect("largest_losses");
    assert!(!listed.is_empty() && listed.len() <= LARGEST_ODDS_LOSSES, "{odds}");
    let losses: Vec<f64> = listed.iter().map(|l| number(&l["loss"])).collect();
    assert!(losses.windows(2).all(|w| w[0] >= w[1]), "not sorted: {losses:?}");
    for l in listed {
        let i = l["index"].as_u64().expect("an index") as usize;
        let m = &moves[i];
        assert_eq!((&l["played"], &l["best"]), (&m["played"], &m["best"]));
        assert_eq!(number(&l["loss"]), largest_loss(m), "{l} {m}");
        let same = m["odds"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["tile"] == l["tile"]))
            .expect("the listed tile is one of the move's milestones");
        for key in ["before", "after_played", "after_best", "loss"] {
            assert_eq!(l[key], same[key], "{key}: {l} {m}");
        }
    }
    // No move left out lost more than the smallest listed, and every move that lost something is listed while
    // there is room.
    let smallest = losses.last().copied().unwrap_or(0.0);
    let listed_moves: Vec<u64> = listed.iter().filter_map(|l| l["index"].as_u64()).collect();
    for (i, m) in moves.iter().enumerate() {
        if listed_moves.contains(&(i as u64)) {
            continue;
        }
        let loss = largest_loss(m);
        assert!(loss <= smallest, "move {i} lost {loss}, more than a listed move");
        assert!(
            loss == 0.0 || listed.len() == LARGEST_ODDS_LOSSES,
            "move {i} lost {loss} and is not listed"
        );
    }
    server.stop().await.expect("stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_streamed_review_carries_the_odds_and_they_follow_the_default_play() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    let record = with(game(), json!({"odds": true}));
    let (_, document) = post(&server, "/analyze", record.clone()).await;
    let r = reqwest::Client::new()
        .post(server.url("/analyze"))
        .header("accept", "application/x-ndjson")
        .json(&record)
        .send()
        .await
        .expect("an answer");
    assert_eq!(r.status(), 200);
    let lines: Vec<Value> = r
        .text()
        .await
        .expect("a body")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 17);
    for (line, m) in lines[..16].iter().zip(document["moves"].as_array().expect("moves")) {
        assert_matches_schema("MoveReview", line);
        assert_eq!(line["odds"], m["odds"]);
    }
    let summary = &lines[16]["summary"];
    assert_matches_schema("AnalyzeSummary", summary);
    assert_eq!(summary["odds"], document["summary"]["odds"]);

    // A review at other settings grades with its own search; its odds are still the default play's.
    let (status, classic) = post(
        &server,
        "/analyze",
        with(record, json!({"profile": "classic", "depth": 2})),
    )
    .await;
    assert_eq!(status, 200, "{classic}");
    assert_eq!(classic["summary"]["profile"], "classic");
    assert_eq!(classic["summary"]["odds"]["play"], document["summary"]["odds"]["play"]);
    for (c, d) in classic["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .zip(document["moves"].as_array().expect("moves"))
    {
        check_move(c);
        for (x, y) in c["odds"]
            .as_array()
            .expect("odds")
            .iter()
            .zip(d["odds"].as_array().expect("odds"))
        {
            assert_eq!(
                (&x["tile"], &x["before"], &x["after_played"]),
                (&y["tile"], &y["before"], &y["after_played"])
            );
        }
    }
    server.stop().await.expect("stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_without_odds_refuses_them_at_the_field_and_still_reviews() {
    // No network: no odds (the default play is the learned network's).
    let server = TestServer::start(ServerConfig::default()).await;
    let record =
        json!({"moves": [{"board": "0000000000000112", "direction": "left"}], "profile": "classic", "depth": 2});
    let (status, body) = post(&server, "/analyze", with(record.clone(), json!({"odds": true}))).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["pointer"], "/odds");
    let (status, body) = post(&server, "/analyze", with(record.clone(), json!({"odds": "yes"}))).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["pointer"], "/odds");
    let (status, body) = post(&server, "/analyze", with(record, json!({"odds": false}))).await;
    assert_eq!(status, 200, "{body}");
    server.stop().await.expect("stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_s_review_odds_are_the_http_api_s() {
    let server = TestServer::start_with_network(ServerConfig::default(), Some(shipped_network())).await;
    let record = game();
    let (status, over_http) = post(&server, "/analyze", with(record.clone(), json!({"odds": true}))).await;
    assert_eq!(status, 200, "{over_http}");
    let dir = std::env::temp_dir().join(format!("advisor2048-review-odds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("game.json");
    std::fs::write(&file, record.to_string()).expect("written");
    let path = file.to_str().expect("a path");
    let from_cli = cli(&["analyze", path, "--odds", "--json"]);
    let odds = |v: &Value| -> Vec<Value> {
        v["moves"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["odds"].clone())
            .collect()
    };
    assert_eq!(odds(&from_cli), odds(&over_http));
    assert_eq!(
        from_cli["summary"]["odds"]["largest_losses"],
        over_http["summary"]["odds"]["largest_losses"]
    );
    // The readable review says what the largest loss cost.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["analyze", path, "--odds"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let first = &over_http["summary"]["odds"]["largest_losses"][0];
    let line = format!(
        "move {}: played {}, best {}: cost {:.1} points of {}",
        first["index"],
        first["played"].as_str().unwrap_or_default(),
        first["best"].as_str().unwrap_or_default(),
        100.0 * number(&first["loss"]),
        first["tile"]
    );
    assert!(text.contains(&line), "{line:?} not in:\n{text}");
    // Without --odds, no odds.
    let plain = cli(&["analyze", path, "--json"]);
    assert!(plain["summary"].get("odds").is_none());
    std::fs::remove_dir_all(&dir).ok();
    server.stop().await.expect("stops");
}
