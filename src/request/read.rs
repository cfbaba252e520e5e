//! Reading a request out of JSON, field by field, so that **every** problem is reported with its JSON pointer
//! (serde's derive stops at the first): the body object, the three board formats, numbers, strings, booleans.

use serde_json::{Map, Value};

use super::{Problems, MAX_WEIGHT};
use crate::engine::{exponent_of, SavedCell, Tiles, MAX_TILE};

/// The request body as an object, with unknown fields reported (a typo such as `"dept"` must not be ignored).
/// `None` (and the one problem at `""`) when the body is not an object.
pub fn body_object<'a>(body: &'a Value, known: &[&str], problems: &mut Problems) -> Option<&'a Map<String, Value>> {
    let Some(map) = body.as_object() else {
        problems.push("", format!("the body must be a JSON object, found {}", kind_of(body)));
        return None;
    };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            problems.push(
                pointer(&[key]),
                format!("unknown field {key:?} (known fields: {})", known.join(", ")),
            );
        }
    }
    Some(map)
}

/// "a number", "an array", ...: what a value is, for messages.
pub fn kind_of(v: &Value) -> &'static str {
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
    let before = problems.len();
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
    if problems.len() > before {
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
    let before = problems.len();
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
    if problems.len() > before {
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

/// An optional finite number.
pub fn read_f64(map: &Map<String, Value>, name: &str, problems: &mut Problems) -> Option<f64> {
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
pub fn weight_value(v: &Value) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.abs() <= MAX_WEIGHT => Ok(x),
        _ => Err(format!(
            "must be a number from -{MAX_WEIGHT:e} to {MAX_WEIGHT:e}, found {v}"
        )),
    }
}

/// An optional string.
pub fn read_str<'a>(map: &'a Map<String, Value>, name: &str, problems: &mut Problems) -> Option<&'a str> {
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
