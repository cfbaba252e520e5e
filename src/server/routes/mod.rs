//! One small handler per route, plus the JSON body extractor and the 404/405 fallbacks.

pub mod analyze;
pub mod best_move;
pub mod evaluate;
pub mod health;
pub mod playground;
pub mod simulate;
pub mod stream;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, Method, StatusCode, Uri};
use serde_json::Value;

use super::error::ApiError;
use super::AppState;

/// The body limit of a route whose limit is not the server's `body_limit` (a request extension set by the route).
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

/// A JSON request body: 415 unless declared `application/json` (or `application/*+json`), 413 over the body
/// limit (the route's [`BodyLimit`], else the server's), 408 when it has not fully arrived within the body timeout, 400 when it is not JSON. The typed reading (and
/// its 422s) happens in the request model, [`crate::request`].
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        let is_json =
            essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"));
        if !is_json {
            let shown = if content_type.is_empty() {
                "none".to_owned()
            } else {
                content_type.to_owned()
            };
            return Err(ApiError::UnsupportedMediaType(shown));
        }
        // A body announced over the limit is refused before any of it is read (or waited for).
        let announced = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let limit = req
            .extensions()
            .get::<BodyLimit>()
            .map_or(state.config.body_limit, |l| l.0);
        if announced.is_some_and(|n| n > limit as u64) {
            return Err(ApiError::PayloadTooLarge { limit });
        }
        let body_timeout = state.config.body_timeout;
        let Ok(read) = tokio::time::timeout(body_timeout, Bytes::from_request(req, state)).await else {
            state
                .metrics
                .connections
                .body_timeouts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Err(ApiError::BodyTimeout(body_timeout.as_millis() as u64));
        };
        let bytes = read.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge { limit }
            } else {
                ApiError::MalformedJson(e.body_text())
            }
        })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::MalformedJson(e.to_string()))
    }
}

/// 404 for every path without a route.
pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(uri.path().to_owned())
}

/// 405 for a known path with the wrong method.
pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}
