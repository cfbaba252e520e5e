//! `POST /evaluate`: the heuristic breakdown of a board and of the board after each legal move
//! ([`crate::request::evaluate`]): parse, run on the blocking pool, answer.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::request::{EvaluateRequest, EvaluateResponse};
use crate::server::error::ApiError;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<EvaluateResponse>, ApiError> {
    let request = EvaluateRequest::from_json(&body, state.network.is_some())?;
    // Custom weights build a table (milliseconds of CPU): keep that off the async workers.
    let answer = tokio::task::spawn_blocking(move || request.run(state.network.as_ref()))
        .await
        .map_err(|e| ApiError::Internal(format!("evaluate task failed: {e}")))??;
    Ok(Json(answer))
}
