//! `GET /healthz`, `GET /metrics`, `GET /openapi.yaml`: cheap, never blocked by searches.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;

use crate::eval::Network;
use crate::server::AppState;

/// The OpenAPI description of this service, embedded at build time.
pub const OPENAPI_YAML: &str = include_str!("../../../openapi.yaml");

#[derive(Serialize)]
pub struct Health {
    status: &'static str,
    version: &'static str,
    searches_running: usize,
    searches_queued: usize,
    /// The profile of requests that name none: `learned` with a network, else `tuned`.
    default_profile: &'static str,
    /// The loaded n-tuple network (profile `learned`), or null.
    network: Option<NetworkHealth>,
}

/// What `/healthz` says of the loaded network.
#[derive(Serialize)]
pub struct NetworkHealth {
    shape: String,
    tuples: Vec<Vec<u8>>,
    stages: Vec<u8>,
    weights: usize,
    /// The first 16 hex digits of the weight file's SHA-256 (`advisor2048 net info` prints the same).
    checksum: Option<String>,
    trained_games: Option<u64>,
}

impl NetworkHealth {
    pub fn of(net: &Network) -> NetworkHealth {
        let shape = net.shape();
        NetworkHealth {
            shape: shape.describe(),
            tuples: shape.tuples.clone(),
            stages: shape.stages.clone(),
            weights: shape.weight_count(),
            checksum: net.info.as_ref().map(|i| i.checksum().to_owned()),
            trained_games: net.info.as_ref().map(|i| i.header.training.games),
        }
    }
}

pub async fn healthz(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: if state.shutting_down() { "shutting_down" } else { "ok" },
        version: env!("CARGO_PKG_VERSION"),
        searches_running: state.permits.running(),
        searches_queued: state.permits.waiting(),
        default_profile: state.default_profile().as_str(),
        network: state.network.as_deref().map(NetworkHealth::of),
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
