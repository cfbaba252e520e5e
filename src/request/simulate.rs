//! `POST /simulate` and `advisor2048 simulate`: seeded self-play. The request (the games, their seed, the start
//! board and the search before every move), its bounds and defaults, its work ([`SimulateRequest::run`]) and its
//! answer ([`SimReport`]) meet here; the route and the command only carry them in and out (the route streams the
//! games, the command draws a progress bar).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::field::{self, Absent, Accepts, Field, FlagDefault};
use super::read::{body_object, read_board};
use super::{read_search, Problem, Problems, SearchBounds, SearchRequest, LOCAL_MAX_BUDGET, SEARCH};
use crate::engine::Tiles;
use crate::eval::Network;
use crate::search::{BudgetClock, StopHandle};
use crate::sim::{simulate_with_progress, GameRecord, Progress, SimConfig, SimReport};

/// `games`: how many (at most [`SimulateBounds::max_games`]).
pub const GAMES: Field = Field {
    name: "games",
    flag: "games",
    value_name: "N",
    help: "Number of games",
    accepts: Accepts::Whole { min: 1, max: u64::MAX },
    absent: Absent::Whole(1),
    flag_default: FlagDefault::Value("10"),
};
/// The largest `first_game`, 2^63 - 1: clients holding it in a signed 64-bit integer can send any index the server
/// accepts.
pub const MAX_FIRST_GAME: u64 = i64::MAX as u64;
/// `first_game`: at most [`MAX_FIRST_GAME`]; `first_game + games` must also stay within 64 bits.
pub const FIRST_GAME: Field = Field {
    name: "first_game",
    flag: "first-game",
    value_name: "K",
    help: "Index of the first game: play games K .. K+N-1 of the run (N from --games), so that chunks of one long \
           run, played apart and merged with `advisor2048 report`, are the games of the whole run",
    accepts: Accepts::Whole {
        min: 0,
        max: MAX_FIRST_GAME,
    },
    absent: Absent::Whole(0),
    flag_default: FlagDefault::Absent,
};
/// `seed` of the run (each move's search is seeded from it).
pub const SEED: Field = Field {
    name: "seed",
    flag: "seed",
    value_name: "SEED",
    help: "Seed of the run; game i uses a seed derived from it (reported per game)",
    accepts: Accepts::Whole { min: 0, max: u64::MAX },
    absent: Absent::Whole(0),
    flag_default: FlagDefault::Value("1"),
};
/// `max_moves` per game (at most [`SimulateBounds::max_moves`]).
pub const MAX_MOVES: Field = Field {
    name: "max_moves",
    flag: "max-moves",
    value_name: "N",
    help: "End each game after this many moves",
    accepts: Accepts::Whole { min: 1, max: u64::MAX },
    absent: Absent::Said("until game over"),
    flag_default: FlagDefault::Absent,
};
/// `until_tile`: end each game when it makes this tile.
pub const UNTIL_TILE: Field = Field {
    name: "until_tile",
    flag: "until-tile",
    value_name: "TILE",
    help: "End each game when it makes this tile (a power of two from 4 to 131072): a run that asks only whether \
           games reach it need not play on",
    accepts: Accepts::Whole { min: 4, max: 131_072 },
    absent: Absent::Said("until game over"),
    flag_default: FlagDefault::Absent,
};
/// `trace`: record every move.
pub const TRACE: Field = Field {
    name: "trace",
    flag: "trace",
    value_name: "",
    help: "Record every move (board, direction, value, reward) in the JSON output",
    accepts: Accepts::Bool,
    absent: Absent::Bool(false),
    flag_default: FlagDefault::Absent,
};
/// `threads` of a simulation: games played in parallel, each game's searches on one thread (more than
/// [`SearchBounds::max_threads`] are clamped to it).
pub const PARALLEL_GAMES: Field = Field {
    name: "threads",
    flag: "threads",
    value_name: "N",
    help: "Threads playing games in parallel (more than the CPUs count as the CPUs); the games do not depend on it",
    accepts: Accepts::Clamped { min: 1 },
    absent: Absent::Whole(1),
    flag_default: FlagDefault::Said("the number of CPUs"),
};

/// `budget_clock`: the clock a game's time budget is counted on.
pub const BUDGET_CLOCK: Field = Field {
    name: "budget_clock",
    flag: "budget-clock",
    value_name: "CLOCK",
    help: "The clock --budget-ms is counted on: wall, or cpu (each game thread's CPU time: a budget buys the same \
           play however busy the machine is; the summary's cpu_ms_per_move is held to it)",
    accepts: Accepts::Name {
        names: BudgetClock::NAMES,
    },
    absent: Absent::Name("wall"),
    flag_default: FlagDefault::Absent,
};

/// The fields of a simulation's run (beside its start `board` and the [`SEARCH`] before every move).
pub const SIMULATE: &[&Field] = &[
    &GAMES,
    &FIRST_GAME,
    &SEED,
    &MAX_MOVES,
    &UNTIL_TILE,
    &TRACE,
    &PARALLEL_GAMES,
    &BUDGET_CLOCK,
];

/// What a `/simulate` request may ask for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulateBounds {
    /// The search's bounds; its `max_threads` bounds the games played in parallel.
    pub search: SearchBounds,
    /// Games per request.
    pub max_games: u64,
    /// `max_moves` per game at most (a server's limit of moves per request).
    pub max_moves: u64,
    /// The largest time budget of each move's search.
    pub move_budget: Duration,
}

impl SimulateBounds {
    /// The command line's: no limit but the search's.
    pub fn local(network: bool) -> SimulateBounds {
        SimulateBounds {
            search: SearchBounds::local(network),
            max_games: u64::MAX,
            max_moves: u64::MAX,
            move_budget: LOCAL_MAX_BUDGET,
        }
    }
}

/// Limits over a whole run that the caller sets (a server's moves per request and wall-clock limit; the command
/// line's `--total-moves` and `--max-seconds`): a run that reaches one stops, its games cut short unfinished.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunLimits {
    pub total_moves: Option<u64>,
    pub time_limit: Option<Duration>,
}

/// `POST /simulate` and `advisor2048 simulate`: seeded self-play.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulateRequest {
    /// The board every game starts from; `None`: new games.
    pub start: Option<Tiles>,
    pub games: u64,
    /// Index of the first game: the request plays games `first_game .. first_game + games` of the run.
    pub first_game: u64,
    /// The run's seed (each move's search is seeded from it).
    pub seed: u64,
    pub max_moves: Option<u64>,
    /// End each game when its largest tile reaches this (a power of two).
    pub until_tile: Option<u32>,
    pub trace: bool,
    /// Games played in parallel: the request's `threads` (here they do not split one search, they play games).
    pub parallel_games: usize,
    /// Each move's search, on one thread. Bounded by depth unless the request gives a budget (then clamped to the
    /// per-move maximum): the same seed and settings then give the same games.
    pub search: SearchRequest,
}

impl SimulateRequest {
    /// Reads and validates a request, reporting every problem.
    pub fn from_json(body: &Value, bounds: &SimulateBounds) -> Result<SimulateRequest, Problems> {
        let mut problems = Problems::default();
        let mut known = vec!["board"];
        known.extend(field::names(&[SIMULATE, SEARCH]));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        // An invalid board is recorded in `problems`, so `finish` below refuses the request.
        let start = map.get("board").and_then(|v| read_board(v, "/board", &mut problems));
        let games = match GAMES.read_whole(map, &mut problems) {
            Some(g) if g > bounds.max_games => {
                problems.push(
                    GAMES.pointer(),
                    format!(
                        "games {g} is over the server's limit of {} (--max-sim-games)",
                        bounds.max_games
                    ),
                );
                None
            }
            g => g,
        }
        .unwrap_or(GAMES.absent_whole());
        let first_game = FIRST_GAME.read_whole(map, &mut problems).unwrap_or(0);
        if first_game.checked_add(games).is_none() {
            problems.push(
                FIRST_GAME.pointer(),
                format!("first_game {first_game} plus games {games} is past the last game index, 2^64 - 1"),
            );
        }
        let seed = SEED.read_whole(map, &mut problems).unwrap_or(SEED.absent_whole());
        let max_moves = match MAX_MOVES.read_whole(map, &mut problems) {
            Some(m) if m > bounds.max_moves => {
                problems.push(
                    MAX_MOVES.pointer(),
                    format!(
                        "max_moves {m} is over the server's limit of {} moves per request (--max-sim-moves)",
                        bounds.max_moves
                    ),
                );
                None
            }
            m => m,
        };
        let until_tile = match UNTIL_TILE.read_whole(map, &mut problems) {
            Some(t) if !t.is_power_of_two() => {
                problems.push(
                    UNTIL_TILE.pointer(),
                    format!("until_tile {t} is not a tile: a power of two from 4 to 131072"),
                );
                None
            }
            t => t.and_then(|t| u32::try_from(t).ok()),
        };
        let trace = TRACE.read_bool(map, &mut problems).unwrap_or(false);
        let max_parallel = bounds.search.max_threads;
        let parallel_games = PARALLEL_GAMES
            .read_clamped(map, max_parallel as u64, &mut problems)
            .map_or(1, |t| usize::try_from(t).unwrap_or(max_parallel));
        let search_bounds = SearchBounds {
            max_budget: bounds.search.max_budget.min(bounds.move_budget),
            budget_by_default: false,
            ..bounds.search
        };
        // Each game's searches run on one thread, seeded per move from the run's seed.
        let mut search = read_search(map, &search_bounds, false, &mut problems);
        if let (Some(clock), Some(search)) = (
            BUDGET_CLOCK.read_name::<BudgetClock>(map, &mut problems),
            search.as_mut(),
        ) {
            search.settings.run.budget_clock = clock;
        }
        let search = problems.finish(search)?;
        Ok(SimulateRequest {
            start,
            games,
            first_game,
            seed,
            max_moves,
            until_tile,
            trace,
            parallel_games,
            search,
        })
    }

    /// Plays the games with the request's evaluator (`network` is the `ntuple` evaluator's) within `limits`, until
    /// done or `stop` is tripped (games not yet started are left out, running ones are cut short), updating
    /// `progress` after every move; `on_game` sees each game as it ends. A missing network is a problem at the field
    /// that asked for it.
    pub fn run(
        &self,
        network: Option<&Arc<Network>>,
        limits: RunLimits,
        stop: &StopHandle,
        progress: &Progress,
        on_game: impl Fn(&GameRecord) + Sync,
    ) -> Result<SimReport, Problem> {
        let evaluator = self.search.evaluator.build(network)?;
        let config = SimConfig {
            start: self.start,
            first_game: self.first_game,
            max_moves: self.max_moves,
            until_tile: self.until_tile,
            threads: self.parallel_games,
            trace: self.trace,
            total_moves: limits.total_moves,
            time_limit: limits.time_limit,
            ..SimConfig::new(self.games, self.seed, self.search.settings.clone(), evaluator)
        };
        Ok(simulate_with_progress(&config, stop, progress, on_game))
    }
}
