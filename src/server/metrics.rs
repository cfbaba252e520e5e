//! Prometheus text-format metrics: requests by route, method and status, a latency histogram, searches running and
//! queued, and nodes searched. Kept in plain atomics and one mutex-guarded map: no exporter crate needed.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];

/// The `method` label of a request: the standard methods by name, any other method (a client may send any token)
/// as `other`, so that the label set, and the map of counters, stays bounded whatever clients send.
pub fn method_label(method: &axum::http::Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "CONNECT" => "CONNECT",
        "TRACE" => "TRACE",
        _ => "other",
    }
}

#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// Cumulative counts per bucket, then +Inf.
    latency: [AtomicU64; BUCKETS.len() + 1],
    latency_sum_us: AtomicU64,
    nodes: AtomicU64,
    searches: AtomicU64,
    /// Connections: open, accepted, refused over the cap, closed by a timeout.
    pub connections: ConnectionCounts,
}

/// Connection counters, kept by the accept loop and the connections themselves.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    pub open: AtomicU64,
    pub accepted: AtomicU64,
    /// Closed at once because `--max-connections` were open.
    pub refused: AtomicU64,
    /// Closed because a request head did not arrive within `--header-timeout-s`.
    pub header_timeouts: AtomicU64,
    /// Closed because a kept-alive connection sat idle for `--idle-timeout-s`.
    pub idle_timeouts: AtomicU64,
    /// Answered 408 and closed because a body did not arrive within `--body-timeout-s`.
    pub body_timeouts: AtomicU64,
    /// Closed because the client took nothing of its response for `--idle-timeout-s`.
    pub response_timeouts: AtomicU64,
}

impl Metrics {
    /// Records one finished request.
    pub fn record(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        if let Ok(mut map) = self.requests.lock() {
            *map.entry((route.to_owned(), method.to_owned(), status)).or_default() += 1;
        }
        let secs = elapsed.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                self.latency[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency[BUCKETS.len()].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    /// Records a finished search and its nodes.
    pub fn record_search(&self, nodes: u64) {
        self.nodes.fetch_add(nodes, Ordering::Relaxed);
        self.searches.fetch_add(1, Ordering::Relaxed);
    }

    /// The metrics in Prometheus text format (version 0.0.4).
    pub fn render(&self, running: usize, queued: usize) -> String {
        let mut out = String::new();
        out.push_str("# HELP advisor2048_requests_total HTTP requests by route, method and status.\n");
        out.push_str("# TYPE advisor2048_requests_total counter\n");
        if let Ok(map) = self.requests.lock() {
            for ((route, method, status), n) in map.iter() {
                let _ = writeln!(
                    out,
                    "advisor2048_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP advisor2048_request_duration_seconds Request latency.\n");
        out.push_str("# TYPE advisor2048_request_duration_seconds histogram\n");
        for (i, bound) in BUCKETS.iter().enumerate() {
            let n = self.latency[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "advisor2048_request_duration_seconds_bucket{{le=\"{bound}\"}} {n}");
        }
        let count = self.latency[BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "advisor2048_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.latency_sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "advisor2048_request_duration_seconds_sum {sum}");
        let _ = writeln!(out, "advisor2048_request_duration_seconds_count {count}");
        let gauges = [
            (
                "advisor2048_searches_running",
                "Searches running now (a /simulate answer counts until it has been sent).",
                "gauge",
                running as u64,
            ),
            (
                "advisor2048_searches_queued",
                "Searches waiting for a permit.",
                "gauge",
                queued as u64,
            ),
            (
                "advisor2048_searches_total",
                "Searches finished.",
                "counter",
                self.searches.load(Ordering::Relaxed),
            ),
            (
                "advisor2048_nodes_searched_total",
                "Moves tried by searches.",
                "counter",
                self.nodes.load(Ordering::Relaxed),
            ),
        ];
        let c = &self.connections;
        let connections = [
            (
                "advisor2048_connections_open",
                "Connections open now.",
                "gauge",
                c.open.load(Ordering::Relaxed),
            ),
            (
                "advisor2048_connections_accepted_total",
                "Connections accepted and served.",
                "counter",
                c.accepted.load(Ordering::Relaxed),
            ),
            (
                "advisor2048_connections_refused_total",
                "Connections closed at once because --max-connections were open.",
                "counter",
                c.refused.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, kind, value) in gauges.into_iter().chain(connections) {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        let name = "advisor2048_connections_timed_out_total";
        let _ = writeln!(
            out,
            "# HELP {name} Connections closed because a request head (header), the next request (idle) or a request \
             body (body, answered 408) did not arrive in time, or the client stopped reading its response \
             (response).\n# TYPE {name} counter"
        );
        for (timeout, counter) in [
            ("header", &c.header_timeouts),
            ("idle", &c.idle_timeouts),
            ("body", &c.body_timeouts),
            ("response", &c.response_timeouts),
        ] {
            let _ = writeln!(
                out,
                "{name}{{timeout=\"{timeout}\"}} {}",
                counter.load(Ordering::Relaxed)
            );
        }
        out
    }
}
