//! What the long-running routes (`/simulate`, `/analyze`) share: the `Accept: application/x-ndjson` test, the line
//! queue between the work on the blocking pool and the streamed body, and a document body that keeps its search slot
//! until it has been sent.
//!
//! A streamed answer waits for its client (at most [`STREAM_LINES`] lines are queued; a client that takes none for
//! `--idle-timeout-s` counts as gone and the work stops), and a document is handed to the connection in
//! [`CHUNK`]-byte pieces.

use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::server::error::ApiError;
use crate::server::limits::{Permit, RunningSearch};
use crate::server::AppState;

/// Lines of a streamed answer queued for a slow client before the work waits for it.
pub const STREAM_LINES: usize = 16;

/// A document answer is handed to the connection in pieces of this many bytes (the connection buffers a few).
pub const CHUNK: usize = 64 * 1024;

/// Whether the client asked for NDJSON.
pub fn wants_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.split(',').any(|t| t.trim().starts_with("application/x-ndjson")))
}

/// A line queue: the sender for the work, the receiver for [`ndjson_response`].
pub fn line_queue(state: &AppState) -> (LineSender, tokio::sync::mpsc::Receiver<Bytes>) {
    let (lines, receiver) = tokio::sync::mpsc::channel::<Bytes>(STREAM_LINES);
    let sender = LineSender {
        lines,
        runtime: tokio::runtime::Handle::current(),
        patience: state.config.idle_timeout,
        gone: AtomicBool::new(false),
    };
    (sender, receiver)
}

/// The stream's end of the line queue, used from the work's threads.
pub struct LineSender {
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
    pub fn send(&self, mut line: Vec<u8>) -> bool {
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

    /// Queues `value` as one JSON line; false as [`LineSender::send`].
    pub fn send_json(&self, value: &impl serde::Serialize) -> bool {
        self.send(serde_json::to_vec(value).unwrap_or_default())
    }
}

/// The NDJSON answer whose lines come from `receiver`. The running work travels with the body: when the client goes
/// away the body is dropped, and so is the work's drop guard, which stops the work.
pub fn ndjson_response<T: Send + 'static>(
    receiver: tokio::sync::mpsc::Receiver<Bytes>,
    running: RunningSearch<Result<T, ApiError>>,
) -> Response {
    let body = futures_util::stream::unfold((receiver, Some(running)), |(mut receiver, running)| async move {
        match receiver.recv().await {
            Some(line) => Some((Ok::<_, std::io::Error>(line), (receiver, running))),
            None => {
                if let Some(running) = running {
                    if let Ok(Err(e)) | Err(e) = running.finish().await.map(|r| r.map(|_| ())) {
                        tracing::warn!(error = %e, "a streamed answer ended with an error");
                    }
                }
                None
            }
        }
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(body.fuse()),
    )
        .into_response()
}

/// A JSON document answer of `document`, handed out in [`CHUNK`]-byte pieces while holding `permit`.
pub fn document_response(document: Bytes, permit: Permit) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::CONTENT_LENGTH, document.len().to_string()),
        ],
        held_body(document, permit),
    )
        .into_response()
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
