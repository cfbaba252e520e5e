//! `POST /simulate` and `advisor2048 simulate`: seeded self-play. The request (the games, their seed, the start
//! board and the search before every move), its bounds and defaults, its work ([`SimulateRequest::run`]) and its
//! answer ([`SimReport`]) meet here; the route and the command only carry them in and out (the route streams the
//! games, the command draws a progress bar).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::read::{body_object, read_board, read_bool, read_u64};
use super::{read_search, Problem, Problems, SearchBounds, SearchRequest, LOCAL_MAX_BUDGET, SEARCH_FIELDS};
use crate::engine::Tiles;
use crate::eval::Network;
use crate::search::StopHandle;
use crate::sim::{simulate_with_progress, GameRecord, Progress, SimConfig, SimReport};

/// `games`: the fewest.
pub const MIN_GAMES: u64 = 1;
/// `games` when not given.
pub const DEFAULT_GAMES: u64 = 1;
/// `first_game`: the largest (2^63 - 1, so that clients holding it in a signed 64-bit integer can send any index
/// the server accepts); `first_game + games` must also stay within 64 bits.
pub const MAX_FIRST_GAME: u64 = i64::MAX as u64;
/// `seed` when not given.
pub const DEFAULT_SIM_SEED: u64 = 0;
/// `max_moves`: the fewest moves per game.
pub const MIN_MAX_MOVES: u64 = 1;

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
        let mut known = vec!["board", "games", "first_game", "seed", "max_moves", "trace"];
        known.extend(SEARCH_FIELDS.iter().filter(|f| **f != "seed"));
        let Some(map) = body_object(body, &known, &mut problems) else {
            return Err(problems);
        };
        // An invalid board is recorded in `problems`, so `finish` below refuses the request.
        let start = map.get("board").and_then(|v| read_board(v, "/board", &mut problems));
        let games = match read_u64(map, "games", MIN_GAMES, u64::MAX, &mut problems).unwrap_or(DEFAULT_GAMES) {
            g if g > bounds.max_games => {
                problems.push(
                    "/games",
                    format!(
                        "games {g} is over the server's limit of {} (--max-sim-games)",
                        bounds.max_games
                    ),
                );
                DEFAULT_GAMES
            }
            g => g,
        };
        let first_game = read_u64(map, "first_game", 0, MAX_FIRST_GAME, &mut problems).unwrap_or(0);
        if first_game.checked_add(games).is_none() {
            problems.push(
                "/first_game",
                format!("first_game {first_game} plus games {games} is past the last game index, 2^64 - 1"),
            );
        }
        let seed = read_u64(map, "seed", 0, u64::MAX, &mut problems).unwrap_or(DEFAULT_SIM_SEED);
        let max_moves = match read_u64(map, "max_moves", MIN_MAX_MOVES, u64::MAX, &mut problems) {
            Some(m) if m > bounds.max_moves => {
                problems.push(
                    "/max_moves",
                    format!(
                        "max_moves {m} is over the server's limit of {} moves per request (--max-sim-moves)",
                        bounds.max_moves
                    ),
                );
                None
            }
            m => m,
        };
        let trace = read_bool(map, "trace", &mut problems).unwrap_or(false);
        // Here `seed` is the games' seed, not a search field: it was read once, above.
        let mut search_fields = map.clone();
        search_fields.remove("seed");
        let search_bounds = SearchBounds {
            max_budget: bounds.search.max_budget.min(bounds.move_budget),
            budget_by_default: false,
            ..bounds.search
        };
        let search = read_search(&search_fields, &search_bounds, &mut problems);
        let mut search = problems.finish(search)?;
        // The search fields' `threads` is the games played in parallel; each game searches on one thread.
        let parallel_games = std::mem::replace(&mut search.settings.threads, 1);
        Ok(SimulateRequest {
            start,
            games,
            first_game,
            seed,
            max_moves,
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
            threads: self.parallel_games,
            trace: self.trace,
            total_moves: limits.total_moves,
            time_limit: limits.time_limit,
            ..SimConfig::new(self.games, self.seed, self.search.settings.clone(), evaluator)
        };
        Ok(simulate_with_progress(&config, stop, progress, on_game))
    }
}
