//! The HTTP service: a thin axum layer over the library.
//!
//! [`router`] builds the application (tests bind it to `127.0.0.1:0`), [`serve`] runs it until a shutdown signal,
//! then stops accepting, lets in-flight searches finish for a grace period, and cancels the rest.
//! Every search runs on tokio's blocking pool ([`limits::run_search`]), never on the async workers, so `/healthz`
//! stays fast while every core searches. [`connection`] accepts and serves connections: a cap on how many are open,
//! bounded request heads, and timeouts that close stalled ones. [`cors`] decides which web pages may call.

pub mod connection;
pub mod cors;
pub mod error;
pub mod limits;
pub mod metrics;
mod routes;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::HeaderName;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::eval::Network;
use crate::request::odds::OddsSource;
use crate::request::{AnalyzeBounds, SearchBounds, SimulateBounds};
use crate::search::Profile;
use cors::CorsOrigins;
use error::ApiError;
use limits::{ActiveSearches, SearchPermits};
use metrics::Metrics;

/// Where the service listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:2048";

/// The defaults of [`ServerConfig`], which are also the `serve` flags' defaults (written once, here).
pub mod defaults {
    /// Requests that may wait for a search permit.
    pub const MAX_QUEUE: usize = 64;
    /// The largest time budget of one search, in ms.
    pub const MAX_BUDGET_MS: u64 = 5000;
    /// `/simulate`: games per request.
    pub const MAX_SIM_GAMES: u64 = 1000;
    /// `/simulate`: moves per request.
    pub const MAX_SIM_MOVES: u64 = 2_000_000;
    /// `/simulate`: wall-clock seconds per request.
    pub const MAX_SIM_SECONDS: u64 = 120;
    /// `/simulate`: moves per request with `trace` (each recorded move is about 110 bytes of JSON, so a traced
    /// answer stays near 11 MB).
    pub const MAX_TRACE_MOVES: u64 = 100_000;
    /// `/simulate`: the largest time budget of each move's search, in ms.
    pub const SIM_MOVE_BUDGET_MS: u64 = 1000;
    /// `/analyze`: moves per request (a game to 32768 is about 20,000 moves, one to 65536 about 40,000).
    pub const MAX_ANALYZE_MOVES: u64 = 50_000;
    /// `/analyze`: wall-clock seconds per request.
    pub const MAX_ANALYZE_SECONDS: u64 = 120;
    /// `/analyze`: the largest time budget of each move's search, in ms.
    pub const ANALYZE_MOVE_BUDGET_MS: u64 = 1000;
    /// `/analyze`: the largest request body, in bytes (a 50,000-move record of hex boards is about 2.5 MB).
    pub const ANALYZE_BODY_LIMIT: usize = 8 * 1024 * 1024;
    /// The largest request body, in bytes.
    pub const BODY_LIMIT: usize = 64 * 1024;
    /// Seconds before a running request gets 504.
    pub const REQUEST_TIMEOUT_S: u64 = 150;
    /// Seconds a client has to send a request head.
    pub const HEADER_TIMEOUT_S: u64 = 10;
    /// Seconds a kept-alive connection may idle.
    pub const IDLE_TIMEOUT_S: u64 = 60;
    /// Seconds a client has to send a body once its head arrived.
    pub const BODY_TIMEOUT_S: u64 = 30;
    /// The largest request head, in bytes.
    pub const MAX_HEADER_BYTES: usize = 16 * 1024;
    /// Header fields per request at most.
    pub const MAX_HEADERS: usize = 64;
    /// Seconds shutdown waits for running searches.
    pub const SHUTDOWN_GRACE_S: u64 = 10;
}

/// The service's limits and settings, validated once at start-up.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Searching threads at once (each request takes one permit per thread it asks for).
    pub max_searches: usize,
    /// Requests that may wait for a permit; beyond, 503 at once.
    pub max_queue: usize,
    /// The largest time budget of one search; a request without a budget gets this one.
    pub max_budget: Duration,
    /// The largest explicit depth, in plies.
    pub max_depth: u32,
    /// The most threads one request may ask for.
    pub max_threads: usize,
    /// `/simulate`: games per request.
    pub max_sim_games: u64,
    /// `/simulate`: moves per request, summed over its games.
    pub max_sim_moves: u64,
    /// `/simulate`: wall-clock limit; the games finished by then are returned.
    pub max_sim_time: Duration,
    /// `/simulate` with `trace`: moves per request, summed over its games (the smaller of this and `max_sim_moves`
    /// applies), so that one answer's size stays bounded.
    pub max_trace_moves: u64,
    /// `/simulate`: the time budget of each move's search (a request's `time_budget_ms` is clamped to it).
    pub sim_move_budget: Duration,
    /// `/analyze`: moves per request.
    pub max_analyze_moves: u64,
    /// `/analyze`: wall-clock limit; the moves graded by then are returned (`complete: false`).
    pub max_analyze_time: Duration,
    /// `/analyze`: the time budget of each move's search (a request's `time_budget_ms` is clamped to it).
    pub analyze_move_budget: Duration,
    /// `/analyze`: largest accepted body (a whole game's record).
    pub analyze_body_limit: usize,
    /// Largest accepted body (every route but `/analyze`).
    pub body_limit: usize,
    /// Any request still running after this gets 504.
    pub request_timeout: Duration,
    /// A request head (request line and headers) must arrive within this, counted from the connection's opening or,
    /// on a kept-alive connection, from the first byte of the request; else the connection is closed.
    pub header_timeout: Duration,
    /// A kept-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// A request body must arrive within this once its head has (else 408 and the connection is closed).
    pub body_timeout: Duration,
    /// Open connections at most; a new connection beyond them is closed at once.
    pub max_connections: usize,
    /// Largest request head (request line and headers) in bytes; larger is 431 and the connection is closed.
    pub max_header_bytes: usize,
    /// Most header fields in a request; more is 431 and the connection is closed.
    pub max_headers: usize,
    /// The origins whose pages may call the service from a browser.
    pub cors_origins: CorsOrigins,
    /// How long shutdown waits for running searches before cancelling them.
    pub shutdown_grace: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        ServerConfig {
            max_searches: cpus,
            max_queue: defaults::MAX_QUEUE,
            max_budget: Duration::from_millis(defaults::MAX_BUDGET_MS),
            max_depth: crate::search::MAX_DEPTH,
            max_threads: cpus,
            max_sim_games: defaults::MAX_SIM_GAMES,
            max_sim_moves: defaults::MAX_SIM_MOVES,
            max_sim_time: Duration::from_secs(defaults::MAX_SIM_SECONDS),
            max_trace_moves: defaults::MAX_TRACE_MOVES,
            sim_move_budget: Duration::from_millis(defaults::SIM_MOVE_BUDGET_MS),
            max_analyze_moves: defaults::MAX_ANALYZE_MOVES,
            max_analyze_time: Duration::from_secs(defaults::MAX_ANALYZE_SECONDS),
            analyze_move_budget: Duration::from_millis(defaults::ANALYZE_MOVE_BUDGET_MS),
            analyze_body_limit: defaults::ANALYZE_BODY_LIMIT,
            body_limit: defaults::BODY_LIMIT,
            request_timeout: Duration::from_secs(defaults::REQUEST_TIMEOUT_S),
            header_timeout: Duration::from_secs(defaults::HEADER_TIMEOUT_S),
            idle_timeout: Duration::from_secs(defaults::IDLE_TIMEOUT_S),
            body_timeout: Duration::from_secs(defaults::BODY_TIMEOUT_S),
            max_connections: connection::default_max_connections(),
            max_header_bytes: defaults::MAX_HEADER_BYTES,
            max_headers: defaults::MAX_HEADERS,
            cors_origins: CorsOrigins::default(),
            shutdown_grace: Duration::from_secs(defaults::SHUTDOWN_GRACE_S),
        }
    }
}

/// Shared state of the handlers. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub config: ServerConfig,
    pub permits: SearchPermits,
    pub active: ActiveSearches,
    pub metrics: Metrics,
    /// The n-tuple network of profile `learned` / evaluator `ntuple`, shared read-only by every request.
    pub network: Option<Arc<Network>>,
    /// The reach-odds model of `"odds": true`, or why the service has none (a 422 says so).
    pub odds: OddsSource,
    shutting_down: AtomicBool,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(config: ServerConfig) -> AppState {
        AppState::with_network(config, None)
    }

    /// The state of a service that answers `learned` / `ntuple` requests with `network`, and requests for reach
    /// odds with the built-in model when it was fitted for that network (else they hear why not).
    pub fn with_network(config: ServerConfig, network: Option<Arc<Network>>) -> AppState {
        let odds = crate::request::odds::resolve(network.as_ref(), None).unwrap_or_else(Err);
        AppState::with_odds(config, network, odds)
    }

    /// [`AppState::with_network`] with the reach odds of `odds` (`--odds-model FILE`, checked at start-up).
    pub fn with_odds(config: ServerConfig, network: Option<Arc<Network>>, odds: OddsSource) -> AppState {
        AppState(Arc::new(Inner {
            network,
            odds,
            permits: SearchPermits::new(config.max_searches, config.max_queue),
            active: ActiveSearches::default(),
            metrics: Metrics::default(),
            shutting_down: AtomicBool::new(false),
            config,
        }))
    }

    pub fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }

    /// The profile of requests that name none: `learned` with a network, else `tuned`.
    pub fn default_profile(&self) -> Profile {
        Profile::default_for(self.network.is_some())
    }

    /// What a `/best-move` request may ask for here.
    pub fn search_bounds(&self) -> SearchBounds {
        SearchBounds {
            max_budget: self.config.max_budget,
            budget_by_default: true,
            max_depth: self.config.max_depth,
            max_threads: self.config.max_threads,
            network: self.network.is_some(),
            tt_bits: Some(crate::search::DEFAULT_TT_BITS),
        }
    }

    /// What a `/simulate` request may ask for here.
    pub fn simulate_bounds(&self) -> SimulateBounds {
        SimulateBounds {
            search: self.search_bounds(),
            max_games: self.config.max_sim_games,
            max_moves: self.config.max_sim_moves,
            move_budget: self.config.sim_move_budget,
        }
    }

    /// What an `/analyze` request may ask for here.
    pub fn analyze_bounds(&self) -> AnalyzeBounds {
        AnalyzeBounds {
            search: self.search_bounds(),
            max_moves: self.config.max_analyze_moves,
            move_budget: self.config.analyze_move_budget,
        }
    }
}

/// The application: routes, fallbacks and middleware.
pub fn router(state: AppState) -> Router {
    let request_id = HeaderName::from_static("x-request-id");
    let cors = state.config.cors_origins.layer();
    let compression = CompressionLayer::new()
        .compress_when(DefaultPredicate::new().and(NotForContentType::const_new("application/x-ndjson")));
    // A game's record is larger than a board: /analyze has a body limit of its own.
    let analyze_limit = state.config.analyze_body_limit;
    Router::new()
        .route("/", get(routes::playground::page))
        .route("/best-move", post(routes::best_move::handle))
        .route("/evaluate", post(routes::evaluate::handle))
        .route("/simulate", post(routes::simulate::handle))
        .route(
            "/analyze",
            post(routes::analyze::handle)
                .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(analyze_limit))
                .layer::<_, std::convert::Infallible>(Extension(routes::BodyLimit(analyze_limit))),
        )
        .route("/healthz", get(routes::health::healthz))
        .route("/metrics", get(routes::health::metrics))
        .route("/openapi.yaml", get(routes::health::openapi))
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config.body_limit))
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(TraceLayer::new_for_http().make_span_with(make_span))
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(CatchPanicLayer::custom(|_| {
                    ApiError::Internal("a handler panicked".into()).into_response()
                }))
                .layer(middleware::from_fn_with_state(state.clone(), track))
                .layer(cors)
                .layer(compression),
        )
        .with_state(state)
}

fn make_span(req: &Request) -> tracing::Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str());
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!("request", method = %req.method(), route, request_id = id)
}

/// Records metrics and enforces the request timeout.
async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let method = metrics::method_label(req.method());
    let timeout = state.config.request_timeout;
    let response = match tokio::time::timeout(timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::Timeout(timeout.as_millis() as u64).into_response(),
    };
    state
        .metrics
        .record(&route, method, response.status().as_u16(), start.elapsed());
    response
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; then stops accepting, waits up to the grace
/// period for running searches, cancels what is left, and returns once every connection has answered and closed (at
/// most a couple of seconds after the grace period: what is still open then is closed).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(state.clone());
    let grace = state.config.shutdown_grace;
    let watcher = state.clone();
    let on_shutdown = move || {
        watcher.shutting_down.store(true, Ordering::Relaxed);
        tracing::info!(grace_ms = grace.as_millis() as u64, "shutting down: no new connections");
        // Cancel what is still searching when the grace period ends.
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let n = watcher.active.stop_all();
            if n > 0 {
                tracing::warn!(cancelled = n, "grace period over: cancelled running searches");
            }
        });
    };
    connection::serve(listener, app, state, shutdown, on_shutdown).await
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("received SIGINT"),
        _ = terminate => tracing::info!("received SIGTERM"),
    }
}
