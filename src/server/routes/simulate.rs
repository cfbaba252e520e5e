//! `POST /simulate`: self-play games (wired to `crate::sim` below).

use crate::server::error::ApiError;

pub async fn handle() -> Result<(), ApiError> {
    Err(ApiError::Unavailable {
        reason: "simulation is not built yet".to_owned(),
        retry_after_s: 60,
    })
}
