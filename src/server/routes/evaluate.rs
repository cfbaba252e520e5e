//! `POST /evaluate`: the heuristic breakdown of a board and of the board after each legal move.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::answer::EvaluateResponse;
use crate::eval::EvaluatorKind;
use crate::server::dto::{self, Problems};
use crate::server::error::ApiError;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<EvaluateResponse>, ApiError> {
    let mut problems = Problems::default();
    let map = dto::body_object(&body, &["board", "evaluator", "weights"], &mut problems)?;
    let board = match map.get("board") {
        Some(v) => dto::read_board(v, "/board", &mut problems),
        None => {
            problems.push("/board", "board is required");
            None
        }
    };
    let kind = match map.get("evaluator") {
        None => Some(EvaluatorKind::Classic),
        Some(v) => match v.as_str().map(str::parse::<EvaluatorKind>) {
            Some(Ok(kind)) => Some(kind),
            Some(Err(e)) => {
                problems.push("/evaluator", e.to_string());
                None
            }
            None => {
                problems.push(
                    "/evaluator",
                    format!("evaluator must be \"classic\", \"tuned\" or \"ntuple\", found {v}"),
                );
                None
            }
        },
    };
    if let Some(k) = kind {
        dto::check_network(map, k, state.network.is_some(), &mut problems);
    }
    let weights = kind.and_then(|k| dto::read_weights(map, k, &mut problems));
    let (tiles, (kind, weights)) = problems.finish(board.zip(kind.zip(weights)))?;
    // Custom weights build a table (milliseconds of CPU): keep that off the async workers.
    let answer = tokio::task::spawn_blocking(move || {
        let evaluator = dto::build_evaluator(kind, &weights, state.network.as_ref())?;
        Ok::<_, ApiError>(EvaluateResponse::new(&tiles, &evaluator))
    })
    .await
    .map_err(|e| ApiError::Internal(format!("evaluate task failed: {e}")))??;
    Ok(Json(answer))
}
