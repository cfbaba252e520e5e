//! `GET /healthz`, `GET /metrics`, `GET /openapi.yaml`: cheap, never blocked by searches.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;

use crate::server::AppState;

/// The OpenAPI description of this service, embedded at build time.
pub const OPENAPI_YAML: &str = include_str!("../../../openapi.yaml");

#[derive(Serialize)]
pub struct Health {
    status: &'static str,
    version: &'static str,
    searches_running: usize,
    searches_queued: usize,
}

pub async fn healthz(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: if state.shutting_down() { "shutting_down" } else { "ok" },
        version: env!("CARGO_PKG_VERSION"),
        searches_running: state.permits.running(),
        searches_queued: state.permits.waiting(),
    })
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let body = state.metrics.render(state.permits.running(), state.permits.waiting());
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        body,
    )
}

pub async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/yaml")], OPENAPI_YAML)
}
