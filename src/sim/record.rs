//! The records of a run: each game's [`GameRecord`] (scores, milestones, boards, the optional trace), serialized as
//! `advisor2048 simulate --json` and `POST /simulate` print them (boards as rows of tile values, directions by name,
//! durations as `elapsed_ms`). They read back from the same JSON (`Deserialize`), so that the reports of a run played
//! in chunks can be merged ([`SimReport::merge`](super::SimReport::merge)).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::{Direction, Tiles};

/// The tiles whose first appearance a game records and whose reach rates a summary reports: the engine's milestones.
pub use crate::engine::MILESTONES;

/// One game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Position of the game in the run (0-based).
    pub index: u64,
    /// The game's seed: [`derive_seed`](crate::engine::rng::derive_seed)`(run seed, index)`.
    pub seed: u64,
    /// Points gained: the sum of the merge rewards of the moves played (the start board's own score not included).
    pub score: u64,
    /// Largest tile on the final board.
    pub max_tile: u32,
    /// Moves played.
    pub moves: u64,
    /// For each of [`MILESTONES`] the game reached: the number of moves played when the largest tile first was at
    /// least that tile (0: already on the start board). In increasing tile order.
    pub reached: Vec<Milestone>,
    /// The board the game started from (after the two opening spawns of a new game).
    #[serde(serialize_with = "rows", deserialize_with = "from_rows")]
    pub start_board: Tiles,
    /// The board when the game ended (after the last spawn).
    #[serde(serialize_with = "rows", deserialize_with = "from_rows")]
    pub final_board: Tiles,
    /// False when the stop handle cut the game short.
    pub finished: bool,
    /// True when the final board has no legal move (false for a game ended by `max_moves` or the stop handle).
    pub game_over: bool,
    /// Every move, when the config asked for a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TraceStep>>,
    /// Wall-clock time spent on this game (searches, moves and spawns).
    #[serde(rename = "elapsed_ms", serialize_with = "millis", deserialize_with = "from_millis")]
    pub elapsed: Duration,
    /// CPU time of the thread that played this game (the time it waited for a core left out): on an idle machine
    /// about `elapsed`. 0 in a record written before it was kept.
    #[serde(
        rename = "cpu_ms",
        default,
        serialize_with = "millis",
        deserialize_with = "from_millis"
    )]
    pub cpu: Duration,
    /// Moves played at each search depth reached (plies -> moves): what a time budget did over the game. A greedy
    /// move counts at 1; a move whose search completed no depth (a budget too small for one ply) at 1, as played.
    /// Left out of the JSON when empty (a game of no move).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub depths: BTreeMap<u32, u64>,
}

impl GameRecord {
    /// Whether the game's largest tile reached `tile`.
    pub fn reached(&self, tile: u32) -> bool {
        self.max_tile >= tile
    }
}

/// The move at which a game first held a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Milestone {
    pub tile: u32,
    /// Moves played when the tile first appeared (0: it was on the start board).
    pub moves: u64,
}

/// One move of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    /// The board before the move (after the previous spawn).
    #[serde(serialize_with = "rows", deserialize_with = "from_rows")]
    pub board: Tiles,
    /// The direction the search chose.
    #[serde(serialize_with = "direction", deserialize_with = "from_direction")]
    pub direction: Direction,
    /// The search's value of that direction.
    pub value: f64,
    /// The move's merge reward.
    pub reward: u64,
}

/// Appends every milestone that `max_tile` reaches and `reached` does not hold yet.
pub(super) fn note_milestones(reached: &mut Vec<Milestone>, max_tile: u32, moves: u64) {
    while let Some(&tile) = MILESTONES.get(reached.len()) {
        if max_tile < tile {
            break;
        }
        reached.push(Milestone { tile, moves });
    }
}

fn rows<S: Serializer>(tiles: &Tiles, s: S) -> Result<S::Ok, S::Error> {
    tiles.to_rows().serialize(s)
}

fn direction<S: Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.as_str())
}

pub(super) fn millis<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

fn from_rows<'de, D: Deserializer<'de>>(d: D) -> Result<Tiles, D::Error> {
    let rows = Vec::<Vec<i64>>::deserialize(d)?;
    Tiles::from_rows(&rows).map_err(|e| serde::de::Error::custom(format!("a board: {e}")))
}

fn from_direction<'de, D: Deserializer<'de>>(d: D) -> Result<Direction, D::Error> {
    let name = String::deserialize(d)?;
    name.parse().map_err(serde::de::Error::custom)
}

pub(super) fn from_millis<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let ms = f64::deserialize(d)?;
    Duration::try_from_secs_f64(ms / 1000.0)
        .map_err(|_| serde::de::Error::custom(format!("elapsed_ms must be a duration in ms, found {ms}")))
}
