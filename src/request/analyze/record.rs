//! The record of a game: the form it came in, its moves, and reading it whole — which form was given, its moves read
//! (by `reader`), then checked: every direction changes its board and, when the record is contiguous, every board is
//! the previous one after its move and one spawn.

use serde_json::{Map, Value};

use super::reader::RecordReader;
use super::RECORD_FIELDS;
use crate::engine::{Direction, Tiles};
use crate::request::read::pointer;
use crate::request::Problems;

/// The least number of moves a record holds.
pub const MIN_ANALYZE_MOVES: u64 = 1;

/// Problems read from a record before the rest is skipped (a record of 20,000 bad boards answers with a few).
pub const MAX_RECORD_PROBLEMS: usize = 50;

/// Which form the record came in: where each move's board and direction are in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordForm {
    /// `moves[i].board`, `moves[i].direction`.
    Moves,
    /// `start`, `directions[i]`, `spawns[i]`.
    Start,
    /// `game.trace[i].board`, `game.trace[i].direction`.
    Game,
}

impl RecordForm {
    /// The JSON pointer of move `i`'s board (for the start form, the spawn that made it).
    pub fn board_pointer(self, i: usize) -> String {
        match self {
            RecordForm::Moves => format!("/moves/{i}/board"),
            RecordForm::Start if i == 0 => "/start".to_owned(),
            RecordForm::Start => format!("/spawns/{}", i - 1),
            RecordForm::Game => format!("/game/trace/{i}/board"),
        }
    }

    /// The JSON pointer of move `i`'s direction.
    pub fn direction_pointer(self, i: usize) -> String {
        match self {
            RecordForm::Moves => format!("/moves/{i}/direction"),
            RecordForm::Start => format!("/directions/{i}"),
            RecordForm::Game => format!("/game/trace/{i}/direction"),
        }
    }
}

/// One move of a record: the board the player saw and the direction played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub board: Tiles,
    pub direction: Direction,
}

/// Why `next` is not `after` (a board right after a move) plus one spawn, or `None` when it is.
pub fn spawn_problem(after: &Tiles, next: &Tiles) -> Option<String> {
    let (a, n) = (after.exponents(), next.exponents());
    let changed: Vec<usize> = (0..16).filter(|&c| a[c] != n[c]).collect();
    let value = |e: u8| if e == 0 { 0 } else { 1u32 << e };
    match changed.as_slice() {
        [] => Some("no tile appeared after the move (every move is followed by one spawn)".to_owned()),
        [c] if a[*c] == 0 && (n[*c] == 1 || n[*c] == 2) => None,
        [c] => Some(format!(
            "row {}, column {} holds {} where the move left {} (a spawn is a 2 or a 4 on an empty cell)",
            c / 4,
            c % 4,
            value(n[*c]),
            value(a[*c])
        )),
        many => Some(format!(
            "{} cells differ from the board the move left, row {}, column {} first (a move is followed by one \
             spawn; a record with gaps says \"contiguous\": false)",
            many.len(),
            many[0] / 4,
            many[0] % 4
        )),
    }
}

/// Reads the record in whichever form it came, checks its length, each direction's legality and (when
/// `contiguous`) that each board follows from the previous one.
pub(super) fn read_record(
    map: &Map<String, Value>,
    max_moves: u64,
    contiguous: bool,
    problems: &mut Problems,
) -> Option<(Vec<RecordedMove>, RecordForm)> {
    let given: Vec<&str> = RECORD_FIELDS
        .iter()
        .copied()
        .filter(|f| map.contains_key(*f) && *f != "directions" && *f != "spawns")
        .collect();
    let form = match given.as_slice() {
        [one] => match *one {
            "moves" => RecordForm::Moves,
            "start" => RecordForm::Start,
            _ => RecordForm::Game,
        },
        [] if map.contains_key("directions") || map.contains_key("spawns") => {
            problems.push("/start", "start is required with directions and spawns");
            return None;
        }
        [] => {
            problems.push(
                "",
                "a game is required: moves, start with directions and spawns, or a /simulate game with trace",
            );
            return None;
        }
        [_, second, ..] => {
            problems.push(
                pointer(&[second]),
                format!("give one form of the game, found {}", given.join(" and ")),
            );
            return None;
        }
    };
    if form != RecordForm::Start {
        for extra in ["directions", "spawns"] {
            if map.contains_key(extra) {
                problems.push(
                    pointer(&[extra]),
                    format!("{extra} goes with start, not with {}", given[0]),
                );
            }
        }
    }
    let before = problems.len();
    let mut reader = RecordReader {
        problems,
        before,
        max_moves,
    };
    let (record, last) = match form {
        RecordForm::Moves => (reader.moves(map.get("moves")?)?, None),
        RecordForm::Start => reader.start(map)?,
        RecordForm::Game => reader.game(map.get("game")?, contiguous)?,
    };
    check_record(&record, form, contiguous, reader.problems);
    if let (Some(final_board), Some(m)) = (last, record.last()) {
        if contiguous {
            if let Some((after, _)) = m.board.play(m.direction) {
                if let Some(why) = spawn_problem(&after, &final_board) {
                    reader.problems.push(
                        "/game/final_board",
                        format!("the final board does not follow the trace's last move: {why}"),
                    );
                }
            }
        }
    }
    (reader.problems.len() == before).then_some((record, form))
}

/// Every direction legal on its board; with `contiguous`, every board the previous one after its move and a spawn.
fn check_record(record: &[RecordedMove], form: RecordForm, contiguous: bool, problems: &mut Problems) {
    let start = problems.len();
    let mut previous: Option<Tiles> = None;
    for (i, m) in record.iter().enumerate() {
        if problems.len() - start >= MAX_RECORD_PROBLEMS {
            break;
        }
        if let (true, Some(after)) = (contiguous, previous) {
            if let Some(why) = spawn_problem(&after, &m.board) {
                let what = match form {
                    RecordForm::Start => "the spawn does not fit the board the move left",
                    _ => "the board does not follow the previous move",
                };
                problems.push(form.board_pointer(i), format!("{what}: {why}"));
            }
        }
        previous = m.board.play(m.direction).map(|(after, _)| after);
        if previous.is_none() {
            problems.push(
                form.direction_pointer(i),
                format!("{} does nothing on this board (every move must change it)", m.direction),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiles(rows: [[i64; 4]; 4]) -> Tiles {
        Tiles::from_rows(&rows).expect("a board")
    }

    #[test]
    fn a_spawn_is_one_2_or_4_on_an_empty_cell() {
        let after = tiles([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        let spawned = tiles([[2, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert_eq!(spawn_problem(&after, &spawned), None);
        assert!(spawn_problem(&after, &after).is_some_and(|m| m.contains("no tile appeared")));
        let eight = tiles([[2, 0, 0, 8], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &eight).is_some_and(|m| m.contains("row 0, column 3 holds 8")));
        let two_spawns = tiles([[2, 2, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &two_spawns).is_some_and(|m| m.starts_with("2 cells differ")));
        let vanished = tiles([[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert!(spawn_problem(&after, &vanished).is_some());
    }
}
