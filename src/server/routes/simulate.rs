//! `POST /simulate`: seeded self-play games, answered as one JSON document or, with `Accept: application/x-ndjson`,
//! streamed as one line per finished game followed by a `{"summary": ...}` line.
//!
//! Limits: at most `--max-sim-games` games and `max_moves` at most `--max-sim-moves` (else 422); while running, the
//! whole request stops at `--max-sim-moves` moves over all its games or after `--max-sim-seconds`, and the games cut
//! short are returned marked `finished: false`.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::JsonBody;
use crate::engine::Tiles;
use crate::search::SearchSettings;
use crate::server::dto::{self, Problems, Weights};
use crate::server::error::ApiError;
use crate::server::limits::start_search;
use crate::server::AppState;
use crate::sim::{simulate, SimConfig, SimReport};

/// A validated `/simulate` request.
struct SimRequest {
    start: Option<Tiles>,
    games: u64,
    seed: u64,
    max_moves: Option<u64>,
    trace: bool,
    settings: SearchSettings,
    weights: Weights,
}

fn read_request(state: &AppState, body: &Value) -> Result<SimRequest, ApiError> {
    let config = &state.config;
    let mut problems = Problems::default();
    let mut known = vec!["board", "games", "seed", "max_moves", "trace"];
    known.extend(dto::SEARCH_FIELDS.iter().filter(|f| **f != "seed"));
    let map = dto::body_object(body, &known, &mut problems)?;
    // An invalid board is recorded in `problems`, so `finish` below refuses the request.
    let start = map
        .get("board")
        .and_then(|v| dto::read_board(v, "/board", &mut problems));
    let games = match dto::read_u64(map, "games", 1, u64::MAX, &mut problems).unwrap_or(1) {
        g if g > config.max_sim_games => {
            problems.push(
                "/games",
                format!(
                    "games {g} is over the server's limit of {} (--max-sim-games)",
                    config.max_sim_games
                ),
            );
            1
        }
        g => g,
    };
    let seed = dto::read_u64(map, "seed", 0, u64::MAX, &mut problems).unwrap_or(0);
    let max_moves = match dto::read_u64(map, "max_moves", 1, u64::MAX, &mut problems) {
        Some(m) if m > config.max_sim_moves => {
            problems.push(
                "/max_moves",
                format!(
                    "max_moves {m} is over the server's limit of {} moves per request (--max-sim-moves)",
                    config.max_sim_moves
                ),
            );
            None
        }
        m => m,
    };
    let trace = dto::read_bool(map, "trace", &mut problems).unwrap_or(false);
    // Here `seed` is the games' seed (each move's search is seeded from it), not a search field: read it once.
    let mut search_fields = map.clone();
    search_fields.remove("seed");
    let search = dto::read_search(&search_fields, &state.search_bounds(), &mut problems);
    if let Some((s, _)) = &search {
        dto::check_network(map, s.evaluator, state.network.is_some(), &mut problems);
    }
    let (mut settings, weights) = problems.finish(search)?;
    // A move's search is bounded by depth unless the request asks for a budget (read and clamped like
    // /best-move's, then to the per-move maximum): then the same seed and settings give the same games. The whole
    // run is bounded by the simulation's own move and wall-clock limits.
    settings.time_budget = settings
        .time_budget
        .filter(|_| map.contains_key("time_budget_ms"))
        .map(|budget| budget.min(config.sim_move_budget));
    Ok(SimRequest {
        start,
        games,
        seed,
        max_moves,
        trace,
        settings,
        weights,
    })
}

fn wants_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.split(',').any(|t| t.trim().starts_with("application/x-ndjson")))
}

pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let request = read_request(&state, &body)?;
    let threads = request.settings.threads;
    let stream = wants_ndjson(&headers);
    let limit = state.config.max_sim_time;
    let move_limit = state.config.max_sim_moves;
    let metrics_state = state.clone();
    let (lines, receiver) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let running = start_search(&state, threads, move |stop| -> Result<SimReport, ApiError> {
        let evaluator = dto::build_evaluator(
            request.settings.evaluator,
            &request.weights,
            metrics_state.network.as_ref(),
        )?;
        let mut settings = request.settings;
        let threads = std::mem::replace(&mut settings.threads, 1);
        let config = SimConfig {
            games: request.games,
            seed: request.seed,
            start: request.start,
            max_moves: request.max_moves,
            total_moves: Some(move_limit),
            time_limit: Some(limit),
            settings,
            evaluator,
            threads,
            trace: request.trace,
        };
        let report = simulate(&config, stop, |game| {
            if stream {
                let mut line = serde_json::to_vec(game).unwrap_or_default();
                line.push(b'\n');
                if lines.send(Bytes::from(line)).is_err() {
                    stop.stop();
                }
            }
        });
        metrics_state.metrics.record_search(report.summary.total_moves);
        if stream {
            let mut line = serde_json::to_vec(&serde_json::json!({ "summary": &report.summary })).unwrap_or_default();
            line.push(b'\n');
            let _ = lines.send(Bytes::from(line));
        }
        Ok(report)
    })
    .await?;
    if !stream {
        return Ok(Json(running.finish().await??).into_response());
    }
    // The running work travels with the body: when the client goes away the body is dropped, and so is the work's
    // drop guard, which stops the games.
    let body = futures_util::stream::unfold((receiver, Some(running)), |(mut receiver, running)| async move {
        match receiver.recv().await {
            Some(line) => Some((Ok::<_, std::io::Error>(line), (receiver, running))),
            None => {
                if let Some(running) = running {
                    if let Ok(Err(e)) | Err(e) = running.finish().await.map(|r| r.map(|_| ())) {
                        tracing::warn!(error = %e, "simulation ended with an error");
                    }
                }
                None
            }
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(body),
    )
        .into_response())
}
