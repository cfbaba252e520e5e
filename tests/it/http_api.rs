//! The HTTP API through its public interface: a real server on 127.0.0.1:0, reqwest, and every response body
//! checked against `openapi.yaml`.

use crate::common;

use std::time::{Duration, Instant};

use advisor2048::server::ServerConfig;
use common::{assert_matches_schema, example, healthz, post, TestServer};
use serde_json::{json, Value};

fn values(body: &Value) -> Vec<Option<f64>> {
    body["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["value"].as_f64())
        .collect()
}

/// A game record without the time it took (the only field that may differ between two runs of the same game).
fn untimed(game: &Value) -> Value {
    let mut game = game.clone();
    let record = game.as_object_mut().expect("a game record");
    record.remove("elapsed_ms");
    record.remove("cpu_ms");
    game
}

fn round(x: Option<f64>, places: i32) -> Option<f64> {
    let k = 10f64.powi(places);
    x.map(|v| (v * k).round() / k)
}

#[tokio::test]
async fn best_move_golden_in_every_board_format() {
    let server = TestServer::start(ServerConfig::default()).await;
    let saved = json!({"grid": {"size": 4, "cells": [
        [null, null, {"position": {"x": 0, "y": 2}, "value": 2}, {"position": {"x": 0, "y": 3}, "value": 128}],
        [null, {"position": {"x": 1, "y": 1}, "value": 4}, {"position": {"x": 1, "y": 2}, "value": 4}, {"position": {"x": 1, "y": 3}, "value": 64}],
        [{"position": {"x": 2, "y": 0}, "value": 2}, {"position": {"x": 2, "y": 1}, "value": 8}, {"position": {"x": 2, "y": 2}, "value": 8}, {"position": {"x": 2, "y": 3}, "value": 32}],
        [{"position": {"x": 3, "y": 0}, "value": 2}, {"position": {"x": 3, "y": 1}, "value": 16}, {"position": {"x": 3, "y": 2}, "value": 32}, {"value": 1024}]
    ]}, "score": 1416, "over": false, "won": false, "keepPlaying": false});
    for board in [example(), saved] {
        let (status, body) = post(
            &server,
            "/best-move",
            json!({"board": board, "profile": "classic", "depth": 3}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_matches_schema("BestMoveResponse", &body);
        assert_eq!(body["direction"], "right");
        assert_eq!(body["game_over"], false);
        let v: Vec<_> = values(&body).into_iter().map(|v| round(v, 4)).collect();
        assert_eq!(
            v,
            vec![Some(1081.5864), Some(1155.0509), Some(1124.2152), Some(1159.2054)]
        );
        assert_eq!(body["board"], example());
        assert_eq!(body["search"]["depth"], 3);
        assert_eq!(body["search"]["profile"], "classic");
        // Every legal move carries its board and breakdown, whose contributions add up.
        for m in body["moves"].as_array().unwrap() {
            let h = &m["heuristic"];
            let sum: f64 = h["components"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["contribution"].as_f64().unwrap())
                .sum();
            assert!((sum - h["total"].as_f64().unwrap()).abs() < 1e-6);
        }
    }
    // Tuned profile, hex board: the early-game board moves up.
    let (status, body) = post(&server, "/best-move", json!({"board": "0000000000000112", "depth": 3})).await;
    assert_eq!(status, 200);
    assert_eq!(body["direction"], "up", "{body}");
    assert_eq!(body["moves"][1]["legal"], false);
    assert_eq!(body["moves"][1]["value"], Value::Null);
    assert_eq!(body["moves"][1]["board"], Value::Null);
}

#[tokio::test]
async fn tuned_golden_and_game_over() {
    let server = TestServer::start(ServerConfig::default()).await;
    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": [[2,0,0,0],[4,2,0,0],[16,8,4,0],[256,128,32,8]], "depth": 3}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let v: Vec<_> = values(&body).into_iter().map(|v| round(v, 2)).collect();
    assert_eq!(v, vec![Some(1475411.32), None, None, Some(1539038.51)]);
    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": [[2,4,2,4],[4,2,4,2],[2,4,2,4],[4,2,4,2]]}),
    )
    .await;
    assert_eq!(status, 200);
    assert_matches_schema("BestMoveResponse", &body);
    assert_eq!(body["direction"], Value::Null);
    assert_eq!(body["game_over"], true);
}

#[tokio::test]
async fn evaluate_golden_numbers() {
    let server = TestServer::start(ServerConfig::default()).await;
    let (status, body) = post(&server, "/evaluate", json!({"board": example()})).await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("EvaluateResponse", &body);
    assert_eq!(body["evaluator"], "classic");
    assert_eq!(round(body["total"].as_f64(), 4), Some(1125.1164));
    assert_eq!(body["after_moves"].as_array().unwrap().len(), 4);
    let (status, body) = post(&server, "/evaluate", json!({"board": example(), "evaluator": "tuned"})).await;
    assert_eq!(status, 200);
    assert_eq!(round(body["total"].as_f64(), 2), Some(1403437.22));
    let (status, body) = post(
        &server,
        "/evaluate",
        json!({"board": example(), "evaluator": "tuned", "weights": {"empty": 0}}),
    )
    .await;
    assert_eq!(status, 200);
    let empty = body["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "empty")
        .unwrap()
        .clone();
    assert_eq!(empty["weight"], 0.0);
    assert_eq!(empty["contribution"], 0.0);
}

#[tokio::test]
async fn invalid_requests_name_every_problem() {
    let server = TestServer::start(ServerConfig::default()).await;
    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": [[0,2,4,8],[0,0,0,0],[0,0,0,3],[0,0,0,0]]}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["pointer"], "/board/2/3");
    assert_eq!(
        body["errors"][0]["message"],
        "3 is not a tile value (0 or a power of two from 2 to 131072)"
    );

    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": [[1,2,4,8],[0,-2,0,0],[0,0,0,262144],[0,0,0,2.5]], "dept": 3, "depth": 99, "weights": {"bogus": 1}}),
    )
    .await;
    assert_eq!(status, 422);
    let pointers: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap())
        .collect();
    for p in [
        "/board/0/0",
        "/board/1/1",
        "/board/2/3",
        "/board/3/3",
        "/dept",
        "/depth",
        "/weights/bogus",
    ] {
        assert!(pointers.contains(&p), "{p} missing in {pointers:?}");
    }
    let depth = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["pointer"] == "/depth")
        .unwrap();
    assert!(depth["message"].as_str().unwrap().contains("limit of 29"), "{depth}");

    for (board, pointer) in [
        (json!("00000000000001g2"), "/board"),
        (json!("0123"), "/board"),
        (json!([[0, 0, 0, 0]]), "/board"),
        (json!([[0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]), "/board/0"),
        (json!({"grid": {"size": 5, "cells": []}}), "/board/grid/size"),
        (
            json!({"grid": {"size": 4, "cells": [[null, null, null, null], [null, null, null, null], [null, null, null, null], [null, null, {"position": {"x": 0, "y": 0}, "value": 2}, null]]}}),
            "/board/grid/cells/3/2/position",
        ),
        (json!(42), "/board"),
    ] {
        let (status, body) = post(&server, "/best-move", json!({ "board": board })).await;
        assert_eq!(status, 422, "{board}: {body}");
        assert_eq!(body["errors"][0]["pointer"], pointer, "{board}: {body}");
    }
    let (status, body) = post(&server, "/best-move", json!({})).await;
    assert_eq!((status, body["errors"][0]["pointer"].as_str()), (422, Some("/board")));
    let (status, _) = post(&server, "/best-move", json!([1, 2])).await;
    assert_eq!(status, 422);
    let (status, body) = post(
        &server,
        "/evaluate",
        json!({"board": example(), "evaluator": "tuned", "weights": {"corner": 1}}),
    )
    .await;
    assert_eq!(
        (status, body["errors"][0]["pointer"].as_str()),
        (422, Some("/weights/corner"))
    );
    let (status, body) = post(
        &server,
        "/best-move",
        json!({"board": example(), "sample_cells": 0, "top_k": 9, "prob_cutoff": 1.5}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"].as_array().unwrap().len(), 3, "{body}");
}

#[tokio::test]
async fn transport_errors_are_problem_details() {
    let server = TestServer::start(ServerConfig::default()).await;
    let client = reqwest::Client::new();
    let check = |r: reqwest::Response, status: u16| async move {
        assert_eq!(r.status().as_u16(), status);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let body: Value = r.json().await.unwrap();
        assert_matches_schema("Problem", &body);
        body
    };
    let r = client
        .post(server.url("/best-move"))
        .header("content-type", "application/json")
        .body("{\"board\": [")
        .send();
    check(r.await.unwrap(), 400).await;
    let r = client
        .post(server.url("/best-move"))
        .header("content-type", "text/plain")
        .body("{}")
        .send();
    check(r.await.unwrap(), 415).await;
    let r = client.post(server.url("/best-move")).body("{}").send();
    check(r.await.unwrap(), 415).await;
    let big = format!("{{\"board\": \"{}\"}}", "0".repeat(70 * 1024));
    let r = client
        .post(server.url("/best-move"))
        .header("content-type", "application/json")
        .body(big)
        .send();
    check(r.await.unwrap(), 413).await;
    check(client.get(server.url("/nope")).send().await.unwrap(), 404).await;
    check(client.get(server.url("/best-move")).send().await.unwrap(), 405).await;
    check(client.delete(server.url("/healthz")).send().await.unwrap(), 405).await;
}

#[tokio::test]
async fn health_spec_metrics_request_id_and_cors() {
    let server = TestServer::start(ServerConfig::default()).await;
    let client = reqwest::Client::new();
    let r = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let id = r
        .headers()
        .get("x-request-id")
        .expect("generated request id")
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(id.len(), 36, "{id}");
    let body: Value = r.json().await.unwrap();
    assert_matches_schema("Health", &body);
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));

    let r = client
        .get(server.url("/healthz"))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "abc-123");

    let spec = client
        .get(server.url("/openapi.yaml"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(spec, include_str!("../../openapi.yaml"));

    post(&server, "/evaluate", json!({"board": example()})).await;
    let metrics = client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("advisor2048_requests_total{route=\"/evaluate\",method=\"POST\",status=\"200\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("advisor2048_request_duration_seconds_bucket{le=\"+Inf\"}"));
    assert!(metrics.contains("advisor2048_searches_running 0"));

    let page = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));

    let preflight = client
        .request(reqwest::Method::OPTIONS, server.url("/best-move"))
        .header("origin", "https://play2048.co")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .header("access-control-request-private-network", "true")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success());
    let h = preflight.headers();
    // The default allows the userscript's game pages (tests/it/cors.rs has the rest of the rules).
    assert_eq!(h["access-control-allow-origin"], "https://play2048.co");
    assert!(h["access-control-allow-methods"].to_str().unwrap().contains("POST"));
    assert!(h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("content-type"));
    assert_eq!(h["access-control-allow-private-network"], "true");
}

#[tokio::test]
async fn budgets_and_threads_beyond_any_limit_are_clamped_not_refused() {
    let server = TestServer::start(ServerConfig::default()).await;
    // Whole numbers of any size (here beyond 64 bits, so JSON floats) mean "as much as the server allows".
    let body = json!({"board": example(), "profile": "classic", "depth": 3, "time_budget_ms": 5.1113651009655836e29, "threads": 1e30});
    let (status, answer) = post(&server, "/best-move", body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["direction"], "right", "{answer}");
    assert_matches_schema("BestMoveResponse", &answer);
    for (field, bad) in [
        ("time_budget_ms", json!(0)),
        ("time_budget_ms", json!(0.001)),
        ("time_budget_ms", json!("1")),
        ("threads", json!(-1)),
    ] {
        let mut body = json!({"board": example(), "depth": 1});
        body[field] = bad.clone();
        let (status, answer) = post(&server, "/best-move", body).await;
        assert_eq!(status, 422, "{field} = {bad}: {answer}");
        assert_eq!(answer["errors"][0]["pointer"], format!("/{field}"), "{answer}");
    }
}

/// A search that runs until its time budget or a cancellation: 29 plies without the probability cut-off never
/// complete (with the default cut-off this board's 29 plies take about a second, less than the test's bounds).
fn long_search() -> Value {
    json!({"board": "13222442a7b8c9d1", "depth": 29, "prob_cutoff": 0, "time_budget_ms": 20000})
}

async fn running(server: &TestServer) -> u64 {
    healthz(&server.url("/healthz")).await["searches_running"]
        .as_u64()
        .unwrap()
}

async fn wait_for_running(server: &TestServer, n: u64) -> Duration {
    let start = Instant::now();
    while running(server).await != n {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "searches_running never became {n}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saturation_cancellation_and_health_while_busy() {
    let config = ServerConfig {
        max_searches: 1,
        max_queue: 0,
        max_budget: Duration::from_secs(20),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let url = server.url("/best-move");
    let first = tokio::spawn(async move { reqwest::Client::new().post(url).json(&long_search()).send().await });
    wait_for_running(&server, 1).await;

    // Every permit taken and no queue: 503 at once, with Retry-After.
    let r = reqwest::Client::new()
        .post(server.url("/best-move"))
        .json(&json!({"board": example()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let body: Value = r.json().await.unwrap();
    assert_matches_schema("Problem", &body);

    // The async workers are free: /healthz answers while the search holds its permit (for up to 20 s). The bound is
    // generous (it answers in well under a millisecond); a /healthz that waited for the search would take 20 s.
    let start = Instant::now();
    let r = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), 200);
    let took = start.elapsed();
    println!("healthz while saturated: {took:?}");
    assert!(
        took < Duration::from_secs(5),
        "/healthz waited {took:?} behind a search"
    );

    // The client goes away: the drop guard stops the search and frees the permit long before its 20 s budget.
    first.abort();
    let freed = wait_for_running(&server, 0).await;
    println!("permit freed {freed:?} after the client disconnected");
    assert!(freed < Duration::from_secs(5), "{freed:?}");
    let (status, _) = post(&server, "/best-move", json!({"board": example(), "depth": 1})).await;
    assert_eq!(status, 200);
}

/// `GET /metrics`, parsed: series (name with labels, as written) to value.
async fn metrics(server: &TestServer) -> std::collections::BTreeMap<String, f64> {
    let r = reqwest::get(server.url("/metrics")).await.unwrap();
    assert_eq!(r.status(), 200);
    r.text()
        .await
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("a series and its value");
            (series.to_owned(), value.parse().expect("a number"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_requests_wait_for_a_permit() {
    let config = ServerConfig {
        max_searches: 1,
        max_queue: 4,
        max_budget: Duration::from_secs(20),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    // One search holds the only permit until its client goes away.
    let url = server.url("/best-move");
    let holder = tokio::spawn(async move { reqwest::Client::new().post(url).json(&long_search()).send().await });
    wait_for_running(&server, 1).await;
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let url = server.url("/best-move");
        tasks.push(tokio::spawn(async move {
            let r = reqwest::Client::new()
                .post(url)
                .json(&json!({"board": common::example(), "depth": 5}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap();
            (status, body)
        }));
    }
    // All three wait in the queue, as /healthz and /metrics both say.
    let start = Instant::now();
    loop {
        let health = healthz(&server.url("/healthz")).await;
        if health["searches_queued"] == 3 {
            assert_eq!(health["searches_running"], 1);
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "never 3 queued: {health}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let m = metrics(&server).await;
    assert_eq!(m["advisor2048_searches_queued"], 3.0);
    assert_eq!(m["advisor2048_searches_running"], 1.0);
    assert!(
        tasks.iter().all(|t| !t.is_finished()),
        "no queued request answered while the permit was held"
    );
    // The permit comes free: every queued request gets its turn and answers.
    holder.abort();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert_matches_schema("BestMoveResponse", &body);
    }
    let m = metrics(&server).await;
    assert_eq!(m["advisor2048_searches_queued"], 0.0);
    assert_eq!(m["advisor2048_searches_running"], 0.0);
}

/// Every series README documents for `/metrics` is there, and each one that counts moves by exactly what the requests
/// did.
#[tokio::test]
async fn metrics_every_documented_series_moves_with_requests() {
    let server = TestServer::start(ServerConfig::default()).await;
    let before = metrics(&server).await;
    for series in [
        "advisor2048_request_duration_seconds_bucket{le=\"+Inf\"}",
        "advisor2048_request_duration_seconds_sum",
        "advisor2048_request_duration_seconds_count",
        "advisor2048_searches_running",
        "advisor2048_searches_queued",
        "advisor2048_searches_total",
        "advisor2048_nodes_searched_total",
        "advisor2048_connections_open",
        "advisor2048_connections_accepted_total",
        "advisor2048_connections_refused_total",
        "advisor2048_connections_timed_out_total{timeout=\"header\"}",
        "advisor2048_connections_timed_out_total{timeout=\"idle\"}",
        "advisor2048_connections_timed_out_total{timeout=\"body\"}",
        "advisor2048_connections_timed_out_total{timeout=\"response\"}",
    ] {
        assert!(before.contains_key(series), "{series} missing: {before:#?}");
    }
    let (status, answer) = post(
        &server,
        "/best-move",
        json!({"board": example(), "profile": "classic", "depth": 3}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = post(&server, "/evaluate", json!({"board": example()})).await;
    assert_eq!(status, 200);
    let (status, _) = post(&server, "/evaluate", json!({"board": "bad"})).await;
    assert_eq!(status, 422);
    let after = metrics(&server).await;
    let moved = |series: &str| after.get(series).copied().unwrap_or(0.0) - before.get(series).copied().unwrap_or(0.0);
    let requests = |route: &str, method: &str, status: u16| {
        moved(&format!(
            "advisor2048_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}}"
        ))
    };
    assert_eq!(requests("/best-move", "POST", 200), 1.0);
    assert_eq!(requests("/evaluate", "POST", 200), 1.0);
    assert_eq!(requests("/evaluate", "POST", 422), 1.0);
    // The first scrape is counted once it has answered.
    assert_eq!(requests("/metrics", "GET", 200), 1.0);
    assert_eq!(moved("advisor2048_request_duration_seconds_count"), 4.0);
    assert_eq!(moved("advisor2048_request_duration_seconds_bucket{le=\"+Inf\"}"), 4.0);
    assert!(moved("advisor2048_request_duration_seconds_sum") > 0.0);
    // Buckets are cumulative: each holds at least the one below, +Inf holds them all.
    let mut buckets: Vec<(f64, f64)> = after
        .iter()
        .filter(|(k, _)| k.starts_with("advisor2048_request_duration_seconds_bucket"))
        .map(|(k, v)| {
            let le = k.split('"').nth(1).unwrap();
            (
                if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                },
                *v,
            )
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let buckets: Vec<f64> = buckets.into_iter().map(|(_, n)| n).collect();
    assert!(
        buckets.len() >= 2 && buckets.windows(2).all(|w| w[0] <= w[1]),
        "{buckets:?}"
    );
    assert_eq!(moved("advisor2048_searches_total"), 1.0);
    assert_eq!(
        moved("advisor2048_nodes_searched_total"),
        answer["search"]["nodes"].as_f64().unwrap()
    );
    assert!(moved("advisor2048_connections_accepted_total") >= 4.0);
}

#[tokio::test]
async fn simulate_answers_gzip_in_both_forms() {
    // The compression layer reads an answer to its end and then once more: the body must stay ended. A stream is
    // not compressed (each line goes out as its game ends) but passes the same layer.
    use std::io::Read;
    let server = TestServer::start(ServerConfig::default()).await;
    let request = json!({"games": 3, "seed": 11, "depth": 1, "max_moves": 300, "trace": true});
    let (_, plain) = post(&server, "/simulate", request.clone()).await;
    for accept in ["application/json", "application/x-ndjson"] {
        let r = reqwest::Client::new()
            .post(server.url("/simulate"))
            .header("accept", accept)
            .header("accept-encoding", "gzip")
            .json(&request)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{accept}");
        let gzip = r.headers().get("content-encoding").is_some_and(|e| e == "gzip");
        assert_eq!(gzip, accept == "application/json", "{accept}: compressed?");
        let received = r.bytes().await.expect("the whole body");
        let mut text = String::new();
        match gzip {
            true => flate2::read::GzDecoder::new(&received[..])
                .read_to_string(&mut text)
                .map(drop)
                .expect("a complete gzip stream"),
            false => text = String::from_utf8(received.to_vec()).expect("UTF-8"),
        }
        let games: Vec<Value> = match accept {
            "application/json" => {
                let body: Value = serde_json::from_str(&text).expect("JSON");
                assert_matches_schema("SimulateResponse", &body);
                body["games"].as_array().unwrap().clone()
            }
            _ => {
                let lines: Vec<Value> = text
                    .lines()
                    .map(|l| serde_json::from_str(l).expect("a JSON line"))
                    .collect();
                assert!(lines.last().unwrap().get("summary").is_some(), "{text}");
                let mut games = lines[..lines.len() - 1].to_vec();
                games.sort_by_key(|g| g["index"].as_u64());
                games
            }
        };
        let expected: Vec<Value> = plain["games"].as_array().unwrap().iter().map(untimed).collect();
        assert_eq!(games.iter().map(untimed).collect::<Vec<_>>(), expected, "{accept}");
    }
}

#[tokio::test]
async fn simulate_json_and_ndjson_stream() {
    let server = TestServer::start(ServerConfig::default()).await;
    let request = json!({"games": 3, "seed": 11, "depth": 1, "max_moves": 300, "trace": true});
    let (status, body) = post(&server, "/simulate", request.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("SimulateResponse", &body);
    let games = body["games"].as_array().unwrap();
    assert_eq!(games.len(), 3);
    assert_eq!(body["summary"]["games"], 3);
    for g in games {
        assert_eq!(
            g["trace"].as_array().unwrap().len() as u64,
            g["moves"].as_u64().unwrap()
        );
    }
    // The same seed and settings give the same games: every field but the time taken.
    let (_, again) = post(&server, "/simulate", request).await;
    assert_eq!(
        games.iter().map(untimed).collect::<Vec<_>>(),
        again["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(untimed)
            .collect::<Vec<_>>()
    );

    let r = reqwest::Client::new()
        .post(server.url("/simulate"))
        .header("accept", "application/x-ndjson")
        .json(&json!({"games": 4, "seed": 11, "depth": 1, "max_moves": 300}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    for game in &lines[..4] {
        assert_matches_schema("GameRecord", game);
    }
    assert_matches_schema("Summary", &lines[4]["summary"]);
    // Four games of the same run seed begin with the same three games (the stream's order is the order they end in).
    let mut streamed: Vec<Value> = lines[..4].iter().map(untimed).collect();
    streamed.sort_by_key(|g| g["index"].as_u64());
    let first_three: Vec<Value> = games
        .iter()
        .map(|g| {
            let mut g = untimed(g);
            g.as_object_mut().unwrap().remove("trace");
            g
        })
        .collect();
    assert_eq!(
        streamed[..3],
        first_three[..],
        "the first three games are the same games"
    );
    // A later chunk of the same run: games 2 and 3, the same games as in the whole run.
    let (status, chunk) = post(
        &server,
        "/simulate",
        json!({"games": 2, "first_game": 2, "seed": 11, "depth": 1, "max_moves": 300}),
    )
    .await;
    assert_eq!(status, 200, "{chunk}");
    let chunk: Vec<Value> = chunk["games"].as_array().unwrap().iter().map(untimed).collect();
    assert_eq!(chunk[..], streamed[2..4], "games 2 and 3 of the run");

    let (status, body) = post(&server, "/simulate", json!({"games": 1001})).await;
    assert_eq!(status, 422);
    assert!(body["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("--max-sim-games"));
    let (status, body) = post(&server, "/simulate", json!({"games": 1, "max_moves": 2_000_001})).await;
    assert_eq!(status, 422);
    assert!(body["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("--max-sim-moves"));
}

/// `until_tile` ends each game when it makes the tile: the same game as without it up to that move (its final board
/// is the board the whole game had then), finished, not over; a number that is not a tile is refused at its field.
#[tokio::test]
async fn simulate_until_tile_ends_each_game_at_the_tile() {
    let server = TestServer::start(ServerConfig::default()).await;
    let request = json!({"games": 3, "seed": 5, "depth": 1, "trace": true});
    let (status, whole) = post(&server, "/simulate", request).await;
    assert_eq!(status, 200, "{whole}");
    let (status, cut) = post(
        &server,
        "/simulate",
        json!({"games": 3, "seed": 5, "depth": 1, "until_tile": 32}),
    )
    .await;
    assert_eq!(status, 200, "{cut}");
    for (w, c) in whole["games"]
        .as_array()
        .unwrap()
        .iter()
        .zip(cut["games"].as_array().unwrap())
    {
        assert!(
            w["max_tile"].as_u64().unwrap() > 32,
            "every game of this seed goes past 32: {w}"
        );
        assert_eq!(c["max_tile"], 32, "{c}");
        let moves = c["moves"].as_u64().unwrap() as usize;
        let trace = w["trace"].as_array().unwrap();
        assert!(moves < trace.len(), "{c}");
        assert_eq!(
            c["final_board"], trace[moves]["board"],
            "the whole game's board after as many moves"
        );
        let before = trace[moves - 1]["board"].as_array().unwrap().iter().flatten_max();
        assert!(before < 32, "the game stops at the move that first made 32, not later");
        assert_eq!(c["finished"], true);
        assert_eq!(c["game_over"], false);
    }
    for bad in [json!(3000), json!(2), json!(262_144)] {
        let (status, body) = post(&server, "/simulate", json!({"games": 1, "depth": 1, "until_tile": bad})).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["errors"][0]["pointer"], "/until_tile", "{body}");
    }
}

/// The largest number in rows of JSON numbers.
trait FlattenMax {
    fn flatten_max(self) -> u64;
}

impl<'a, I: Iterator<Item = &'a Value>> FlattenMax for I {
    fn flatten_max(self) -> u64 {
        self.flat_map(|row| row.as_array().into_iter().flatten())
            .filter_map(Value::as_u64)
            .max()
            .unwrap_or(0)
    }
}

#[tokio::test]
async fn simulate_seed_is_one_field_with_one_problem() {
    let server = TestServer::start(ServerConfig::default()).await;
    // A seed above 2^64 - 1 (a JSON number that became a float): one problem, at /seed.
    let (status, body) = post(
        &server,
        "/simulate",
        json!({"games": 1, "seed": 1.8446744073709552e19, "depth": 1}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let errors = body["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{body}");
    assert_eq!(errors[0]["pointer"], "/seed");
    // The largest seed is accepted, and games derive their own seeds from it.
    let (status, body) = post(
        &server,
        "/simulate",
        json!({"games": 1, "seed": u64::MAX, "depth": 1, "max_moves": 3}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["games"][0]["seed"].is_u64(), "{body}");
}

#[tokio::test]
async fn simulate_first_game_is_bounded_as_the_spec_says() {
    let server = TestServer::start(ServerConfig::default()).await;
    let last = i64::MAX as u64;
    let (status, body) = post(
        &server,
        "/simulate",
        json!({"games": 2, "first_game": last - 1, "depth": 1, "max_moves": 3}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["games"][1]["index"], last, "{body}");
    for first_game in [last + 1, u64::MAX - 1000] {
        let (status, body) = post(
            &server,
            "/simulate",
            json!({"games": 2, "first_game": first_game, "depth": 1}),
        )
        .await;
        assert_eq!(status, 422, "first_game {first_game}: {body}");
        assert_eq!(body["errors"][0]["pointer"], "/first_game", "{body}");
        assert!(
            body["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains("9223372036854775807"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn simulate_stops_at_the_moves_per_request_limit() {
    let config = ServerConfig {
        max_sim_moves: 50,
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    // One thread plays the games one after the other; a depth-5 game lasts thousands of moves, so the first game is
    // cut at exactly 50 and the others never start.
    let (status, body) = post(&server, "/simulate", json!({"games": 3, "seed": 3, "depth": 5})).await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("SimulateResponse", &body);
    let games = body["games"].as_array().unwrap();
    assert_eq!(
        games.len(),
        1,
        "the limit stopped the run in its first game: {}",
        body["summary"]
    );
    let game = &games[0];
    assert_eq!(
        (&game["finished"], &game["game_over"]),
        (&json!(false), &json!(false)),
        "{game}"
    );
    // The simulation counts its moves itself: the limit is exact.
    assert_eq!(game["moves"], 50);
    assert_eq!(body["summary"]["finished"], 0);
    assert_eq!(body["summary"]["total_moves"], 50);
}

#[tokio::test]
async fn simulate_stops_a_traced_run_at_the_trace_limit() {
    let config = ServerConfig {
        max_trace_moves: 40,
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let request = json!({"games": 2, "seed": 3, "depth": 1, "profile": "tuned", "trace": true});
    let (status, traced) = post(&server, "/simulate", request.clone()).await;
    assert_eq!(status, 200, "{traced}");
    assert_matches_schema("SimulateResponse", &traced);
    let game = &traced["games"][0];
    assert_eq!(traced["games"].as_array().unwrap().len(), 1, "{}", traced["summary"]);
    assert_eq!(
        (&game["moves"], &game["finished"]),
        (&json!(40), &json!(false)),
        "{game}"
    );
    assert_eq!(game["trace"].as_array().unwrap().len(), 40);
    assert_eq!(traced["summary"]["total_moves"], 40);
    // Without a trace the same run plays on: the limit is the trace's, not the run's.
    let mut untraced = request;
    untraced["trace"] = json!(false);
    let (status, body) = post(&server, "/simulate", untraced).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["summary"]["finished"], 2, "{}", body["summary"]);
    assert!(body["games"][0]["moves"].as_u64().unwrap() > 40);
}

#[tokio::test]
async fn simulate_reads_the_move_budget_as_best_move_does() {
    // 29 plies without the cut-off and without a budget would search for hours; a budget of 1 ms written as 1.0 or
    // a huge one written as 1e30 (clamped to --sim-move-budget-ms, here 20 ms) keeps each of the 5 moves short.
    let config = ServerConfig {
        sim_move_budget: Duration::from_millis(20),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    for budget in [json!(1.0), json!(1e30)] {
        let started = Instant::now();
        let (status, body) = post(
            &server,
            "/simulate",
            json!({"games": 1, "max_moves": 5, "depth": 29, "prob_cutoff": 0, "time_budget_ms": budget, "seed": 2}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["games"][0]["moves"], 5, "{body}");
        assert_eq!(body["games"][0]["finished"], true);
        // A liveness bound for a loaded machine, far below what an unbudgeted search would take.
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{budget}: {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn simulate_counts_a_fractional_budget_on_the_clock_asked_for() {
    let server = TestServer::start(ServerConfig::default()).await;
    // 29 plies without the cut-off never complete: each move stops at its allowance of a 0.5 ms budget, counted on
    // the game thread's CPU clock.
    let request = json!({"games": 1, "seed": 4, "max_moves": 20, "depth": 29, "prob_cutoff": 0,
        "time_budget_ms": 0.5, "budget_clock": "cpu"});
    let (status, body) = post(&server, "/simulate", request).await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("SimulateResponse", &body);
    let game = &body["games"][0];
    assert_eq!(game["moves"], 20, "{body}");
    // A thread's CPU time is part of the wall-clock time it took (to within the clocks' rounding).
    let (cpu, wall) = (game["cpu_ms"].as_f64().unwrap(), game["elapsed_ms"].as_f64().unwrap());
    assert!(cpu > 0.0 && cpu <= wall + 0.5, "cpu {cpu} ms, wall {wall} ms");
    let per_move = body["summary"]["cpu_ms_per_move"].as_f64().unwrap();
    assert!(
        (per_move - cpu / 20.0).abs() < 1e-9,
        "{per_move} against {cpu} ms over 20 moves"
    );
    for (clock, problem) in [(json!("cpus"), "wall"), (json!(1), "string")] {
        let (status, body) = post(&server, "/simulate", json!({"games": 1, "budget_clock": clock})).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["errors"][0]["pointer"], "/budget_clock", "{body}");
        assert!(
            body["errors"][0]["message"].as_str().unwrap().contains(problem),
            "{body}"
        );
    }
}

#[tokio::test]
async fn simulate_caps_each_moves_budget_at_the_sim_move_budget() {
    let config = ServerConfig {
        sim_move_budget: Duration::from_millis(20),
        max_budget: Duration::from_secs(10),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    // Without the cap every move would search for its whole 10 s budget (29 plies without the cut-off never
    // complete); with it, 3 moves take about 60 ms. The bound is generous either way.
    let start = Instant::now();
    let request =
        json!({"games": 1, "seed": 5, "max_moves": 3, "depth": 29, "prob_cutoff": 0, "time_budget_ms": 10000});
    let (status, body) = post(&server, "/simulate", request).await;
    let took = start.elapsed();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["games"][0]["moves"], 3, "{body}");
    assert!(
        took < Duration::from_secs(8),
        "3 moves took {took:?}: the per-move budget was not capped"
    );
    let per_move = body["summary"]["ms_per_move"].as_f64().unwrap();
    assert!(per_move < 3000.0, "{per_move} ms per move");
}

#[tokio::test]
async fn simulate_wall_clock_limit_returns_the_games_so_far() {
    let config = ServerConfig {
        max_sim_time: Duration::from_millis(300),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let (status, body) = post(&server, "/simulate", json!({"games": 2, "seed": 3, "depth": "auto"})).await;
    assert_eq!(status, 200, "{body}");
    assert_matches_schema("SimulateResponse", &body);
    let unfinished = body["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["finished"] == false)
        .count();
    assert!(
        unfinished >= 1,
        "a game at depth auto takes many seconds: {}",
        body["summary"]
    );
}
