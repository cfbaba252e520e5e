//! [`ApiError`]: every way a request can fail, turned into one RFC 9457 problem-details response
//! (`application/problem+json` with `type`, `title`, `status`, `detail` and `errors: [{pointer, message}]`).
//!
//! 4xx messages are specific and shown to the client; the cause of a 5xx is logged once and hidden.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::request::{Problem, Problems};

/// Every error the service answers with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the body is not JSON at all.
    #[error("the body is not valid JSON: {0}")]
    MalformedJson(String),
    /// 415: the body is not declared as `application/json`.
    #[error("expected content-type application/json, found {0}")]
    UnsupportedMediaType(String),
    /// 413: the body is over the configured limit.
    #[error("the body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 422: well-formed JSON whose board or settings are invalid; every problem listed.
    #[error("{}", summary(.0))]
    Invalid(Vec<Problem>),
    /// 408: the body did not arrive within the body timeout; the connection is closed after the answer.
    #[error("the request body did not arrive within the server's limit of {0} ms")]
    BodyTimeout(u64),
    /// 404: no such route.
    #[error("no route for {0}")]
    NotFound(String),
    /// 405: the route exists, the method does not.
    #[error("method {method} is not allowed on {path}")]
    MethodNotAllowed { method: String, path: String },
    /// 503 with `Retry-After`: every search permit is taken and the queue is full, or the server is shutting down.
    #[error("{reason}")]
    Unavailable { reason: String, retry_after_s: u64 },
    /// 504: the request ran past the server's request timeout.
    #[error("the request took longer than the server's limit of {0} ms")]
    Timeout(u64),
    /// 500: a bug; the cause is logged, never shown.
    #[error("internal error")]
    Internal(String),
}

fn summary(errors: &[Problem]) -> String {
    match errors {
        [one] if one.pointer.is_empty() => one.message.clone(),
        [one] => format!("{}: {}", one.pointer, one.message),
        many => format!("{} problems in the request", many.len()),
    }
}

impl From<Problems> for ApiError {
    fn from(problems: Problems) -> ApiError {
        ApiError::Invalid(problems.into_vec())
    }
}

impl From<Problem> for ApiError {
    fn from(problem: Problem) -> ApiError {
        ApiError::Invalid(vec![problem])
    }
}

impl ApiError {
    /// One field problem as a 422.
    pub fn invalid(pointer: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::Invalid(vec![Problem::new(pointer, message)])
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn slug(&self) -> &'static str {
        match self {
            ApiError::MalformedJson(_) => "malformed-json",
            ApiError::UnsupportedMediaType(_) => "unsupported-media-type",
            ApiError::PayloadTooLarge { .. } => "payload-too-large",
            ApiError::Invalid(_) => "invalid-request",
            ApiError::BodyTimeout(_) => "body-timeout",
            ApiError::NotFound(_) => "not-found",
            ApiError::MethodNotAllowed { .. } => "method-not-allowed",
            ApiError::Unavailable { .. } => "unavailable",
            ApiError::Timeout(_) => "timeout",
            ApiError::Internal(_) => "internal",
        }
    }
}

/// The problem-details body.
#[derive(Serialize)]
struct ProblemDetails<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'a str,
    status: u16,
    detail: String,
    errors: &'a [Problem],
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                "the server failed to answer; the error is logged".to_owned()
            }
            other => other.to_string(),
        };
        let single;
        let errors: &[Problem] = match &self {
            ApiError::Invalid(errors) => errors,
            ApiError::Internal(_) => &[],
            _ => {
                single = [Problem::new("", detail.clone())];
                &single
            }
        };
        let body = ProblemDetails {
            kind: format!("https://advisor2048.invalid/problems/{}", self.slug()),
            title: status.canonical_reason().unwrap_or("error"),
            status: status.as_u16(),
            detail,
            errors,
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let mut response = (status, bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        match self {
            ApiError::Unavailable { retry_after_s, .. } => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
            }
            // The rest of the body may still be on its way: the connection cannot carry another request.
            ApiError::BodyTimeout(_) => {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}
