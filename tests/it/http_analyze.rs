//! `POST /analyze` over HTTP: a `/simulate` game reviewed as it comes out, a game with a deliberately bad move, the
//! three record forms agreeing, every bad record of the issue refused with a 422 at the move's pointer (and the
//! server still answering), the NDJSON stream, the wall-clock limit, and cancellation when the client goes away.
//! Every answer is checked against `openapi.yaml`.

use crate::common;

use std::time::{Duration, Instant};

use advisor2048::engine::{Direction, Tiles};
use advisor2048::eval::EvaluatorKind;
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use advisor2048::server::ServerConfig;
use common::{assert_matches_schema, healthz, post, TestServer};
use serde_json::{json, Value};

/// The search settings every review below uses: the classic profile at 2 plies (fast, deterministic).
fn settings() -> Value {
    json!({"profile": "classic", "depth": 2})
}

fn with_settings(mut body: Value) -> Value {
    let map = body.as_object_mut().expect("an object");
    for (k, v) in settings().as_object().expect("an object") {
        map.insert(k.clone(), v.clone());
    }
    body
}

/// The errors of a 422 as (pointer, message).
fn problems(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            (
                e["pointer"].as_str().expect("pointer").to_owned(),
                e["message"].as_str().expect("message").to_owned(),
            )
        })
        .collect()
}

/// A traced game of `/simulate` (classic, 2 plies, 80 moves at most).
async fn simulated_game(server: &TestServer) -> Value {
    let request = with_settings(json!({"games": 1, "seed": 5, "max_moves": 80, "trace": true}));
    let (status, body) = post(server, "/simulate", request).await;
    assert_eq!(status, 200, "{body}");
    body["games"][0].clone()
}

/// A game built here move by move: the classic search's choice (at the review's settings) at every move but
/// `bad`, where the legal direction with the lowest value is played; each spawn a 2 in the first empty cell.
/// Returns the start board, the directions and the spawns.
fn game_with_a_bad_move(moves: usize, bad: usize) -> (Tiles, Vec<Direction>, Vec<(usize, u32)>) {
    let evaluator = EvaluatorKind::Classic.default_evaluator().expect("classic");
    let settings = SearchSettings {
        depth: Depth::Plies(2),
        ..Profile::Classic.settings()
    };
    let start = Tiles::from_rows(&[[0, 0, 0, 2], [0, 4, 0, 0], [0, 0, 8, 0], [2, 0, 0, 16]]).expect("a board");
    let (mut board, mut directions, mut spawns) = (start, Vec::new(), Vec::new());
    for i in 0..moves {
        let outcome = search(&board, &evaluator, &settings, &StopHandle::new());
        let direction = if i == bad {
            let (worst, _) = Direction::ALL
                .into_iter()
                .filter_map(|d| Some((d, outcome.values[d.index()]?)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("a legal move");
            assert_ne!(
                Some(worst),
                outcome.best,
                "move {bad} has a worse direction than the best"
            );
            worst
        } else {
            outcome.best.expect("a legal move")
        };
        let (after, _) = board.play(direction).expect("legal");
        let cell = after.exponents().iter().position(|&e| e == 0).expect("an empty cell");
        directions.push(direction);
        spawns.push((cell, 2));
        board = after.with_exponent_at(cell, 1);
    }
    (start, directions, spawns)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulate_game_is_reviewed_as_it_comes_out_and_every_move_was_best() {
    let server = TestServer::start(ServerConfig::default()).await;
    let game = simulated_game(&server).await;
    let trace = game["trace"].as_array().expect("a trace");
    assert!(trace.len() >= 20, "{} moves", trace.len());
    let (status, review) = post(&server, "/analyze", with_settings(json!({"game": game}))).await;
    assert_eq!(status, 200, "{review}");
    let moves = review["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), trace.len());
    for (m, step) in moves.iter().zip(trace) {
        // The same search at the same settings chose this move: best, lost nothing, the same value.
        assert_eq!(m["played"], step["direction"]);
        assert_eq!(m["best"], step["direction"]);
        assert_eq!(m["grade"], "best", "{m}");
        assert_eq!(m["loss"], 0.0);
        assert_eq!(m["board"], step["board"]);
        let played = m["values"][m["played"].as_str().expect("a direction")].as_f64();
        assert!(
            (played.expect("a value") - step["value"].as_f64().expect("a value")).abs() < 1e-9,
            "{m} {step}"
        );
    }
    let summary = &review["summary"];
    assert_eq!(summary["moves"], trace.len());
    assert_eq!(summary["graded"], trace.len());
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["accuracy"], 1.0);
    assert_eq!(summary["weighted_accuracy"], 1.0);
    assert_eq!(summary["total_loss"], 0.0);
    assert_eq!(summary["worst"], json!([]));
    assert_eq!(summary["largest_tile"]["tile"], game["max_tile"]);
    assert_eq!(
        (summary["profile"].as_str(), summary["target_depth"].as_u64()),
        (Some("classic"), Some(2))
    );

    // A trace from another run with gaps: a move left out is refused at the board after the gap ...
    let mut gapped = game.clone();
    gapped["trace"].as_array_mut().expect("a trace").remove(10);
    let (status, body) = post(&server, "/analyze", with_settings(json!({"game": gapped.clone()}))).await;
    assert_eq!(status, 422, "{body}");
    let found = problems(&body);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "/game/trace/10/board");
    assert!(found[0].1.contains("contiguous"), "{found:?}");
    // ... and reviewed when the request says the record has gaps.
    let (status, body) = post(
        &server,
        "/analyze",
        with_settings(json!({"game": gapped, "contiguous": false})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["summary"]["graded"], trace.len() - 1);
    // A game without a trace cannot be reviewed.
    let mut untraced = game.clone();
    untraced.as_object_mut().expect("an object").remove("trace");
    let (status, body) = post(&server, "/analyze", json!({"game": untraced})).await;
    assert_eq!(status, 422);
    assert_eq!(problems(&body)[0].0, "/game/trace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_move_is_graded_and_listed_and_the_three_forms_agree() {
    let server = TestServer::start(ServerConfig::default()).await;
    let (start, directions, spawns) = game_with_a_bad_move(30, 12);
    let names: Vec<&str> = directions.iter().map(|d| d.as_str()).collect();
    let spawn_json: Vec<Value> = spawns.iter().map(|(c, v)| json!({"cell": c, "value": v})).collect();
    let start_form = with_settings(json!({"start": start.to_rows(), "directions": names, "spawns": spawn_json}));
    let (status, review) = post(&server, "/analyze", start_form).await;
    assert_eq!(status, 200, "{review}");
    let summary = &review["summary"];
    let worst = summary["worst"].as_array().expect("worst");
    assert_eq!(worst.len(), 1, "only the bad move lost anything: {worst:?}");
    assert_eq!(worst[0]["index"], 12);
    assert!(worst[0]["loss"].as_f64().expect("loss") > 0.0);
    assert_ne!(worst[0]["grade"], "best");
    assert_eq!(worst[0]["board"], review["moves"][12]["board"]);
    assert_eq!(summary["grades"]["best"], 29);
    assert_eq!(summary["accuracy"], 29.0 / 30.0);
    let bad = &review["moves"][12];
    let (best, played) = (bad["best"].as_str().unwrap(), bad["played"].as_str().unwrap());
    let loss = bad["values"][best].as_f64().unwrap() - bad["values"][played].as_f64().unwrap();
    assert!((bad["loss"].as_f64().unwrap() - loss).abs() < 1e-9, "{bad}");

    // The same game as a list of boards and directions (hex boards, then the saved-state board of the page for
    // one of them): the same review.
    let mut boards = vec![start];
    for (i, d) in directions.iter().enumerate() {
        let (after, _) = boards[i].play(*d).unwrap();
        boards.push(after.with_exponent_at(spawns[i].0, 1));
    }
    let moves: Vec<Value> = directions
        .iter()
        .zip(&boards)
        .map(|(d, b)| json!({"board": b.to_hex().unwrap(), "direction": d.as_str()}))
        .collect();
    let (status, again) = post(&server, "/analyze", with_settings(json!({"moves": moves}))).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["moves"], review["moves"]);
    assert_eq!(again["summary"]["worst"], review["summary"]["worst"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_records_are_refused_at_the_move_and_the_server_stays_responsive() {
    let server = TestServer::start(ServerConfig::default()).await;
    let two = json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 2]]);
    let after_left = json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [4, 0, 0, 0]]);
    let spawned = json!([[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [4, 0, 0, 0]]);
    let two_spawns = json!([[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 2], [4, 0, 0, 0]]);
    let vanished = json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
    let huge = json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [131072, 131072, 0, 0]]);
    let many: Vec<&str> = vec!["left"; 1_000_000];
    let cases = [
        ("empty record", json!({"moves": []}), "/moves", "at least one move"),
        (
            "10^6 moves",
            json!({"start": two, "directions": many, "spawns": []}),
            "/directions",
            "--max-analyze-moves",
        ),
        (
            "two spawns",
            json!({"moves": [{"board": two, "direction": "left"}, {"board": two_spawns, "direction": "up"}]}),
            "/moves/1/board",
            "2 cells differ",
        ),
        (
            "a tile that vanishes",
            json!({"moves": [{"board": two, "direction": "left"}, {"board": vanished, "direction": "up"}]}),
            "/moves/1/board",
            "row 3, column 0 holds 0 where the move left 4",
        ),
        (
            "no spawn",
            json!({"moves": [{"board": two, "direction": "left"}, {"board": after_left, "direction": "up"}]}),
            "/moves/1/board",
            "no tile appeared",
        ),
        (
            "a direction that does nothing",
            json!({"moves": [{"board": two, "direction": "left"}, {"board": spawned, "direction": "up"}, {"board": two, "direction": "down"}]}),
            "/moves/2/direction",
            "down does nothing",
        ),
        (
            "boards of 131072 tiles",
            json!({"moves": [{"board": huge, "direction": "left"}]}),
            "/moves/0/board",
            "more than a 4x4 game can hold",
        ),
        (
            "a spawn on a tile",
            json!({"start": two, "directions": ["left", "up"], "spawns": [{"cell": 12, "value": 2}]}),
            "/spawns/0",
            "not empty",
        ),
        (
            "a spawn of 8",
            json!({"start": two, "directions": ["left"], "spawns": [{"cell": 3, "value": 8}]}),
            "/spawns/0/value",
            "2 or 4",
        ),
        (
            "two forms",
            json!({"moves": [{"board": two, "direction": "left"}], "start": two}),
            "/start",
            "one form",
        ),
        ("no game", json!({"depth": 2}), "", "a game is required"),
        (
            "an unknown direction",
            json!({"moves": [{"board": two, "direction": "sideways"}]}),
            "/moves/0/direction",
            "is not a direction",
        ),
    ];
    for (name, body, pointer, message) in cases {
        let (status, answer) = post(&server, "/analyze", body).await;
        assert_eq!(status, 422, "{name}: {answer}");
        let found = problems(&answer);
        assert!(
            found.iter().any(|(p, m)| p == pointer && m.contains(message)),
            "{name}: expected {pointer} {message:?}, found {found:?}"
        );
    }
    // One 131072 tile is a board a game can reach: reviewed on the exact path.
    let one_huge = json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0], [131072, 0, 0, 0]]);
    let (status, answer) = post(
        &server,
        "/analyze",
        json!({"moves": [{"board": one_huge, "direction": "up"}], "profile": "classic", "depth": 1}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["summary"]["largest_tile"]["tile"], 131072);
    // A record of many bad boards lists at most 50 problems.
    let bad: Vec<Value> = (0..500).map(|_| json!({"board": "zz", "direction": "up"})).collect();
    let (status, answer) = post(&server, "/analyze", json!({"moves": bad})).await;
    assert_eq!(status, 422);
    assert_eq!(problems(&answer).len(), 50);
    let health = healthz(&server.url("/healthz")).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["searches_running"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_has_a_body_limit_of_its_own() {
    let config = ServerConfig {
        analyze_body_limit: 200_000,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config).await;
    // 100 KB: over the 64 KB of the other routes, within /analyze's own limit (a 422 here: no spawns).
    let directions = vec!["left"; 12_000];
    let body = json!({"start": "0000000000000112", "directions": directions});
    let (status, answer) = post(&server, "/analyze", body.clone()).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(problems(&answer)[0].0, "/spawns");
    let (status, _) = post(
        &server,
        "/best-move",
        json!({"board": "0000000000000112", "pad": directions}),
    )
    .await;
    assert_eq!(status, 413);
    let directions = vec!["left"; 30_000];
    let (status, answer) = post(
        &server,
        "/analyze",
        json!({"start": "0000000000000112", "directions": directions}),
    )
    .await;
    assert_eq!(status, 413, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_streams_one_line_per_move_then_the_summary() {
    let server = TestServer::start(ServerConfig::default()).await;
    let game = simulated_game(&server).await;
    let moves = game["moves"].as_u64().expect("moves") as usize;
    let r = reqwest::Client::new()
        .post(server.url("/analyze"))
        .header("accept", "application/x-ndjson")
        .json(&with_settings(json!({"game": game})))
        .send()
        .await
        .expect("an answer");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.expect("a body");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), moves + 1);
    for (i, line) in lines[..moves].iter().enumerate() {
        assert_matches_schema("MoveReview", line);
        assert_eq!(line["index"], i);
    }
    assert_matches_schema("AnalyzeSummary", &lines[moves]["summary"]);
    assert_eq!(lines[moves]["summary"]["graded"], moves);
}

/// A slow review: one mid-game board, 5000 times (a record with gaps), at 7 plies with every cell averaged.
fn slow_review() -> Value {
    let board = "1200340056007800";
    let moves: Vec<Value> = (0..5000)
        .map(|_| json!({"board": board, "direction": "right"}))
        .collect();
    json!({"moves": moves, "contiguous": false, "profile": "classic", "depth": 7, "prob_cutoff": 0})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wall_clock_limit_answers_the_moves_graded_so_far() {
    let config = ServerConfig {
        max_analyze_time: Duration::from_millis(500),
        ..ServerConfig::default()
    };
    let server = TestServer::start(config).await;
    let started = Instant::now();
    let (status, answer) = post(&server, "/analyze", slow_review()).await;
    assert_eq!(status, 200, "{answer}");
    let summary = &answer["summary"];
    assert_eq!(summary["complete"], false);
    assert_eq!(summary["moves"], 5000);
    let graded = summary["graded"].as_u64().expect("graded");
    assert!(graded < 5000, "{graded} graded");
    assert_eq!(answer["moves"].as_array().expect("moves").len() as u64, graded);
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_stops_when_its_client_goes_away() {
    let server = TestServer::start(ServerConfig::default()).await;
    let mut r = reqwest::Client::new()
        .post(server.url("/analyze"))
        .header("accept", "application/x-ndjson")
        .json(&slow_review())
        .send()
        .await
        .expect("an answer");
    assert_eq!(r.status(), 200);
    let first = r.chunk().await.expect("a chunk").expect("a first line");
    assert!(!first.is_empty());
    assert_eq!(server.state.permits.running(), 1);
    drop(r);
    let gone = Instant::now();
    while server.state.permits.running() != 0 {
        assert!(gone.elapsed() < Duration::from_secs(10), "the review kept running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, _) = post(
        &server,
        "/analyze",
        json!({"moves": [{"board": "0000000000000112", "direction": "left"}]}),
    )
    .await;
    assert_eq!(status, 200);
}

/// Mirror images of one board are worth the same: a move to either is `best` with no loss, although the learned
/// search's values of the two can differ in their last bits (f32 in the transposition table, sums in another order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_to_a_mirror_image_of_the_best_board_is_best() {
    let server = TestServer::start(ServerConfig::default()).await;
    // Two 2s in opposite corners: up and left give mirror images of each other's boards, as do down and right.
    let board = json!([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]]);
    for direction in ["up", "down", "left", "right"] {
        let body = json!({"moves": [{"board": board, "direction": direction}], "depth": 5});
        let (status, review) = post(&server, "/analyze", body).await;
        assert_eq!(status, 200, "{review}");
        let m = &review["moves"][0];
        let values: Vec<f64> = ["up", "down", "left", "right"]
            .iter()
            .map(|d| m["values"][d].as_f64().expect("every direction is legal"))
            .collect();
        let spread = values.iter().cloned().fold(f64::MIN, f64::max) - values.iter().cloned().fold(f64::MAX, f64::min);
        assert!(
            spread < 1e-6 * values[0].abs(),
            "the four values are one value: {values:?}"
        );
        assert_eq!(m["grade"], "best", "{direction}: {m}");
        assert_eq!(m["loss"], 0.0, "{direction}: {m}");
    }
}
