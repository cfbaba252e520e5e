//! The command line's side of the one request model ([`advisor2048::request`]): flags become the JSON an HTTP
//! client would send, the library reads and validates it, and its problems come back with the flag's name in place
//! of the JSON pointer. So the command line accepts and refuses exactly what the HTTP API does, with the same
//! messages.

use std::fmt;

use serde_json::{Map, Value};

use advisor2048::engine::Tiles;
use advisor2048::request::read::read_board;
use advisor2048::request::{Problem, Problems};

/// A flag's text as the JSON value an HTTP client would send: a JSON number, boolean or null when the text is one
/// (`3`, `1.0`, `1e30`, `true`), else the text as a string (`auto`, `learned`).
pub fn flag_value(text: &str) -> Value {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => v,
        _ => Value::String(text.to_owned()),
    }
}

/// A board as given on the command line: JSON rows (`[[0,2,4,8],...]`) or the original game's saved state (an
/// object) when the text starts with `[` or `{`, else 16 hex digits (a JSON string).
pub fn board_value(text: &str) -> Result<Value, Problem> {
    let trimmed = text.trim();
    if trimmed.starts_with(['[', '{', '"']) {
        serde_json::from_str(trimmed).map_err(|e| Problem::new("/board", format!("the board is not valid JSON: {e}")))
    } else {
        Ok(Value::String(trimmed.to_owned()))
    }
}

/// A board read the way the HTTP API reads one (bench positions, one per line).
pub fn parse_board(text: &str) -> Result<Tiles, Invalid> {
    let flags = Flags::new("BOARD");
    let value = board_value(text).map_err(|p| flags.invalid(p.into()))?;
    let mut problems = Problems::default();
    let tiles = read_board(&value, "/board", &mut problems);
    problems.finish(tiles).map_err(|p| flags.invalid(p))
}

/// The request being built from flags: the JSON object, and the problems found in the flags' own syntax.
#[derive(Default)]
pub struct Body {
    map: Map<String, Value>,
    problems: Problems,
}

impl Body {
    /// Sets `field` from a flag's text, when the flag was given.
    pub fn flag(&mut self, field: &str, text: Option<&str>) {
        if let Some(text) = text {
            self.map.insert(field.to_owned(), flag_value(text));
        }
    }

    /// Sets `field` to `value`.
    pub fn set(&mut self, field: &str, value: Value) {
        self.map.insert(field.to_owned(), value);
    }

    /// Sets `board` from the board's text, when given.
    pub fn board(&mut self, text: Option<&str>) {
        match text.map(board_value) {
            Some(Ok(v)) => self.set("board", v),
            Some(Err(problem)) => self.problems.push(problem.pointer, problem.message),
            None => {}
        }
    }

    /// Sets `weights` from `--weight NAME=VALUE` flags (none given: no `weights` field).
    pub fn weights(&mut self, flags: &[String]) {
        if flags.is_empty() {
            return;
        }
        let mut weights = Map::new();
        for text in flags {
            match text.split_once('=') {
                Some((name, value)) => {
                    weights.insert(name.to_owned(), flag_value(value));
                }
                None => self.problems.push("/weights", format!("{text:?} is not NAME=VALUE")),
            }
        }
        self.set("weights", Value::Object(weights));
    }

    /// The JSON body, or the flags' syntax problems.
    pub fn finish(self) -> Result<Value, Problems> {
        if self.problems.is_empty() {
            Ok(Value::Object(self.map))
        } else {
            Err(self.problems)
        }
    }
}

/// The request fields whose flag is not `--field-name`, each written once, for every command.
const RENAMED: &[(&str, &str)] = &[("time_budget_ms", "--budget-ms"), ("weights", "--weight")];

/// The fields of a single search (`best-move`, `analyze`, `bench`) whose flags say so: in `simulate`, `--seed` and
/// `--threads` are the run's own.
const ONE_SEARCH_RENAMED: &[(&str, &str)] = &[("seed", "--search-seed"), ("threads", "--search-threads")];

/// How a command names the request's fields: the board argument, and the flags whose names differ from
/// `--field-name` ([`RENAMED`], and with [`Flags::one_search`] [`ONE_SEARCH_RENAMED`]).
pub struct Flags {
    board: &'static str,
    one_search: bool,
    /// The argument naming a JSON file, and the request fields read from it (`analyze`'s game).
    file: Option<(&'static str, &'static [&'static str])>,
}

impl Flags {
    pub const fn new(board: &'static str) -> Flags {
        Flags {
            board,
            one_search: false,
            file: None,
        }
    }

    /// These flags, for a single search's `seed` and `threads` ([`ONE_SEARCH_RENAMED`]).
    pub const fn one_search(self) -> Flags {
        Flags {
            one_search: true,
            ..self
        }
    }

    /// These flags, with `fields` read from the JSON file given as argument `name`: a problem in them is reported
    /// at the file and the JSON pointer inside it (`FILE /moves/17/board`).
    pub const fn with_file(self, name: &'static str, fields: &'static [&'static str]) -> Flags {
        Flags {
            file: Some((name, fields)),
            ..self
        }
    }

    /// The flag (or argument) a JSON pointer points into, and the rest of the pointer: `/time_budget_ms` ->
    /// `--budget-ms`, `/weights/empty` -> `--weight empty`, `/board/1/2` -> `BOARD /1/2`.
    pub fn name(&self, pointer: &str) -> String {
        let path = pointer.strip_prefix('/').unwrap_or(pointer);
        let (field, rest) = path.split_once('/').unwrap_or((path, ""));
        let field = field.replace("~1", "/").replace("~0", "~");
        if let Some((file, _)) = self.file.filter(|(_, fields)| fields.contains(&field.as_str())) {
            return format!("{file} {pointer}");
        }
        let flag = if field == "board" {
            self.board.to_owned()
        } else if field.is_empty() {
            "the request".to_owned()
        } else {
            let one_search: &[(&str, &str)] = if self.one_search { ONE_SEARCH_RENAMED } else { &[] };
            match RENAMED.iter().chain(one_search).find(|(f, _)| *f == field) {
                Some((_, flag)) => (*flag).to_owned(),
                None => format!("--{}", field.replace('_', "-")),
            }
        };
        match (field.as_str(), rest) {
            (_, "") => flag,
            ("weights", name) => format!("{flag} {}", name.replace("~1", "/").replace("~0", "~")),
            (_, rest) => format!("{flag} /{rest}"),
        }
    }

    /// The error listing `problems`, each at its flag.
    pub fn invalid(&self, problems: Problems) -> Invalid {
        Invalid(
            problems
                .iter()
                .map(|p| (self.name(&p.pointer), p.message.clone()))
                .collect(),
        )
    }
}

/// A request refused: every problem, at its flag. Printed one per line: `  --depth: depth must be ...`.
#[derive(Debug)]
pub struct Invalid(pub Vec<(String, String)>);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid request:")?;
        for (flag, message) in &self.0 {
            write!(f, "\n  {flag}: {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}
