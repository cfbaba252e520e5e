//! Soak: hundreds of thousands of requests of every kind (valid, invalid, cancelled mid-search, timed out) against
//! the real release binary, started as a child process so that its resident memory can be read from `/proc`; the
//! growth from the end of a warm-up to the end of the run, per request, must stay far below the 44 bytes per request
//! the leaks cost before. A finished, failed, cancelled or timed-out request must leave nothing behind.
//!
//! ```sh
//! cargo test --release --test soak -- --nocapture                                  # 200,000 requests (CI)
//! ADVISOR_SOAK_REQUESTS=1000000 cargo test --release --test soak -- --nocapture    # the full run, by hand
//! ADVISOR_SOAK_BIN=/path/to/advisor2048 cargo test --release --test soak -- --nocapture   # another build
//! ```
//! `ADVISOR_SOAK_WARMUP` (default 50,000) sets the warm-up, `ADVISOR_SOAK_MAX_BYTES_PER_REQUEST` (default 8) the
//! bound. Only flags every version of `serve` has are used, so an older binary can be measured the same way.
//!
//! What to expect: the allocator's free lists settle for a while after the warm-up, so 200,000 requests show 2-3
//! bytes per request here and 1,000,000 about 1 (the growth does not scale with the requests); the code before
//! the leaks were fixed showed 29 and 25.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::binary::BinaryServer;
use common::raw::{post_json, request, RawConn};

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .replace(['_', ','], "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// The release binary (or `ADVISOR_SOAK_BIN`) with room for the searches that are cancelled or time out next to the
/// quick ones.
fn start_server() -> BinaryServer {
    let bin = std::env::var("ADVISOR_SOAK_BIN").unwrap_or_else(|_| common::binary::BIN.to_owned());
    BinaryServer::start_with(
        &bin,
        &["--max-searches", "4", "--max-queue", "1024", "--request-timeout-s", "1"],
        &[
            ("RUST_LOG", "warn,advisor2048=info"),
            // glibc raises its mmap threshold the first time a large block (a thread's transposition table) is
            // freed, and from then on keeps such blocks in its arenas after their threads end. A fixed threshold
            // (its default value) keeps large blocks mapped on their own and returned when freed, so that what
            // remains in resident memory after the threads end is what requests left behind.
            ("MALLOC_MMAP_THRESHOLD_", "131072"),
        ],
    )
}

/// Waits until the server runs no more threads than when it was idle: the blocking pool's threads, each holding its
/// own transposition table (2 MiB), end 10 s after their last task. Resident memory is compared only then, so that it
/// does not depend on how many of them a burst happened to start.
async fn settle(server: &BinaryServer, idle_threads: u64) {
    let start = Instant::now();
    while server.status("Threads") > idle_threads {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the server still runs {} threads (idle: {idle_threads})",
            server.status("Threads")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Resident memory now, in bytes.
fn rss(server: &BinaryServer) -> u64 {
    server.status("VmRSS") * 1024
}

/// What one request is, chosen by its number so that every run has the same mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    BestMove,
    Evaluate,
    Simulate,
    Health,
    Metrics,
    Spec,
    Playground,
    Invalid,
    Malformed,
    WrongType,
    NotFound,
    OddMethod,
    Preflight,
    TooLarge,
    Cancelled,
    TimedOut,
}

impl Kind {
    const ALL: [Kind; 16] = [
        Kind::BestMove,
        Kind::Evaluate,
        Kind::Simulate,
        Kind::Health,
        Kind::Metrics,
        Kind::Spec,
        Kind::Playground,
        Kind::Invalid,
        Kind::Malformed,
        Kind::WrongType,
        Kind::NotFound,
        Kind::OddMethod,
        Kind::Preflight,
        Kind::TooLarge,
        Kind::Cancelled,
        Kind::TimedOut,
    ];

    /// The kinds named in `ADVISOR_SOAK_ONLY` (e.g. `BestMove,Health`), taken in turn instead of the usual mix: to
    /// find which kind of request a growth comes from.
    fn only() -> Option<Vec<Kind>> {
        let names = std::env::var("ADVISOR_SOAK_ONLY").ok()?;
        let kinds = names
            .split(',')
            .map(|name| {
                Kind::ALL
                    .into_iter()
                    .find(|k| format!("{k:?}").eq_ignore_ascii_case(name.trim()))
                    .unwrap_or_else(|| panic!("ADVISOR_SOAK_ONLY: no kind {name:?} in {:?}", Kind::ALL))
            })
            .collect();
        Some(kinds)
    }

    fn pick(i: u64, only: &Option<Vec<Kind>>) -> Kind {
        match only {
            Some(kinds) => kinds[(i % kinds.len() as u64) as usize],
            None => Kind::of(i),
        }
    }

    fn of(i: u64) -> Kind {
        if i % 10_000 == 9_999 {
            return Kind::TimedOut;
        }
        match i % 1000 {
            1..=4 => return Kind::Cancelled,
            5 => return Kind::TooLarge,
            _ => {}
        }
        match i % 100 {
            0..=39 | 97..=99 => Kind::BestMove,
            40..=54 => Kind::Evaluate,
            55..=59 => Kind::Simulate,
            60..=69 => Kind::Health,
            70..=71 => Kind::Metrics,
            72 => Kind::Spec,
            73 => Kind::Playground,
            74..=81 => Kind::Invalid,
            82..=85 => Kind::Malformed,
            86..=87 => Kind::WrongType,
            88..=90 => Kind::NotFound,
            91..=93 => Kind::OddMethod,
            _ => Kind::Preflight,
        }
    }

    /// The answer expected (`None`: the client goes away before it).
    fn status(self) -> Option<u16> {
        Some(match self {
            Kind::BestMove | Kind::Evaluate | Kind::Simulate | Kind::Health => 200,
            Kind::Metrics | Kind::Spec | Kind::Playground | Kind::Preflight => 200,
            Kind::Invalid => 422,
            Kind::Malformed => 400,
            Kind::WrongType => 415,
            Kind::NotFound => 404,
            Kind::OddMethod => 405,
            Kind::TooLarge => 413,
            Kind::TimedOut => 504,
            Kind::Cancelled => return None,
        })
    }

    fn request(self, i: u64) -> Vec<u8> {
        // As JSON: hex strings and rows.
        const BOARDS: [&str; 4] = [
            "\"0000000000000112\"",
            "[[0,0,2,2],[0,4,8,16],[2,4,8,32],[128,64,32,1024]]",
            "\"2100320043105421\"",
            "[[2,0,0,0],[4,2,0,0],[16,8,4,0],[256,128,32,8]]",
        ];
        let board = BOARDS[(i % 4) as usize];
        match self {
            Kind::BestMove => {
                let id = format!("soak-{i}");
                request(
                    "POST",
                    "/best-move",
                    &[("content-type", "application/json"), ("x-request-id", &id)],
                    format!(r#"{{"board": {board}, "depth": 1}}"#).as_bytes(),
                )
            }
            Kind::Evaluate => post_json("/evaluate", &format!(r#"{{"board": {board}, "evaluator": "tuned"}}"#)),
            Kind::Simulate => post_json(
                "/simulate",
                &format!(r#"{{"games": 1, "seed": {i}, "depth": 1, "max_moves": 5}}"#),
            ),
            Kind::Health => request("GET", "/healthz", &[], b""),
            Kind::Metrics => request("GET", "/metrics", &[], b""),
            Kind::Spec => request("GET", "/openapi.yaml", &[], b""),
            Kind::Playground => request("GET", "/", &[], b""),
            Kind::Invalid => post_json("/best-move", r#"{"board": [[3, 0, 0, 0]], "dept": 2}"#),
            Kind::Malformed => post_json("/evaluate", r#"{"board": ["#),
            Kind::WrongType => request("POST", "/best-move", &[("content-type", "text/plain")], b"{}"),
            Kind::NotFound => request("GET", &format!("/no-such-route/{i}"), &[], b""),
            // Any token is a method: a different one every time.
            Kind::OddMethod => request(&format!("SOAK{i}"), "/healthz", &[], b""),
            Kind::Preflight => request(
                "OPTIONS",
                "/best-move",
                &[
                    (
                        "origin",
                        if i % 2 == 0 {
                            "https://play2048.co"
                        } else {
                            "https://elsewhere.example"
                        },
                    ),
                    ("access-control-request-method", "POST"),
                    ("access-control-request-headers", "content-type"),
                ],
                b"",
            ),
            // The head announces 70 KB (over the 64 KiB limit); the answer comes before the body is read.
            Kind::TooLarge => {
                let mut bytes = b"POST /best-move HTTP/1.1\r\nhost: advisor\r\ncontent-type: application/json\r\n\
                                  content-length: 70000\r\n\r\n"
                    .to_vec();
                bytes.extend_from_slice(&[b' '; 1024]);
                bytes
            }
            // Without the probability cut-off, 29 plies take far longer than the budget (the default cut-off would
            // let this search finish in about a second).
            Kind::Cancelled | Kind::TimedOut => post_json(
                "/best-move",
                r#"{"board": "13222442a7b8c9d1", "depth": 29, "prob_cutoff": 0, "time_budget_ms": 4000}"#,
            ),
        }
    }
}

/// Answers by kind and status (with the first body of every unexpected one); transport errors by kind.
#[derive(Default)]
struct Tally {
    answers: Mutex<BTreeMap<(Kind, u16), u64>>,
    unexpected: Mutex<BTreeMap<(Kind, u16), String>>,
    errors: Mutex<BTreeMap<Kind, u64>>,
}

impl Tally {
    fn answer(&self, kind: Kind, status: u16) {
        *self.answers.lock().unwrap().entry((kind, status)).or_default() += 1;
    }

    fn response(&self, kind: Kind, response: &common::raw::RawResponse) {
        self.answer(kind, response.status);
        if kind.status() != Some(response.status) {
            let body = String::from_utf8_lossy(&response.body);
            let shown: String = body
                .chars()
                .rev()
                .take(400)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            self.unexpected
                .lock()
                .unwrap()
                .entry((kind, response.status))
                .or_insert(shown);
        }
    }

    fn error(&self, kind: Kind) {
        *self.errors.lock().unwrap().entry(kind).or_default() += 1;
    }
}

/// One client: requests `next..end` in turn on a kept-alive connection, reconnecting every 500 requests and after
/// answers that close the connection; cancelled and timed-out searches use a connection of their own.
async fn client(addr: SocketAddr, next: Arc<AtomicU64>, end: u64, tally: Arc<Tally>) {
    let mut conn = RawConn::connect(addr).await.expect("connect");
    let mut served = 0;
    let only = Kind::only();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= end {
            return;
        }
        let kind = Kind::pick(i, &only);
        let bytes = kind.request(i);
        match kind {
            Kind::Cancelled => {
                let mut own = RawConn::connect(addr).await.expect("connect");
                own.send(&bytes).await.expect("send");
                // Long enough for the search to start; then the client goes away, which must stop it.
                tokio::time::sleep(Duration::from_millis(3)).await;
                drop(own);
                tally.answer(kind, 0);
            }
            Kind::TimedOut => {
                let mut own = RawConn::connect(addr).await.expect("connect");
                match own.call(&bytes).await {
                    Ok(r) => tally.response(kind, &r),
                    Err(_) => tally.error(kind),
                }
            }
            _ => {
                if served >= 500 {
                    conn = RawConn::connect(addr).await.expect("connect");
                    served = 0;
                }
                served += 1;
                match conn.call(&bytes).await {
                    Ok(r) => tally.response(kind, &r),
                    Err(_) => tally.error(kind),
                }
                if kind == Kind::TooLarge {
                    conn = RawConn::connect(addr).await.expect("connect");
                    served = 0;
                }
            }
        }
    }
}

/// Sends requests `start..end` from `clients` concurrent clients; returns requests per second.
async fn run(addr: SocketAddr, start: u64, end: u64, clients: usize, tally: &Arc<Tally>) -> f64 {
    let began = Instant::now();
    let next = Arc::new(AtomicU64::new(start));
    let tasks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(client(addr, next.clone(), end, tally.clone())))
        .collect();
    for t in tasks {
        t.await.expect("a client task");
    }
    (end - start) as f64 / began.elapsed().as_secs_f64()
}

/// Waits until no search runs or waits (the cancelled and timed-out ones have ended).
async fn quiet(addr: SocketAddr) {
    let mut conn = RawConn::connect(addr).await.expect("connect");
    for _ in 0..2000 {
        let r = conn.call(&request("GET", "/healthz", &[], b"")).await.expect("healthz");
        let health = r.json();
        if health["searches_running"] == 0 && health["searches_queued"] == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("searches still running long after the load ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_flat_over_hundreds_of_thousands_of_requests() {
    let requests = env_number("ADVISOR_SOAK_REQUESTS", 200_000);
    let warmup = env_number("ADVISOR_SOAK_WARMUP", 50_000);
    let bound = env_number("ADVISOR_SOAK_MAX_BYTES_PER_REQUEST", 8) as f64;
    assert!(requests >= 1000, "ADVISOR_SOAK_REQUESTS: at least 1000");
    if !std::path::Path::new("/proc/self/status").exists() {
        println!("soak skipped: resident memory is read from /proc, which this system does not have");
        return;
    }
    const CLIENTS: usize = 16;

    let server = start_server();
    let addr = server.addr;
    let idle_threads = server.status("Threads");
    let tally = Arc::new(Tally::default());
    let warm_rate = run(addr, 0, warmup, CLIENTS, &tally).await;
    quiet(addr).await;
    settle(&server, idle_threads).await;
    let before = rss(&server);
    let rate = run(addr, warmup, warmup + requests, CLIENTS, &tally).await;
    quiet(addr).await;
    settle(&server, idle_threads).await;
    let after = rss(&server);

    let per_request = (after as f64 - before as f64) / requests as f64;
    println!(
        "soak: {requests} requests after a {warmup}-request warm-up, {CLIENTS} clients, {rate:.0} requests/s \
         (warm-up {warm_rate:.0}/s); RSS {:.1} MB after the warm-up, {:.1} MB after the run: {per_request:.2} bytes \
         per request (bound {bound})",
        before as f64 / 1e6,
        after as f64 / 1e6
    );
    let answers = tally.answers.lock().unwrap().clone();
    let errors = tally.errors.lock().unwrap().clone();
    println!("answers by kind and status: {answers:?}");
    let unexpected = tally.unexpected.lock().unwrap().clone();
    for ((kind, status), n) in &answers {
        let expected = kind.status().unwrap_or(0);
        assert_eq!(
            *status,
            expected,
            "{n} {kind:?} requests answered {status}, expected {expected}; the first one's body ended {:?}",
            unexpected.get(&(*kind, *status))
        );
    }
    // A 413 can race the server closing its side; nothing else may fail.
    let failed: u64 = errors
        .iter()
        .filter(|(k, _)| **k != Kind::TooLarge)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(failed, 0, "transport errors: {errors:?}");
    let total: u64 = answers.values().sum::<u64>() + errors.values().sum::<u64>();
    assert_eq!(total, warmup + requests);
    assert!(
        per_request < bound,
        "resident memory grew {per_request:.2} bytes per request (bound {bound}): from {before} to {after} bytes"
    );
}
