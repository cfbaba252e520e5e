//! `POST /simulate`: seeded self-play games ([`crate::request::simulate`]), answered as one JSON document or, with `Accept: application/x-ndjson`,
//! streamed as one line per finished game followed by a `{"summary": ...}` line.
//!
//! Limits: at most `--max-sim-games` games and `max_moves` at most `--max-sim-moves` (else 422); while running, the
//! whole request stops at `--max-sim-moves` moves over all its games (`--max-trace-moves` with `trace`) or after
//! `--max-sim-seconds`, and the games cut short are returned marked `finished: false`.
//!
//! Memory: an answer can be large (about 110 bytes per traced move), so it keeps its search slot until it has been
//! sent: at most `--max-searches` answers are held at once, however slowly their clients read (see [`super::stream`]).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

use super::stream::{document_response, line_queue, ndjson_response, wants_ndjson};
use super::JsonBody;
use crate::request::{RunLimits, SimulateRequest};
use crate::server::error::ApiError;
use crate::server::limits::start_search;
use crate::server::AppState;
use crate::sim::Progress;

pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let request = SimulateRequest::from_json(&body, &state.simulate_bounds())?;
    let stream = wants_ndjson(&headers);
    let limits = RunLimits {
        total_moves: Some(match request.trace {
            true => state.config.max_sim_moves.min(state.config.max_trace_moves),
            false => state.config.max_sim_moves,
        }),
        time_limit: Some(state.config.max_sim_time),
    };
    let metrics_state = state.clone();
    let (sender, receiver) = line_queue(&state);
    // The document is serialized here, on the blocking pool, not on a runtime worker: a traced answer runs to
    // megabytes. A streamed run has sent its lines by the time it ends and returns no document.
    let running = start_search(
        &state,
        request.parallel_games,
        move |stop| -> Result<Option<Bytes>, ApiError> {
            let network = metrics_state.network.as_ref();
            let report = request.run(network, limits, stop, &Progress::new(), |game| {
                if stream && !sender.send_json(game) {
                    stop.stop();
                }
            })?;
            metrics_state.metrics.record_search(report.summary.total_moves);
            if stream {
                sender.send_json(&serde_json::json!({ "summary": &report.summary }));
                return Ok(None);
            }
            serde_json::to_vec(&report)
                .map(|document| Some(Bytes::from(document)))
                .map_err(|e| ApiError::Internal(format!("the simulation's answer did not serialize: {e}")))
        },
    )
    .await?;
    if !stream {
        let (document, permit) = running.finish_holding().await?;
        return Ok(document_response(document?.unwrap_or_default(), permit));
    }
    Ok(ndjson_response(receiver, running))
}
