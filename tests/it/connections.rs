//! Stalling and hostile clients, through the public API: a real server on 127.0.0.1:0 with short timeouts set by the
//! tests, and raw TCP clients that send half a request or nothing at all. Stalled connections are closed by their
//! timeouts while `/healthz` answers, the connection cap closes new connections at once and service resumes when
//! connections go, request heads beyond the limits get 431, and shutdown still lets searches finish.
//!
//! Deadlines in these tests are generous upper bounds (a server without the timeouts never closes these connections
//! at all); what is asserted exactly are counts.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use advisor2048::server::ServerConfig;
use common::raw::{post_json, request, RawConn};
use common::{assert_matches_schema, TestServer};
use serde_json::Value;

/// How long a connection that should be closed may take at most here: far above every timeout the tests set.
const PATIENCE: Duration = Duration::from_secs(20);

/// `GET /healthz` on a fresh connection (no pooled connection stays behind to be counted by the server).
async fn healthz(server: &TestServer) -> Result<u16, reqwest::Error> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(5))
        .build()?;
    Ok(client.get(server.url("/healthz")).send().await?.status().as_u16())
}

/// Polls until `done` holds, for at most `PATIENCE`.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn connect(server: &TestServer) -> RawConn {
    RawConn::connect(server.addr).await.expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_connections_are_closed_by_their_timeouts_while_health_answers() {
    let header_timeout = Duration::from_millis(400);
    let idle_timeout = Duration::from_secs(3);
    let config = ServerConfig {
        header_timeout,
        idle_timeout,
        body_timeout: Duration::from_millis(400),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    const EACH: usize = 40;

    // Health is checked all along, on fresh connections.
    let stop_checking = Arc::new(AtomicBool::new(false));
    let checker = {
        let url = server.url("/healthz");
        let stop = stop_checking.clone();
        tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client");
            let mut answered = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let status = client.get(&url).send().await.map(|r| r.status().as_u16());
                assert_eq!(status.ok(), Some(200), "/healthz while connections stall");
                answered += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answered
        })
    };

    let mut half_heads = Vec::new();
    let mut silent = Vec::new();
    let mut idle = Vec::new();
    let mut trickling = Vec::new();
    for _ in 0..EACH {
        let mut c = connect(&server).await;
        c.send(b"POST /best-move HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        half_heads.push(c);
        silent.push(connect(&server).await);
        let mut c = connect(&server).await;
        let r = c.call(&request("GET", "/healthz", &[], b"")).await.unwrap();
        r.assert_documented("GET", "/healthz", 200);
        idle.push(c);
        let mut c = connect(&server).await;
        c.send(b"POST /best-move HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 64\r\n\r\n{")
            .await
            .unwrap();
        trickling.push(c);
    }
    let idle_since = Instant::now();
    // One body trickles on, a byte every 50 ms (1000 of them would take 50 s): the body timeout bounds the whole body,
    // not the gaps.
    let mut trickler = connect(&server).await;
    trickler
        .send(b"POST /evaluate HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n")
        .await
        .unwrap();
    let trickle = tokio::spawn(async move {
        let start = Instant::now();
        while start.elapsed() < PATIENCE {
            if trickler.send(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        trickler
    });

    for (name, group) in [("half-sent head", &mut half_heads), ("silent", &mut silent)] {
        for c in group.iter_mut() {
            assert!(
                c.closed_within(PATIENCE).await.is_some(),
                "a {name} connection stayed open"
            );
        }
    }
    for c in trickling.iter_mut() {
        let r = c.response().await.expect("a 408 before the connection closes");
        assert_eq!(r.status, 408);
        assert_eq!(r.header("content-type"), Some("application/problem+json"));
        assert_eq!(r.header("connection"), Some("close"));
        let body = r.json();
        assert_matches_schema("Problem", &body);
        assert_eq!(body["status"], 408);
        assert!(
            c.closed_within(PATIENCE).await.is_some(),
            "a trickling body's connection stayed open"
        );
    }
    let mut trickler = trickle.await.unwrap();
    assert!(trickler.closed_within(PATIENCE).await.is_some());

    // Kept-alive connections are not held to the head timeout while idle: well past it, half of them still serve.
    let wait = (header_timeout * 5 / 2).saturating_sub(idle_since.elapsed());
    tokio::time::sleep(wait).await;
    assert!(
        idle_since.elapsed() < idle_timeout,
        "the machine is too slow for this check"
    );
    for c in idle.iter_mut().take(EACH / 2) {
        let r = c.call(&request("GET", "/healthz", &[], b"")).await.unwrap();
        r.assert_documented("GET", "/healthz", 200);
    }
    for c in idle.iter_mut() {
        assert!(
            c.closed_within(PATIENCE).await.is_some(),
            "an idle connection stayed open"
        );
    }

    stop_checking.store(true, Ordering::Relaxed);
    let answered = checker.await.expect("/healthz answered every time");
    assert!(answered > 0);
    let counts = &server.state.metrics.connections;
    assert_eq!(counts.header_timeouts.load(Ordering::Relaxed), 2 * EACH as u64);
    assert_eq!(counts.body_timeouts.load(Ordering::Relaxed), EACH as u64 + 1);
    assert_eq!(counts.idle_timeouts.load(Ordering::Relaxed), EACH as u64);
    println!("closed: {EACH} half-sent heads and {EACH} silent (header timeout), {} bodies (body timeout, 408), {EACH} idle (idle timeout); /healthz answered {answered} times meanwhile", EACH + 1);
    wait_until("every connection closed", || counts.open.load(Ordering::Relaxed) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_new_connections_are_closed_at_once_and_service_resumes() {
    const CAP: usize = 16;
    let config = ServerConfig {
        max_connections: CAP,
        // Far longer than the test: only the cap can close the connection over it.
        header_timeout: Duration::from_secs(600),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    assert_eq!(healthz(&server).await.ok(), Some(200));
    let counts = &server.state.metrics.connections;
    wait_until("the health check's connection closed", || {
        counts.open.load(Ordering::Relaxed) == 0
    })
    .await;

    let mut held = Vec::new();
    for _ in 0..CAP {
        held.push(connect(&server).await);
    }
    wait_until("every held connection accepted", || {
        counts.open.load(Ordering::Relaxed) == CAP as u64
    })
    .await;

    // The kernel completes the handshake; the server closes the connection as soon as it accepts it.
    for _ in 0..3 {
        let mut over = connect(&server).await;
        let closed = over.closed_within(PATIENCE).await;
        assert!(closed.is_some(), "a connection over the cap stayed open");
    }
    assert!(healthz(&server).await.is_err(), "at the cap even /healthz is refused");
    assert_eq!(counts.refused.load(Ordering::Relaxed), 4);
    assert_eq!(counts.open.load(Ordering::Relaxed), CAP as u64);

    // Connections go: service resumes at once.
    held.truncate(CAP - 4);
    wait_until("the dropped connections closed", || {
        counts.open.load(Ordering::Relaxed) == CAP as u64 - 4
    })
    .await;
    assert_eq!(healthz(&server).await.ok(), Some(200));
    let mut c = connect(&server).await;
    let r = c
        .call(&post_json("/best-move", r#"{"board": "0000000000000112", "depth": 1}"#))
        .await
        .unwrap();
    r.assert_documented("POST", "/best-move", 200);
}

#[tokio::test]
async fn request_heads_beyond_the_limits_get_431_and_the_connection_closes() {
    let config = ServerConfig {
        max_header_bytes: 4096,
        max_headers: 16,
        header_timeout: Duration::from_secs(600),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let filler = "f".repeat(100);

    // Within the limits: 14 headers and the host, about 1.5 KiB.
    let names: Vec<String> = (0..14).map(|i| format!("x-filler-{i}")).collect();
    let within: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), filler.as_str())).collect();
    let mut c = connect(&server).await;
    let r = c.call(&request("GET", "/healthz", &within, b"")).await.unwrap();
    r.assert_documented("GET", "/healthz", 200);

    let names: Vec<String> = (0..20).map(|i| format!("x-filler-{i}")).collect();
    let too_many: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
    let huge = "h".repeat(5000);
    let long_path = format!("/healthz?{}", "p".repeat(5000));
    let cases: [(&str, Vec<u8>); 4] = [
        ("20 headers", request("GET", "/healthz", &too_many, b"")),
        (
            "a 5000-byte header",
            request("GET", "/healthz", &[("x-huge", &huge)], b""),
        ),
        ("a 5000-byte request line", request("GET", &long_path, &[], b"")),
        // A head that never ends is refused once it passes the limit, without waiting for the head timeout.
        ("an endless head", {
            let mut head = b"GET /healthz HTTP/1.1\r\n".to_vec();
            head.extend(std::iter::repeat_n(b"x-endless: 1\r\n".to_vec(), 600).flatten());
            head
        }),
    ];
    for (what, bytes) in cases {
        let mut c = connect(&server).await;
        let r = c
            .call(&bytes)
            .await
            .unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
        assert_eq!(r.status, 431, "{what}");
        assert!(
            c.closed_within(PATIENCE).await.is_some(),
            "{what}: the connection stayed open"
        );
    }

    let mut c = connect(&server).await;
    let r = c.call(b"NOT-HTTP\r\n\r\n").await.unwrap();
    assert_eq!(r.status, 400);
    assert!(c.closed_within(PATIENCE).await.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_searches_finish_within_the_grace_period_then_closes_everything() {
    let grace = Duration::from_secs(1);
    let config = ServerConfig {
        shutdown_grace: grace,
        max_budget: Duration::from_secs(30),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let addr = server.addr;
    let mut idle = connect(&server).await;
    assert_eq!(
        idle.call(&request("GET", "/healthz", &[], b"")).await.unwrap().status,
        200
    );
    // A search that ends by itself within the grace period, and one that would run for 30 s.
    let mut short = connect(&server).await;
    short
        .send(&post_json(
            "/best-move",
            r#"{"board": "13222442a7b8c9d1", "depth": 29, "prob_cutoff": 0, "time_budget_ms": 300}"#,
        ))
        .await
        .unwrap();
    let mut long = connect(&server).await;
    long.send(&post_json(
        "/best-move",
        r#"{"board": "13222442a7b8c9d1", "depth": 29, "prob_cutoff": 0, "time_budget_ms": 30000}"#,
    ))
    .await
    .unwrap();
    let state = server.state.clone();
    wait_until("both searches running", || state.permits.running() == 2).await;

    let start = Instant::now();
    let stopped = tokio::spawn(server.stop());
    let short = short.response().await.expect("the short search answers");
    let long = long.response().await.expect("the long search answers");
    stopped.await.unwrap().expect("serve returns cleanly");
    let took = start.elapsed();
    println!("serve returned {took:?} after the shutdown signal (grace {grace:?})");
    assert!(took < grace + Duration::from_secs(10), "{took:?}");
    for (name, r) in [("short", &short), ("long", &long)] {
        r.assert_documented("POST", "/best-move", 200);
        assert_eq!(r.header("connection"), Some("close"), "{name}");
    }
    let elapsed = |r: &common::raw::RawResponse| r.json()["search"]["elapsed_ms"].as_f64().unwrap_or(f64::NAN);
    assert!(elapsed(&short) < 1000.0, "the short search ran its own budget");
    assert!(
        elapsed(&long) < 20000.0,
        "the long search was cancelled when the grace period ended"
    );
    let body: Value = long.json();
    assert_eq!(body["search"]["truncated"], true);
    assert!(
        idle.closed_within(PATIENCE).await.is_some(),
        "idle connections close at shutdown"
    );
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "no new connections after shutdown"
    );
}

/// `advisor2048_searches_total` as `/metrics` shows it: searches whose work has ended.
fn searches_done(server: &TestServer) -> u64 {
    let text = server.state.metrics.render(0, 0);
    text.lines()
        .find_map(|l| l.strip_prefix("advisor2048_searches_total "))
        .and_then(|v| v.trim().parse().ok())
        .expect("advisor2048_searches_total in /metrics")
}

/// A traced `/simulate` of many games (tuned, 1 ply: fast), cut by the server's `max_trace_moves`, as a document
/// or as a stream.
fn traced_simulation(stream: bool) -> Vec<u8> {
    let body = r#"{"games": 1000, "seed": 4, "profile": "tuned", "depth": 1, "trace": true}"#;
    let accept = if stream {
        "application/x-ndjson"
    } else {
        "application/json"
    };
    request(
        "POST",
        "/simulate",
        &[("content-type", "application/json"), ("accept", accept)],
        body.as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_answer_keeps_its_search_slot_until_sent_and_a_reader_that_stalls_loses_it() {
    // One search slot. A traced simulation of 300,000 moves answers about 33 MB: far more than the socket buffers
    // and the connection's own buffer hold, so a client that reads nothing leaves most of it unsent.
    let idle_timeout = Duration::from_secs(3);
    let config = ServerConfig {
        max_searches: 1,
        max_threads: 1,
        idle_timeout,
        max_trace_moves: 300_000,
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let best_move = || {
        let url = server.url("/best-move");
        async move {
            reqwest::Client::new()
                .post(url)
                .json(&serde_json::json!({"board": "0000000000000112", "depth": 1}))
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    };

    for stream in [false, true] {
        let before = searches_done(&server);
        let timeouts_before = server
            .state
            .metrics
            .connections
            .response_timeouts
            .load(Ordering::Relaxed);
        let mut stalled = connect(&server).await;
        stalled.send(&traced_simulation(stream)).await.unwrap();
        let state = server.state.clone();
        wait_until("the simulation holds the slot", || state.permits.running() == 1).await;
        if !stream {
            // The document's work is over (its search is counted), yet its answer is mostly unsent: the slot
            // stays taken, so another search waits.
            wait_until("the simulation's work ended", || searches_done(&server) > before).await;
            let waiting = tokio::time::timeout(idle_timeout / 3, best_move()).await;
            assert!(
                waiting.is_err(),
                "a search ran while a large answer was still unsent: {waiting:?}"
            );
        }
        // The stalled client took nothing for the idle timeout: its connection is closed, the slot freed.
        let next = tokio::time::timeout(PATIENCE, best_move()).await;
        assert_eq!(
            next.expect("the slot was freed").expect("best-move answered"),
            200,
            "stream: {stream}"
        );
        assert!(
            stalled.closed_within(PATIENCE).await.is_some(),
            "stream {stream}: the stalled connection was closed"
        );
        assert_eq!(
            server
                .state
                .metrics
                .connections
                .response_timeouts
                .load(Ordering::Relaxed),
            timeouts_before + 1,
            "stream {stream}: counted once, as a response timeout"
        );
    }

    // A client that reads gets the whole document, with its length, intact.
    let mut reader = connect(&server).await;
    let answer = reader.call(&traced_simulation(false)).await.unwrap();
    answer.assert_documented("POST", "/simulate", 200);
    assert_eq!(
        answer.header("content-length"),
        Some(answer.body.len().to_string().as_str())
    );
    let body = answer.json();
    let traced: usize = body["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["trace"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(body["summary"]["total_moves"], 300_000, "{}", body["summary"]);
    assert_eq!(traced, 300_000, "every move traced");
    assert_eq!(
        server.state.permits.running(),
        0,
        "the slot is free once the answer is sent"
    );
}
