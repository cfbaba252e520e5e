//! The integration tests, one crate, so that the suite links the library, axum, tokio and reqwest once instead of
//! once per file: a module per area, and [`common`] for the helpers they share (the in-process test server, the
//! release binary as a child process, raw HTTP connections, the spec). Run one area with its module's name:
//! `cargo test --release --test it http_api::`; the soak test with `cargo test --release --test it soak::`.

mod common;

mod binary;
mod connections;
mod cors;
mod deploy_manifests;
mod engine_props;
mod engine_rules;
mod eval_golden;
mod eval_props;
mod http_analyze;
mod http_api;
mod http_learned;
mod http_odds;
mod http_review_odds;
mod ntuple;
mod request_parity;
mod search_golden;
mod shipped_network;
mod sim;
mod soak;
mod spec_bounds;
