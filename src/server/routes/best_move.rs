//! `POST /best-move`: search a board and explain every direction.

use axum::extract::State;
use axum::Json;

use super::JsonBody;
use crate::answer::BestMoveResponse;
use crate::search::search;
use crate::server::dto::{self, Problems};
use crate::server::error::ApiError;
use crate::server::limits::run_search;
use crate::server::AppState;

pub async fn handle(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<BestMoveResponse>, ApiError> {
    let mut problems = Problems::default();
    let mut known = vec!["board"];
    known.extend_from_slice(dto::SEARCH_FIELDS);
    let map = dto::body_object(&body, &known, &mut problems)?;
    let board = match map.get("board") {
        Some(v) => dto::read_board(v, "/board", &mut problems),
        None => {
            problems.push("/board", "board is required");
            None
        }
    };
    let search_settings = dto::read_search(map, &state.search_bounds(), &mut problems);
    if let Some((s, _)) = &search_settings {
        dto::check_network(map, s.evaluator, state.network.is_some(), &mut problems);
    }
    let (tiles, (settings, weights)) = problems.finish(board.zip(search_settings))?;
    let threads = settings.threads;
    let metrics_state = state.clone();
    let answer = run_search(&state, threads, move |stop| {
        let evaluator = dto::build_evaluator(settings.evaluator, &weights, metrics_state.network.as_ref())?;
        let outcome = search(&tiles, &evaluator, &settings, stop);
        metrics_state.metrics.record_search(outcome.stats.nodes);
        if !outcome.completed() {
            return Err(ApiError::Unavailable {
                reason: "the search was stopped before its first iteration completed".to_owned(),
                retry_after_s: 1,
            });
        }
        tracing::debug!(nodes = outcome.stats.nodes, depth = outcome.stats.depth, "search done");
        Ok(BestMoveResponse::new(&tiles, &outcome, &evaluator, &settings))
    })
    .await??;
    Ok(Json(answer))
}
