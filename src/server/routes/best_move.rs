//! `POST /best-move`: search a board and explain every direction ([`crate::request::best_move`]): parse, run on the
//! blocking pool, answer.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::request::{BestMoveRequest, BestMoveResponse};
use crate::server::error::ApiError;
use crate::server::limits::run_search;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<BestMoveResponse>, ApiError> {
    let request = BestMoveRequest::from_json(&body, &state.search_bounds())?;
    let metrics_state = state.clone();
    let answer = run_search(&state, request.search.settings.run.threads, move |stop| {
        let answer = request.run(metrics_state.network.as_ref(), &metrics_state.odds, stop)?;
        metrics_state.metrics.record_search(answer.search.nodes);
        if !answer.completed() {
            return Err(ApiError::Unavailable {
                reason: "the search was stopped before its first iteration completed".to_owned(),
                retry_after_s: 1,
            });
        }
        tracing::debug!(nodes = answer.search.nodes, depth = answer.search.depth, "search done");
        Ok(answer)
    })
    .await??;
    Ok(Json(answer))
}
