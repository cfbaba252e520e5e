//! Reading each form of a record into its moves (`moves`, `start` with `directions` and `spawns`, or a `/simulate`
//! `game` with its trace), every element checked as it is read and each problem reported at its place, until
//! [`MAX_RECORD_PROBLEMS`] of them.

use serde_json::{Map, Value};

use super::{RecordedMove, MAX_RECORD_PROBLEMS};
use crate::engine::{Direction, Tiles};
use crate::request::read::{kind_of, pointer, read_board};
use crate::request::Problems;

/// The fields of a `/simulate` game record that `game` accepts (all but `trace`, `start_board` and `final_board`
/// are read past: they describe the game, the trace is the game).
pub const GAME_RECORD_FIELDS: &[&str] = &[
    "index",
    "seed",
    "score",
    "max_tile",
    "moves",
    "reached",
    "start_board",
    "final_board",
    "finished",
    "game_over",
    "trace",
    "elapsed_ms",
    "cpu_ms",
    "depths",
];

/// Reads the moves of a record, stopping after [`MAX_RECORD_PROBLEMS`] problems.
pub(super) struct RecordReader<'a> {
    pub(super) problems: &'a mut Problems,
    /// Problems reported before the record was read (the limit counts the record's own).
    pub(super) before: usize,
    pub(super) max_moves: u64,
}

impl RecordReader<'_> {
    fn full(&self) -> bool {
        self.problems.len() - self.before >= MAX_RECORD_PROBLEMS
    }

    /// The array at `at` with its length checked against the bounds (before any element is read).
    fn list<'v>(&mut self, value: &'v Value, at: &str, what: &str) -> Option<&'v [Value]> {
        let Some(items) = value.as_array() else {
            self.problems
                .push(at, format!("{what} must be an array, found {}", kind_of(value)));
            return None;
        };
        match items.len() as u64 {
            0 => {
                self.problems
                    .push(at, format!("{what} is empty: a game to review has at least one move"));
                None
            }
            n if n > self.max_moves => {
                self.problems.push(
                    at,
                    format!(
                        "{n} moves is over the server's limit of {} moves per request (--max-analyze-moves)",
                        self.max_moves
                    ),
                );
                None
            }
            _ => Some(items),
        }
    }

    fn direction(&mut self, value: Option<&Value>, at: &str) -> Option<Direction> {
        match value.map(|v| (v, v.as_str().map(str::parse::<Direction>))) {
            None => self.problems.push(at, "direction is required"),
            Some((_, Some(Ok(d)))) => return Some(d),
            Some((_, Some(Err(e)))) => self.problems.push(at, e.to_string()),
            Some((v, None)) => self.problems.push(
                at,
                format!("a direction is \"up\", \"down\", \"left\" or \"right\", found {v}"),
            ),
        }
        None
    }

    /// One `{board, direction}` object (extra `known` fields allowed).
    fn step(&mut self, value: &Value, at: &str, known: &[&str]) -> Option<RecordedMove> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                at,
                format!(
                    "a move is an object {{\"board\": ..., \"direction\": ...}}, found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if !known.contains(&key.as_str()) {
                self.problems.push(
                    format!("{at}{}", pointer(&[key])),
                    format!("unknown field {key:?} (known fields: {})", known.join(", ")),
                );
            }
        }
        let board = match obj.get("board") {
            Some(b) => read_board(b, &format!("{at}/board"), self.problems),
            None => {
                self.problems.push(format!("{at}/board"), "board is required");
                None
            }
        };
        let direction = self.direction(obj.get("direction"), &format!("{at}/direction"));
        Some(RecordedMove {
            board: board?,
            direction: direction?,
        })
    }

    fn steps(&mut self, items: &[Value], at: &str, known: &[&str]) -> Option<Vec<RecordedMove>> {
        let before = self.problems.len();
        let mut record = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if self.full() {
                break;
            }
            if let Some(m) = self.step(item, &format!("{at}/{i}"), known) {
                record.push(m);
            }
        }
        (self.problems.len() == before).then_some(record)
    }

    pub(super) fn moves(&mut self, value: &Value) -> Option<Vec<RecordedMove>> {
        let items = self.list(value, "/moves", "moves")?;
        self.steps(items, "/moves", &["board", "direction"])
    }

    /// `start`, `directions`, `spawns`: the boards rebuilt move by move.
    pub(super) fn start(&mut self, map: &Map<String, Value>) -> Option<(Vec<RecordedMove>, Option<Tiles>)> {
        let before = self.problems.len();
        let start = map.get("start").and_then(|v| read_board(v, "/start", self.problems));
        let Some(directions) = map.get("directions") else {
            self.problems.push("/directions", "directions is required with start");
            return None;
        };
        let directions = self.list(directions, "/directions", "directions")?;
        let n = directions.len();
        let spawns = match map.get("spawns") {
            None => {
                self.problems.push("/spawns", "spawns is required with start");
                return None;
            }
            Some(Value::Array(s)) if s.len() == n || s.len() + 1 == n => s,
            Some(Value::Array(s)) => {
                self.problems.push(
                    "/spawns",
                    format!(
                        "{n} directions need {} or {n} spawns (one after each move), found {}",
                        n - 1,
                        s.len()
                    ),
                );
                return None;
            }
            Some(other) => {
                self.problems
                    .push("/spawns", format!("spawns must be an array, found {}", kind_of(other)));
                return None;
            }
        };
        let mut parsed = Vec::with_capacity(n);
        for (i, d) in directions.iter().enumerate() {
            if self.full() {
                break;
            }
            parsed.push(self.direction(Some(d), &format!("/directions/{i}")));
        }
        let mut cells = Vec::with_capacity(spawns.len());
        for (i, s) in spawns.iter().enumerate() {
            if self.full() {
                break;
            }
            cells.push(self.spawn(s, &format!("/spawns/{i}")));
        }
        if self.problems.len() > before {
            return None;
        }
        let mut board = start?;
        let mut record = Vec::with_capacity(n);
        for (i, d) in parsed.into_iter().enumerate() {
            let direction = d?;
            record.push(RecordedMove { board, direction });
            let Some((after, _)) = board.play(direction) else {
                // Reported with the other moves' problems by `check_record`.
                return Some((record, None));
            };
            let Some(&Some((cell, exponent))) = cells.get(i) else {
                break;
            };
            if after.exponents()[cell] != 0 {
                self.problems.push(
                    format!("/spawns/{i}"),
                    format!(
                        "row {}, column {} is not empty after move {i} ({direction}): a spawn goes to an empty cell",
                        cell / 4,
                        cell % 4
                    ),
                );
                return None;
            }
            board = after.with_exponent_at(cell, exponent);
        }
        Some((record, None))
    }

    /// `{"cell": 0-15, "value": 2 or 4}` as (cell, exponent).
    fn spawn(&mut self, value: &Value, at: &str) -> Option<(usize, u8)> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                at,
                format!(
                    "a spawn is an object {{\"cell\": 0-15, \"value\": 2 or 4}}, found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if key != "cell" && key != "value" {
                self.problems.push(
                    format!("{at}{}", pointer(&[key])),
                    format!("unknown field {key:?} (known fields: cell, value)"),
                );
            }
        }
        let cell = match obj.get("cell").map(|c| (c, c.as_u64())) {
            Some((_, Some(c))) if c < 16 => Some(c as usize),
            Some((c, _)) => {
                self.problems.push(
                    format!("{at}/cell"),
                    format!("cell must be a whole number from 0 to 15 (row-major, top-left 0), found {c}"),
                );
                None
            }
            None => {
                self.problems.push(format!("{at}/cell"), "cell is required");
                None
            }
        };
        let exponent = match obj.get("value").map(|v| (v, v.as_u64())) {
            Some((_, Some(2))) => Some(1),
            Some((_, Some(4))) => Some(2),
            Some((v, _)) => {
                self.problems
                    .push(format!("{at}/value"), format!("a spawned tile is 2 or 4, found {v}"));
                None
            }
            None => {
                self.problems.push(format!("{at}/value"), "value is required");
                None
            }
        };
        cell.zip(exponent)
    }

    /// A `/simulate` game record with `trace`: the trace's moves, checked against `start_board`; and its
    /// `final_board`, for the caller to check against the last move.
    pub(super) fn game(&mut self, value: &Value, contiguous: bool) -> Option<(Vec<RecordedMove>, Option<Tiles>)> {
        let Some(obj) = value.as_object() else {
            self.problems.push(
                "/game",
                format!(
                    "game must be one game of a /simulate answer (with trace), found {}",
                    kind_of(value)
                ),
            );
            return None;
        };
        for key in obj.keys() {
            if !GAME_RECORD_FIELDS.contains(&key.as_str()) {
                self.problems.push(
                    format!("/game{}", pointer(&[key])),
                    format!(
                        "unknown field {key:?} (a /simulate game record's fields: {})",
                        GAME_RECORD_FIELDS.join(", ")
                    ),
                );
            }
        }
        let start = obj
            .get("start_board")
            .and_then(|b| read_board(b, "/game/start_board", self.problems));
        let last = obj
            .get("final_board")
            .and_then(|b| read_board(b, "/game/final_board", self.problems));
        let Some(trace) = obj.get("trace") else {
            self.problems.push(
                "/game/trace",
                "the game has no trace: ask /simulate for \"trace\": true to review its games",
            );
            return None;
        };
        let items = self.list(trace, "/game/trace", "trace")?;
        let record = self.steps(items, "/game/trace", &["board", "direction", "value", "reward"])?;
        if let (true, Some(start), Some(first)) = (contiguous, start, record.first()) {
            if start != first.board {
                self.problems.push(
                    "/game/trace/0/board",
                    "the trace's first board is not the game's start_board",
                );
            }
        }
        Some((record, last))
    }
}
