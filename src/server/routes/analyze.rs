//! `POST /analyze`: the review of a played game ([`crate::request::analyze`]): parse, run on the blocking pool, answer, as one JSON document or,
//! with `Accept: application/x-ndjson`, streamed as one line per graded move followed by a `{"summary": ...}` line.
//!
//! Limits: at most `--max-analyze-moves` moves (else 422), each move's search budget at most
//! `--analyze-move-budget-ms`, the whole review at most `--max-analyze-seconds` (the moves graded by then are
//! answered, `complete: false`), a body of at most `--analyze-body-limit` bytes. The review stops when the client
//! goes away, like every search.

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

use super::stream::{document_response, line_queue, ndjson_response, wants_ndjson};
use super::JsonBody;
use crate::request::AnalyzeRequest;
use crate::server::error::ApiError;
use crate::server::limits::start_search;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let request = AnalyzeRequest::from_json(&body, &state.analyze_bounds())?;
    // The body can be megabytes: it is not needed any more while the review runs.
    drop(body);
    let threads = request.search.settings.run.threads;
    let stream = wants_ndjson(&headers);
    let limit = state.config.max_analyze_time;
    let metrics_state = state.clone();
    let (sender, receiver) = line_queue(&state);
    let running = start_search(&state, threads, move |stop| -> Result<Option<Bytes>, ApiError> {
        let network = metrics_state.network.as_ref();
        let odds = &metrics_state.odds;
        let deadline = Some(Instant::now() + limit);
        if stream {
            let summary = request.review(network, odds, stop, deadline, |m| {
                if !sender.send_json(m) {
                    stop.stop();
                }
            })?;
            metrics_state.metrics.record_search(summary.nodes);
            sender.send_json(&serde_json::json!({ "summary": &summary }));
            return Ok(None);
        }
        let answer = request.run(network, odds, stop, deadline, |_| {})?;
        metrics_state.metrics.record_search(answer.summary.nodes);
        serde_json::to_vec(&answer)
            .map(|document| Some(Bytes::from(document)))
            .map_err(|e| ApiError::Internal(format!("the review's answer did not serialize: {e}")))
    })
    .await?;
    if !stream {
        let (document, permit) = running.finish_holding().await?;
        return Ok(document_response(document?.unwrap_or_default(), permit));
    }
    Ok(ndjson_response(receiver, running))
}
