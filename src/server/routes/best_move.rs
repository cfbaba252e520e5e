//! `POST /best-move`: search a board and explain every direction.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::answer::BestMoveResponse;
use crate::request::BestMoveRequest;
use crate::search::search;
use crate::server::error::ApiError;
use crate::server::limits::run_search;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<BestMoveResponse>, ApiError> {
    let BestMoveRequest { board, search: request } = BestMoveRequest::from_json(&body, &state.search_bounds())?;
    let settings = request.settings;
    let metrics_state = state.clone();
    let answer = run_search(&state, settings.threads, move |stop| {
        let evaluator = request.evaluator.build(metrics_state.network.as_ref())?;
        let outcome = search(&board, &evaluator, &settings, stop);
        metrics_state.metrics.record_search(outcome.stats.nodes);
        if !outcome.completed() {
            return Err(ApiError::Unavailable {
                reason: "the search was stopped before its first iteration completed".to_owned(),
                retry_after_s: 1,
            });
        }
        tracing::debug!(nodes = outcome.stats.nodes, depth = outcome.stats.depth, "search done");
        Ok(BestMoveResponse::new(&board, &outcome, &evaluator, &settings))
    })
    .await??;
    Ok(Json(answer))
}
