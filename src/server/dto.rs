//! Requests: read from a `serde_json::Value` field by field so that **every** problem is reported with its JSON
//! pointer (serde's derive stops at the first). The answers are the library's [`crate::answer`] types.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::error::{ApiError, FieldError};
use crate::engine::{exponent_of, SavedCell, Tiles, MAX_TILE};
use crate::eval::{AnyEvaluator, EvaluatorKind, Network, WeightError};
use crate::search::{Depth, Profile, SearchSettings, Terminal};

/// Collects field problems while a request is read.
#[derive(Default)]
pub struct Problems(pub Vec<FieldError>);

impl Problems {
    pub fn push(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(pointer, message));
    }

    /// `Ok(value)` when nothing went wrong and the value was read, else the 422 listing every problem.
    pub fn finish<T>(self, value: Option<T>) -> Result<T, ApiError> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ if self.0.is_empty() => Err(ApiError::invalid("", "the request is invalid")),
            _ => Err(ApiError::Invalid(self.0)),
        }
    }
}

/// The request body as an object, with unknown fields reported (a typo such as `"dept"` must not be ignored).
pub fn body_object<'a>(
    body: &'a Value,
    known: &[&str],
    problems: &mut Problems,
) -> Result<&'a Map<String, Value>, ApiError> {
    let Some(map) = body.as_object() else {
        return Err(ApiError::invalid(
            "",
            format!("the body must be a JSON object, found {}", kind_of(body)),
        ));
    };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            problems.push(
                pointer(&[key]),
                format!("unknown field {key:?} (known fields: {})", known.join(", ")),
            );
        }
    }
    Ok(map)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON pointer from path segments (RFC 6901 escaping).
pub fn pointer(segments: &[&str]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// Reads a board in any of the three formats: rows of values, 16 hex digits, or the original game's saved state.
pub fn read_board(value: &Value, at: &str, problems: &mut Problems) -> Option<Tiles> {
    match value {
        Value::String(hex) => match Tiles::from_hex(hex) {
            Ok(t) => Some(t),
            Err(e) => {
                problems.push(format!("{at}{}", e.path), e.kind.to_string());
                None
            }
        },
        Value::Array(rows) => read_rows(rows, at, problems),
        Value::Object(state) => read_saved_state(state, at, problems),
        other => {
            problems.push(
                at,
                format!(
                    "a board is rows of tile values, a 16-digit hex string or a saved game state, found {}",
                    kind_of(other)
                ),
            );
            None
        }
    }
}

/// A JSON number that is a whole number (`2` or `2.0`; JSON Schema counts both as integers). Whole floats beyond
/// the `i128` range saturate (they are out of every field's range anyway).
pub fn whole_number(v: &Value) -> Option<i128> {
    let n = v.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    (f.is_finite() && f.fract() == 0.0).then_some(f as i128)
}

/// A tile value from JSON, or the message saying why it is not one.
fn tile_value(v: &Value) -> Result<i64, String> {
    let not_tile = |shown: String| format!("{shown} is not a tile value (0 or a power of two from 2 to {MAX_TILE})");
    match whole_number(v).and_then(|i| i64::try_from(i).ok()) {
        Some(i) if exponent_of(i).is_some() => Ok(i),
        _ => Err(not_tile(v.to_string())),
    }
}

fn read_rows(rows: &[Value], at: &str, problems: &mut Problems) -> Option<Tiles> {
    if rows.len() != 4 {
        problems.push(at, format!("a board has 4 rows, found {}", rows.len()));
        return None;
    }
    let before = problems.0.len();
    let mut values = [[0i64; 4]; 4];
    for (r, row) in rows.iter().enumerate() {
        let Some(cells) = row.as_array() else {
            problems.push(
                format!("{at}/{r}"),
                format!("a row is an array of 4 tile values, found {}", kind_of(row)),
            );
            continue;
        };
        if cells.len() != 4 {
            problems.push(format!("{at}/{r}"), format!("a row has 4 cells, found {}", cells.len()));
            continue;
        }
        for (c, cell) in cells.iter().enumerate() {
            match tile_value(cell) {
                Ok(v) => values[r][c] = v,
                Err(message) => problems.push(format!("{at}/{r}/{c}"), message),
            }
        }
    }
    if problems.0.len() > before {
        return None;
    }
    match Tiles::from_rows(&values) {
        Ok(t) => Some(t),
        Err(e) => {
            problems.push(format!("{at}{}", e.path), e.kind.to_string());
            None
        }
    }
}

fn read_saved_state(state: &Map<String, Value>, at: &str, problems: &mut Problems) -> Option<Tiles> {
    let Some(grid) = state.get("grid").and_then(Value::as_object) else {
        problems.push(
            at,
            "a board object must be the original game's saved state: {\"grid\": {\"size\": 4, \"cells\": [...]}}",
        );
        return None;
    };
    let size = grid.get("size").and_then(Value::as_i64).unwrap_or(-1);
    let Some(columns) = grid.get("cells").and_then(Value::as_array) else {
        problems.push(
            format!("{at}/grid/cells"),
            "cells must be an array of 4 columns (cells[x][y])",
        );
        return None;
    };
    let before = problems.0.len();
    let mut cells: Vec<Vec<Option<SavedCell>>> = Vec::with_capacity(columns.len());
    for (x, column) in columns.iter().enumerate() {
        let Some(column) = column.as_array() else {
            problems.push(
                format!("{at}/grid/cells/{x}"),
                format!("a column is an array, found {}", kind_of(column)),
            );
            continue;
        };
        let mut out = Vec::with_capacity(column.len());
        for (y, cell) in column.iter().enumerate() {
            let here = format!("{at}/grid/cells/{x}/{y}");
            match cell {
                Value::Null => out.push(None),
                Value::Object(obj) => {
                    let position = obj
                        .get("position")
                        .and_then(|p| Some((p.get("x")?.as_i64()?, p.get("y")?.as_i64()?)));
                    match obj.get("value").map(tile_value) {
                        Some(Ok(value)) => out.push(Some(SavedCell { position, value })),
                        Some(Err(message)) => problems.push(format!("{here}/value"), message),
                        None => problems.push(here, "a tile needs a value"),
                    }
                }
                other => problems.push(
                    here,
                    format!("a cell is null or a tile object, found {}", kind_of(other)),
                ),
            }
        }
        cells.push(out);
    }
    if problems.0.len() > before {
        return None;
    }
    match Tiles::from_saved_cells(size, &cells) {
        Ok(t) => Some(t),
        Err(e) => {
            problems.push(format!("{at}{}", e.path), e.kind.to_string());
            None
        }
    }
}

/// An optional whole number in `min..=max`.
pub fn read_u64(map: &Map<String, Value>, name: &str, min: u64, max: u64, problems: &mut Problems) -> Option<u64> {
    let v = map.get(name)?;
    match whole_number(v).and_then(|n| u64::try_from(n).ok()) {
        Some(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            problems.push(
                pointer(&[name]),
                format!("{name} must be a whole number from {min} to {max}, found {v}"),
            );
            None
        }
    }
}

/// A whole number of at least `min` that the server clamps to `max`: any larger whole number, even one beyond
/// 64 bits (JSON has no limit), means "as much as the server allows".
pub fn read_clamped(map: &Map<String, Value>, name: &str, min: u64, max: u64, problems: &mut Problems) -> Option<u64> {
    let v = map.get(name)?;
    match whole_number(v) {
        Some(n) if n >= i128::from(min) => Some(u64::try_from(n).unwrap_or(u64::MAX).min(max)),
        _ => {
            problems.push(
                pointer(&[name]),
                format!("{name} must be a whole number of at least {min}, found {v}"),
            );
            None
        }
    }
}

/// The largest magnitude of a weight (and of `reward_weight`): keeps every value and contribution finite.
pub const MAX_WEIGHT: f64 = 1e9;

fn read_f64(map: &Map<String, Value>, name: &str, problems: &mut Problems) -> Option<f64> {
    let v = map.get(name)?;
    match v.as_f64() {
        Some(x) if x.is_finite() => Some(x),
        _ => {
            problems.push(pointer(&[name]), format!("{name} must be a finite number, found {v}"));
            None
        }
    }
}

/// A weight: a number from -[`MAX_WEIGHT`] to [`MAX_WEIGHT`].
fn weight_value(v: &Value) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.abs() <= MAX_WEIGHT => Ok(x),
        _ => Err(format!(
            "must be a number from -{MAX_WEIGHT:e} to {MAX_WEIGHT:e}, found {v}"
        )),
    }
}

fn read_str<'a>(map: &'a Map<String, Value>, name: &str, problems: &mut Problems) -> Option<&'a str> {
    let v = map.get(name)?;
    match v.as_str() {
        Some(s) => Some(s),
        None => {
            problems.push(
                pointer(&[name]),
                format!("{name} must be a string, found {}", kind_of(v)),
            );
            None
        }
    }
}

/// An optional boolean.
pub fn read_bool(map: &Map<String, Value>, name: &str, problems: &mut Problems) -> Option<bool> {
    let v = map.get(name)?;
    match v.as_bool() {
        Some(b) => Some(b),
        None => {
            problems.push(pointer(&[name]), format!("{name} must be true or false, found {v}"));
            None
        }
    }
}

/// The server's bounds on what a request may ask for.
#[derive(Clone, Copy, Debug)]
pub struct SearchBounds {
    pub max_budget: Duration,
    pub max_depth: u32,
    pub max_threads: usize,
    /// The profile of a request that names none ([`Profile::default_for`] the service's network).
    pub default_profile: Profile,
}

/// The search settings fields shared by `/best-move` and `/simulate`.
pub const SEARCH_FIELDS: &[&str] = &[
    "profile",
    "evaluator",
    "depth",
    "time_budget_ms",
    "prob_cutoff",
    "reward_weight",
    "terminal",
    "weights",
    "sample_cells",
    "top_k",
    "seed",
    "threads",
];

/// Validated weight overrides, `(name, value)`; turned into an evaluator off the async workers (building a weight
/// table takes milliseconds) by [`build_evaluator`].
pub type Weights = Vec<(String, f64)>;

/// The evaluator of `kind` with `weights` applied (the names and values were validated when read) and `network`
/// as the `ntuple` evaluator's network.
pub fn build_evaluator(
    kind: EvaluatorKind,
    weights: &Weights,
    network: Option<&Arc<Network>>,
) -> Result<AnyEvaluator, ApiError> {
    kind.with_network(network, weights).map_err(|e| {
        let at = if matches!(e, WeightError::NoNetwork) {
            "/evaluator"
        } else {
            "/weights"
        };
        ApiError::Invalid(vec![FieldError::new(at, e.to_string())])
    })
}

/// Records a problem when the request needs the `ntuple` evaluator (profile `learned` or evaluator `ntuple`) and
/// the service has no network loaded: at `/evaluator` when the request named it, else at `/profile`.
pub fn check_network(map: &Map<String, Value>, kind: EvaluatorKind, loaded: bool, problems: &mut Problems) {
    if kind == EvaluatorKind::NTuple && !loaded {
        let at = if map.contains_key("evaluator") {
            "/evaluator"
        } else {
            "/profile"
        };
        problems.push(at, WeightError::NoNetwork.to_string());
    }
}

/// Reads the search settings: the profile's defaults with every given field applied, the budget clamped to the
/// server's maximum (a request without a budget gets that maximum), and the validated weight overrides.
pub fn read_search(
    map: &Map<String, Value>,
    bounds: &SearchBounds,
    problems: &mut Problems,
) -> Option<(SearchSettings, Weights)> {
    let before = problems.0.len();
    let profile = match read_str(map, "profile", problems).map(str::parse::<Profile>) {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            problems.push("/profile", e.to_string());
            bounds.default_profile
        }
        None => bounds.default_profile,
    };
    let mut s = profile.settings();
    match read_str(map, "evaluator", problems).map(str::parse::<EvaluatorKind>) {
        Some(Ok(kind)) => s.evaluator = kind,
        Some(Err(e)) => problems.push("/evaluator", e.to_string()),
        None => {}
    }
    if let Some(v) = map.get("depth") {
        match (v.as_str(), whole_number(v).and_then(|d| u64::try_from(d).ok())) {
            (Some("auto"), _) => s.depth = Depth::Auto,
            (_, Some(d)) if (1..=u64::from(bounds.max_depth)).contains(&d) => s.depth = Depth::Plies(d as u32),
            (_, Some(d)) if d > u64::from(bounds.max_depth) => problems.push(
                "/depth",
                format!(
                    "depth {d} is over the server's limit of {} plies (--max-depth)",
                    bounds.max_depth
                ),
            ),
            _ => problems.push(
                "/depth",
                format!("depth must be \"auto\" or a number of plies from 1, found {v}"),
            ),
        }
    }
    let max_ms = bounds.max_budget.as_millis() as u64;
    let budget_ms = read_clamped(map, "time_budget_ms", 1, max_ms, problems).unwrap_or(max_ms);
    s.time_budget = Some(Duration::from_millis(budget_ms));
    if let Some(p) = read_f64(map, "prob_cutoff", problems) {
        if (0.0..1.0).contains(&p) {
            s.prob_cutoff = p;
        } else {
            problems.push(
                "/prob_cutoff",
                format!("prob_cutoff must be at least 0 and below 1, found {p}"),
            );
        }
    }
    if let Some(v) = map.get("reward_weight") {
        match weight_value(v) {
            Ok(w) => s.reward_weight = w,
            Err(message) => problems.push("/reward_weight", format!("reward_weight {message}")),
        }
    }
    match read_str(map, "terminal", problems).map(str::parse::<Terminal>) {
        Some(Ok(t)) => s.terminal = t,
        Some(Err(e)) => problems.push("/terminal", e.to_string()),
        None => {}
    }
    s.sample_cells = read_u64(map, "sample_cells", 1, 16, problems).map(|k| k as u32);
    s.top_k = read_u64(map, "top_k", 1, 4, problems).map(|k| k as u32);
    if let Some(seed) = read_u64(map, "seed", 0, u64::MAX, problems) {
        s.seed = seed;
    }
    // More threads than the server allows are clamped to its limit, like the time budget.
    if let Some(t) = read_clamped(map, "threads", 1, bounds.max_threads as u64, problems) {
        s.threads = usize::try_from(t).unwrap_or(bounds.max_threads);
    }
    let evaluator = read_weights(map, s.evaluator, problems);
    (problems.0.len() == before)
        .then_some(())
        .and(evaluator.map(|e| (s, e)))
}

/// The request's `weights`: names known to the evaluator, finite numbers.
pub fn read_weights(map: &Map<String, Value>, kind: EvaluatorKind, problems: &mut Problems) -> Option<Weights> {
    let Some(v) = map.get("weights") else {
        return Some(Vec::new());
    };
    let Some(obj) = v.as_object() else {
        problems.push(
            "/weights",
            format!(
                "weights must be an object of weight names to numbers, found {}",
                kind_of(v)
            ),
        );
        return None;
    };
    let mut overrides = Vec::new();
    let known: Vec<&str> = kind.default_weights().iter().map(|(n, _)| *n).collect();
    let before = problems.0.len();
    for (name, value) in obj {
        let at = pointer(&["weights", name]);
        if !known.contains(&name.as_str()) {
            problems.push(
                at,
                format!(
                    "unknown weight {name:?} for evaluator {kind} (known: {})",
                    known.join(", ")
                ),
            );
            continue;
        }
        match weight_value(value) {
            Ok(x) => overrides.push((name.clone(), x)),
            Err(message) => problems.push(at, format!("weight {name:?} {message}")),
        }
    }
    (problems.0.len() == before).then_some(overrides)
}
