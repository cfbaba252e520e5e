//! advisor2048: tells a 2048 player which way to move, and why.
//!
//! # Layout
//! - [`names`]: the named enums' one definition (names, parsing, errors), used by every layer.
//! - [`engine`]: the rules: bitboard, row tables, exact wide boards, formats, seeded RNG, the reference model.
//! - [`eval`]: the evaluators (`classic`, `tuned`, the learned `ntuple` network) behind one [`eval::Evaluator`]
//!   trait, with breakdowns; each heuristic's weights written once in a table.
//! - [`search`]: expectimax with probability cut-off, transposition table, budgets, cancellation, threads.
//! - [`sim`]: deterministic self-play: seed and settings in, game records and summary statistics out.
//! - [`request`]: the best-move, evaluate, simulate and analyze requests that the HTTP API and the command line both
//!   parse into, their one validation (every problem, each at its JSON pointer), every bound and default; one home
//!   per request kind, with its work (`run`) and its answer.
//! - [`train`]: TD learning of n-tuple networks in self-play (`advisor2048 train`).
//! - [`server`]: the axum HTTP service, a thin layer over the above.
//!
//! Dependencies point one way: `server -> request -> sim -> search -> eval -> engine`. Nothing imports `server`.

pub mod engine;
pub mod eval;
pub mod names;
pub mod request;
pub mod search;
pub mod server;
pub mod sim;
pub mod train;
