//! `GET /`: the playground page, a single self-contained HTML file embedded in the binary (no CDN).

use axum::response::Html;

const PAGE: &str = include_str!("../../../static/playground.html");

pub async fn page() -> Html<&'static str> {
    Html(PAGE)
}
