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

use super::JsonBody;
use crate::request::SimulateRequest;
use crate::server::error::ApiError;
use crate::server::limits::start_search;
use crate::server::AppState;
use crate::sim::{simulate, SimConfig, SimReport};

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
    let request = SimulateRequest::from_json(&body, &state.simulate_bounds())?;
    let threads = request.search.settings.threads;
    let stream = wants_ndjson(&headers);
    let limit = state.config.max_sim_time;
    let move_limit = state.config.max_sim_moves;
    let metrics_state = state.clone();
    let (lines, receiver) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let running = start_search(&state, threads, move |stop| -> Result<SimReport, ApiError> {
        let evaluator = request.search.evaluator.build(metrics_state.network.as_ref())?;
        let config = SimConfig {
            total_moves: Some(move_limit),
            time_limit: Some(limit),
            ..request.into_config(evaluator)
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
