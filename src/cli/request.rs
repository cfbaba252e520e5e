//! The command line's side of the one request model ([`advisor2048::request`]): flags become the JSON an HTTP
//! client would send, the library reads and validates it, and its problems come back with the flag's name in place
//! of the JSON pointer. So the command line accepts and refuses exactly what the HTTP API does, with the same
//! messages. The flags of the request's fields are built from the fields' declarations
//! ([`advisor2048::request::field`]): [`FieldFlags`] gives a command one flag per declared field, with the
//! declaration's flag name, help, range and default, and [`Flags`] names a problem's flag from the same declaration.

use std::fmt;
use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use advisor2048::engine::Tiles;
use advisor2048::request::field::{self, Accepts, Field, FlagDefault};
use advisor2048::request::read::read_board;
use advisor2048::request::{Problem, Problems};

/// A set of declared request fields that a command takes as flags.
pub trait FieldSet {
    const FIELDS: &'static [&'static Field];
}

/// The flags of a [`FieldSet`]: one per field, as its declaration says, holding what the command line gave.
pub struct FieldFlags<S> {
    given: Vec<(&'static Field, Given)>,
    set: PhantomData<S>,
}

/// What a flag was given.
#[derive(Clone, Debug)]
enum Given {
    Text(String),
    Switch,
    Repeated(Vec<String>),
}

impl<S> Clone for FieldFlags<S> {
    fn clone(&self) -> Self {
        FieldFlags {
            given: self.given.clone(),
            set: PhantomData,
        }
    }
}

impl<S> fmt::Debug for FieldFlags<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.given.iter().map(|(field, given)| (field.name, given)))
            .finish()
    }
}

impl<S: FieldSet> FieldFlags<S> {
    /// Adds the given fields to `body`.
    pub fn fill(&self, body: &mut Body) {
        for (field, given) in &self.given {
            match given {
                Given::Text(text) => body.flag(field.name, Some(text)),
                Given::Switch => body.set(field.name, Value::Bool(true)),
                Given::Repeated(texts) => body.named_numbers(field, texts),
            }
        }
    }

    /// Whether the field named `name` was given (or has a command-line default).
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|(f, _)| f.name == name)
    }
}

/// The id of `field`'s flag: the flag's name, which no other flag of the command has (a JSON name may be a
/// command's own flag too: `bench --seed` beside the search's `seed`, `--search-seed`).
fn field_id(field: &Field) -> &'static str {
    field.flag
}

/// The flag of `field`.
fn field_arg(field: &'static Field) -> Arg {
    let arg = Arg::new(field_id(field)).long(field.flag).help(field.flag_help());
    match field.accepts {
        Accepts::Bool => arg.action(ArgAction::SetTrue),
        Accepts::NamedNumbers { .. } => arg.value_name(field.value_name).action(ArgAction::Append),
        _ => {
            let arg = arg.value_name(field.value_name).allow_negative_numbers(true);
            match field.flag_default {
                FlagDefault::Value(text) => arg.default_value(text),
                FlagDefault::Absent | FlagDefault::Said(_) => arg,
            }
        }
    }
}

impl<S: FieldSet> clap::Args for FieldFlags<S> {
    fn augment_args(cmd: Command) -> Command {
        S::FIELDS.iter().fold(cmd, |cmd, field| cmd.arg(field_arg(field)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: FieldSet> clap::FromArgMatches for FieldFlags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = FieldFlags {
            given: Vec::new(),
            set: PhantomData,
        };
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for &field in S::FIELDS {
            let given = match field.accepts {
                Accepts::Bool => matches.get_flag(field_id(field)).then_some(Given::Switch),
                Accepts::NamedNumbers { .. } => matches
                    .get_many::<String>(field_id(field))
                    .map(|texts| Given::Repeated(texts.cloned().collect())),
                _ => matches.get_one::<String>(field_id(field)).cloned().map(Given::Text),
            };
            self.given.retain(|(f, _)| f.name != field.name);
            if let Some(given) = given {
                self.given.push((field, given));
            }
        }
        Ok(())
    }
}

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
    let flags = Flags::new("BOARD", &[]);
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

    /// Sets a field of names to numbers (`weights`) from its repeated `NAME=VALUE` flags (none given: no field).
    pub fn named_numbers(&mut self, field: &Field, flags: &[String]) {
        if flags.is_empty() {
            return;
        }
        let mut numbers = Map::new();
        for text in flags {
            match text.split_once('=') {
                Some((name, value)) => {
                    numbers.insert(name.to_owned(), flag_value(value));
                }
                None => self
                    .problems
                    .push(field.pointer(), format!("{text:?} is not NAME=VALUE")),
            }
        }
        self.set(field.name, Value::Object(numbers));
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

/// How a command names the request's fields: the board argument, and the declared fields it takes as flags.
pub struct Flags {
    board: &'static str,
    fields: &'static [&'static [&'static Field]],
    /// The argument naming a JSON file, and the request fields read from it (`analyze`'s game).
    file: Option<(&'static str, &'static [&'static str])>,
}

impl Flags {
    pub const fn new(board: &'static str, fields: &'static [&'static [&'static Field]]) -> Flags {
        Flags {
            board,
            fields,
            file: None,
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
        let (name, rest) = path.split_once('/').unwrap_or((path, ""));
        let name = name.replace("~1", "/").replace("~0", "~");
        if let Some((file, _)) = self.file.filter(|(_, fields)| fields.contains(&name.as_str())) {
            return format!("{file} {pointer}");
        }
        let declared = field::find(self.fields, &name);
        let flag = match declared {
            _ if name == "board" => self.board.to_owned(),
            _ if name.is_empty() => "the request".to_owned(),
            Some(field) => format!("--{}", field.flag),
            None => format!("--{}", name.replace('_', "-")),
        };
        match (declared.map(|f| f.accepts), rest) {
            (_, "") => flag,
            (Some(Accepts::NamedNumbers { .. }), key) => {
                format!("{flag} {}", key.replace("~1", "/").replace("~0", "~"))
            }
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
