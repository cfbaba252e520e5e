//! `POST /simulate`: seeded self-play games, answered as one JSON document or, with `Accept: application/x-ndjson`,
//! streamed as one line per finished game followed by a `{"summary": ...}` line.
//!
//! Limits: at most `--max-sim-games` games and `max_moves` at most `--max-sim-moves` (else 422); while running, the
//! whole request stops at `--max-sim-moves` moves over all its games (`--max-trace-moves` with `trace`) or after
//! `--max-sim-seconds`, and the games cut short are returned marked `finished: false`.
//!
//! Memory: an answer can be large (about 110 bytes per traced move), so it keeps its search slot until it has been
//! sent: at most `--max-searches` answers are held at once, however slowly their clients read. A streamed answer
//! waits for its client (at most [`STREAM_LINES`] lines are queued; a client that takes none for `--idle-timeout-s`
//! stops the run), and a document is handed to the connection in [`CHUNK`]-byte pieces.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::sync::atomic::{AtomicBool, Ordering};

use super::JsonBody;
use crate::request::SimulateRequest;
use crate::server::error::ApiError;
use crate::server::limits::{start_search, Permit};
use crate::server::AppState;
use crate::sim::{simulate, SimConfig};

/// Lines of a streamed answer queued for a slow client before the games wait for it.
pub const STREAM_LINES: usize = 16;

/// A document answer is handed to the connection in pieces of this many bytes (the connection buffers a few).
pub const CHUNK: usize = 64 * 1024;

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
    let move_limit = match request.trace {
        true => state.config.max_sim_moves.min(state.config.max_trace_moves),
        false => state.config.max_sim_moves,
    };
    let metrics_state = state.clone();
    let (lines, receiver) = tokio::sync::mpsc::channel::<Bytes>(STREAM_LINES);
    let sender = LineSender {
        lines,
        runtime: tokio::runtime::Handle::current(),
        patience: state.config.idle_timeout,
        gone: AtomicBool::new(false),
    };
    // The document is serialized here, on the blocking pool, not on a runtime worker: a traced answer runs to
    // megabytes. A streamed run has sent its lines by the time it ends and returns no document.
    let running = start_search(&state, threads, move |stop| -> Result<Option<Bytes>, ApiError> {
        let evaluator = request.search.evaluator.build(metrics_state.network.as_ref())?;
        let config = SimConfig {
            total_moves: Some(move_limit),
            time_limit: Some(limit),
            ..request.into_config(evaluator)
        };
        let report = simulate(&config, stop, |game| {
            if stream && !sender.send(serde_json::to_vec(game).unwrap_or_default()) {
                stop.stop();
            }
        });
        metrics_state.metrics.record_search(report.summary.total_moves);
        if stream {
            sender.send(serde_json::to_vec(&serde_json::json!({ "summary": &report.summary })).unwrap_or_default());
            return Ok(None);
        }
        serde_json::to_vec(&report)
            .map(|document| Some(Bytes::from(document)))
            .map_err(|e| ApiError::Internal(format!("the simulation's answer did not serialize: {e}")))
    })
    .await?;
    if !stream {
        let (document, permit) = running.finish_holding().await?;
        let document = document?.unwrap_or_default();
        return Ok((
            [
                (header::CONTENT_TYPE, "application/json".to_owned()),
                (header::CONTENT_LENGTH, document.len().to_string()),
            ],
            held_body(document, permit),
        )
            .into_response());
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
        Body::from_stream(body.fuse()),
    )
        .into_response())
}

/// The stream's end of the line queue, used from the simulation's threads.
struct LineSender {
    lines: tokio::sync::mpsc::Sender<Bytes>,
    runtime: tokio::runtime::Handle,
    /// How long a line may wait for room in the queue before the client counts as gone.
    patience: std::time::Duration,
    /// Set by the first line that could not be sent: later ones are dropped at once.
    gone: AtomicBool,
}

impl LineSender {
    /// Queues one line (a newline is added), waiting while the queue is full; false when the client is gone or took
    /// nothing for `patience`. Called on the blocking pool, never on the runtime's own threads.
    fn send(&self, mut line: Vec<u8>) -> bool {
        if self.gone.load(Ordering::Relaxed) {
            return false;
        }
        line.push(b'\n');
        let sent = tokio::time::timeout(self.patience, self.lines.send(Bytes::from(line)));
        let sent = matches!(self.runtime.block_on(sent), Ok(Ok(())));
        if !sent {
            self.gone.store(true, Ordering::Relaxed);
        }
        sent
    }
}

/// `document` as a response body handed out in [`CHUNK`]-byte pieces, holding `permit` until the last piece has
/// been taken or the body is dropped (the client went away). Fused, like the streamed answer: the compression layer
/// polls a body again after its end.
fn held_body(document: Bytes, permit: Permit) -> Body {
    // The permit lives in the stream's state: it is dropped with the state when the last piece has been taken.
    let pieces = futures_util::stream::unfold((document, permit), |(mut rest, permit)| async move {
        if rest.is_empty() {
            return None;
        }
        let piece = rest.split_to(rest.len().min(CHUNK));
        Some((Ok::<_, std::io::Error>(piece), (rest, permit)))
    });
    Body::from_stream(pieces.fuse())
}
