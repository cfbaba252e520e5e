//! `POST /evaluate`: the heuristic breakdown of a board and of the board after each legal move
//! ([`crate::request::evaluate`]): parse, run on the blocking pool, answer. With `"odds": true` the work includes the
//! default play's search, so it takes a search permit like `/best-move`.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::request::{EvaluateRequest, EvaluateResponse};
use crate::search::StopHandle;
use crate::server::error::ApiError;
use crate::server::limits::run_search;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<EvaluateResponse>, ApiError> {
    let request = EvaluateRequest::from_json(&body, state.network.is_some())?;
    let wants_odds = request.odds;
    let work_state = state.clone();
    let work = move |stop: &StopHandle| -> Result<EvaluateResponse, ApiError> {
        match request.run(work_state.network.as_ref(), &work_state.odds, stop)? {
            Some(answer) => Ok(answer),
            None => Err(ApiError::Unavailable {
                reason: "the search for the odds was stopped before it completed".to_owned(),
                retry_after_s: 1,
            }),
        }
    };
    let answer = if wants_odds {
        run_search(&state, 1, work).await??
    } else {
        // Custom weights build a table (milliseconds of CPU): keep that off the async workers.
        tokio::task::spawn_blocking(move || work(&StopHandle::new()))
            .await
            .map_err(|e| ApiError::Internal(format!("evaluate task failed: {e}")))??
    };
    Ok(Json(answer))
}
