//! Self-play through the public API: determinism across thread counts, rule integrity of every recorded move,
//! summary statistics against hand-computed values, early stop, and the wire shape.
//!
//! Every search here is bounded by depth (1 or 2 plies), never by time.

use std::collections::BTreeMap;
use std::time::Duration;

use advisor2048::engine::rng::{derive_seed, Rng};
use advisor2048::engine::Tiles;
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use advisor2048::sim::{
    median, move_seed, new_game, play_game, simulate, wilson_interval, GameRecord, MergeError, Milestone, Progress,
    SimConfig, SimReport, Summary, MILESTONES,
};

fn config(profile: Profile, depth: u32, games: u64, seed: u64) -> SimConfig {
    let settings = SearchSettings {
        depth: Depth::Plies(depth),
        ..profile.settings()
    };
    let evaluator = settings
        .profile
        .evaluator()
        .with_network(Some(shipped_network()), &[])
        .unwrap();
    SimConfig::new(games, seed, settings, evaluator)
}

/// The built-in network, for profile `learned` (loaded once).
fn shipped_network() -> &'static std::sync::Arc<advisor2048::eval::Network> {
    static NET: std::sync::OnceLock<std::sync::Arc<advisor2048::eval::Network>> = std::sync::OnceLock::new();
    NET.get_or_init(|| std::sync::Arc::new(advisor2048::eval::ntuple::shipped::load().unwrap()))
}

/// The record without its timing, which is the only thing allowed to differ between two runs.
fn untimed(games: &[GameRecord]) -> Vec<GameRecord> {
    games
        .iter()
        .map(|g| GameRecord {
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
            ..g.clone()
        })
        .collect()
}

#[test]
fn same_seed_same_games_on_one_and_two_threads() {
    // `sample_cells` makes the search draw random numbers, so per-move seeding is exercised too.
    let mut one = config(Profile::Tuned, 2, 6, 42);
    one.settings.sample_cells = Some(3);
    one.max_moves = Some(400);
    one.trace = true;
    let two = SimConfig {
        threads: 2,
        ..one.clone()
    };
    let a = simulate(&one, &StopHandle::new(), |_| {});
    let b = simulate(&two, &StopHandle::new(), |_| {});
    assert_eq!(untimed(&a.games), untimed(&b.games));
    assert_eq!(
        a.games.iter().map(|g| g.index).collect::<Vec<_>>(),
        (0..6).collect::<Vec<_>>()
    );
    for g in &a.games {
        assert_eq!(g.seed, derive_seed(42, g.index));
        assert!(g.finished);
    }
    // A different run seed gives different games.
    let other = simulate(&SimConfig { seed: 43, ..one }, &StopHandle::new(), |_| {});
    assert_ne!(untimed(&a.games), untimed(&other.games));
}

#[test]
fn one_game_alone_equals_the_same_game_in_a_run() {
    let cfg = SimConfig {
        max_moves: Some(200),
        ..config(Profile::Classic, 2, 3, 9)
    };
    let run = simulate(&cfg, &StopHandle::new(), |_| {});
    let alone = play_game(&cfg, 2, &StopHandle::new(), &Progress::new());
    assert_eq!(untimed(&[alone]), untimed(&run.games[2..]));
}

/// The chunk of the run `cfg` of `games` games from game `first_game`.
fn chunk(cfg: &SimConfig, first_game: u64, games: u64) -> SimReport {
    let cfg = SimConfig {
        first_game,
        games,
        ..cfg.clone()
    };
    simulate(&cfg, &StopHandle::new(), |_| {})
}

#[test]
fn chunks_of_a_run_merge_into_the_whole_run() {
    let whole_cfg = SimConfig {
        max_moves: Some(300),
        ..config(Profile::Tuned, 2, 5, 21)
    };
    let whole = simulate(&whole_cfg, &StopHandle::new(), |_| {});
    let (head, tail) = (chunk(&whole_cfg, 0, 2), chunk(&whole_cfg, 2, 3));
    assert_eq!(tail.games.iter().map(|g| g.index).collect::<Vec<_>>(), vec![2, 3, 4]);
    assert_eq!(untimed(&tail.games), untimed(&whole.games[2..]));
    // In any order, the merged report is the whole run's: games and every statistic but the timings.
    let elapsed = tail.summary.elapsed + head.summary.elapsed;
    let merged = SimReport::merge([tail, head]).unwrap();
    assert_eq!(untimed(&merged.games), untimed(&whole.games));
    assert_eq!(merged.summary.elapsed, elapsed);
    let comparable = |s: &Summary| Summary {
        elapsed: Duration::ZERO,
        moves_per_second: 0.0,
        ms_per_move: 0.0,
        cpu_ms_per_move: 0.0,
        ..s.clone()
    };
    assert_eq!(comparable(&merged.summary), comparable(&whole.summary));
}

#[test]
fn a_chunk_cut_short_gives_way_to_the_same_game_replayed() {
    // The first chunk stops halfway through game 1.
    let cfg = config(Profile::Tuned, 1, 3, 8);
    let whole = simulate(&cfg, &StopHandle::new(), |_| {});
    let cut = simulate(
        &SimConfig {
            total_moves: Some(whole.games[0].moves + whole.games[1].moves / 2),
            ..cfg.clone()
        },
        &StopHandle::new(),
        |_| {},
    );
    assert_eq!(
        cut.games.iter().map(|g| (g.index, g.finished)).collect::<Vec<_>>(),
        vec![(0, true), (1, false)]
    );
    let rest = simulate(
        &SimConfig {
            first_game: 1,
            games: 2,
            ..cfg.clone()
        },
        &StopHandle::new(),
        |_| {},
    );
    // Either order: the finished copy of game 1 wins.
    for merged in [
        SimReport::merge([cut.clone(), rest.clone()]).unwrap(),
        SimReport::merge([rest.clone(), cut.clone()]).unwrap(),
    ] {
        assert_eq!(untimed(&merged.games), untimed(&whole.games));
        assert_eq!(merged.summary.finished, 3);
    }
    // The same report twice counts once, its time too.
    let twice = SimReport::merge([whole.clone(), whole.clone()]).unwrap();
    assert_eq!(untimed(&twice.games), untimed(&whole.games));
    assert_eq!(twice.summary.total_moves, whole.summary.total_moves);
    assert_eq!(twice.summary.elapsed, whole.summary.elapsed);
    // The cut chunk's time counts (it was spent), once: merged again beside its merged report, it adds none.
    let merged = SimReport::merge([cut.clone(), rest.clone()]).unwrap();
    assert_eq!(merged.summary.elapsed, cut.summary.elapsed + rest.summary.elapsed);
    assert_eq!(
        SimReport::merge([cut.clone(), rest.clone(), merged.clone()]).unwrap(),
        merged
    );
}

#[test]
fn a_run_grows_by_merging_new_chunks_into_its_merged_report() {
    let cfg = SimConfig {
        max_moves: Some(200),
        ..config(Profile::Tuned, 1, 4, 13)
    };
    let (a, b, c) = (chunk(&cfg, 0, 2), chunk(&cfg, 2, 1), chunk(&cfg, 3, 1));
    let ab = SimReport::merge([a.clone(), b.clone()]).unwrap();
    assert_eq!(ab.summary.elapsed, a.summary.elapsed + b.summary.elapsed);
    // The old chunks, their merged report and a new chunk, in any order: each chunk's time once.
    let abc = SimReport::merge([a.clone(), b.clone(), ab.clone(), c.clone()]).unwrap();
    assert_eq!(abc.summary.games, 4);
    assert_eq!(
        abc.summary.elapsed,
        a.summary.elapsed + b.summary.elapsed + c.summary.elapsed
    );
    assert_eq!(
        SimReport::merge([c.clone(), ab.clone(), b.clone(), a.clone()]).unwrap(),
        abc
    );
    assert_eq!(SimReport::merge([ab.clone(), c.clone()]).unwrap(), abc);
    // A report merged with a part of it is the report.
    assert_eq!(
        SimReport::merge([b.clone(), ab.clone()]).unwrap(),
        SimReport::merge([ab.clone()]).unwrap()
    );
}

#[test]
fn reports_of_different_runs_do_not_merge() {
    let cfg = config(Profile::Tuned, 1, 2, 8);
    let run = simulate(&cfg, &StopHandle::new(), |_| {});
    let other_seed = simulate(&SimConfig { seed: 9, ..cfg.clone() }, &StopHandle::new(), |_| {});
    assert_eq!(
        SimReport::merge([run.clone(), other_seed.clone()]),
        Err(MergeError::DifferentGames {
            index: 0,
            first_seed: run.games[0].seed,
            second_seed: other_seed.games[0].seed,
        })
    );
    // Same seeds, other settings: the same games play out differently.
    let deeper = simulate(
        &SimConfig {
            games: 1,
            ..config(Profile::Tuned, 2, 2, 8)
        },
        &StopHandle::new(),
        |_| {},
    );
    assert_ne!(deeper.games[0].score, run.games[0].score);
    assert_eq!(
        SimReport::merge([run.clone(), deeper.clone()]),
        Err(MergeError::DifferentResults {
            index: 0,
            first_score: run.games[0].score,
            second_score: deeper.games[0].score,
        })
    );
}

#[test]
fn a_report_reads_back_from_its_json() {
    let cfg = SimConfig {
        max_moves: Some(30),
        trace: true,
        ..config(Profile::Tuned, 1, 2, 3)
    };
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    let text = serde_json::to_string(&report).unwrap();
    let read: SimReport = serde_json::from_str(&text).unwrap();
    // Durations go through milliseconds as floats: equal to within a microsecond.
    for (a, b) in read.games.iter().zip(&report.games) {
        assert!(a.elapsed.abs_diff(b.elapsed) < Duration::from_micros(1));
    }
    assert_eq!(untimed(&read.games), untimed(&report.games));
    assert_eq!(serde_json::to_string(&read).unwrap().len(), text.len());
    // A board no game can hold is refused, with the cell.
    let mut bad: serde_json::Value = serde_json::from_str(&text).unwrap();
    bad["games"][0]["final_board"][1][2] = 3.into();
    let err = serde_json::from_value::<SimReport>(bad).unwrap_err().to_string();
    assert!(err.contains("/1/2: 3 is not a tile value"), "{err}");
}

/// Replays `game` with the engine and the search and checks every recorded fact.
fn replay(cfg: &SimConfig, game: &GameRecord) {
    let trace = game.trace.as_ref().expect("traced");
    let mut rng = Rng::new(game.seed);
    let start = cfg.start.unwrap_or_else(|| new_game(&mut rng));
    assert_eq!(game.start_board, start);
    if cfg.start.is_none() {
        assert_eq!(start.empty_count(), 14, "a new game has two tiles");
    }
    let mut settings = cfg.settings.clone();
    settings.run.threads = 1;
    let mut board = start;
    let mut score = 0;
    let mut max_tile = board.max_tile();
    let mut reached: Vec<Milestone> = MILESTONES
        .iter()
        .filter(|&&t| max_tile >= t)
        .map(|&tile| Milestone { tile, moves: 0 })
        .collect();
    for (k, step) in trace.iter().enumerate() {
        assert_eq!(
            step.board, board,
            "game {} move {k}: recorded board differs from the replay",
            game.index
        );
        let (after, reward) = board
            .play(step.direction)
            .unwrap_or_else(|| panic!("game {} move {k}: {} is illegal", game.index, step.direction));
        assert_eq!(step.reward, reward);
        let outcome = search(
            &board,
            &cfg.evaluator,
            &SearchSettings {
                seed: move_seed(game.seed, k as u64),
                ..settings.clone()
            },
            &StopHandle::new(),
        );
        assert_eq!(
            outcome.best,
            Some(step.direction),
            "game {} move {k}: not the search's choice",
            game.index
        );
        assert_eq!(outcome.values[step.direction.index()], Some(step.value));
        score += reward;
        if after.max_tile() > max_tile {
            max_tile = after.max_tile();
            for &tile in MILESTONES.iter().filter(|&&t| max_tile >= t) {
                if !reached.iter().any(|m| m.tile == tile) {
                    reached.push(Milestone {
                        tile,
                        moves: k as u64 + 1,
                    });
                }
            }
        }
        board = after.spawn(&mut rng).expect("room after a move");
    }
    assert_eq!(game.final_board, board);
    assert_eq!(game.score, score);
    assert_eq!(game.score, trace.iter().map(|s| s.reward).sum::<u64>());
    assert_eq!(game.moves, trace.len() as u64);
    assert_eq!(game.max_tile, board.max_tile());
    assert_eq!(game.reached, reached);
    assert_eq!(game.game_over, board.is_game_over());
    if cfg.max_moves.is_none_or(|m| game.moves < m) {
        assert!(game.game_over, "game {} ended early without a reason", game.index);
    }
}

#[test]
fn every_traced_move_replays_with_the_engine_and_the_search() {
    // Complete games (to game over) with both profiles.
    for profile in Profile::ALL {
        let cfg = SimConfig {
            trace: true,
            threads: 2,
            ..config(profile, 2, 3, 2048)
        };
        let report = simulate(&cfg, &StopHandle::new(), |_| {});
        assert_eq!(report.games.len(), 3);
        for game in &report.games {
            assert!(game.finished && game.game_over);
            assert!(game.moves > 50, "a depth-2 game lasts a while");
            replay(&cfg, game);
        }
    }
}

#[test]
fn games_continue_from_a_start_board_with_huge_tiles() {
    // 65536 and 131072 are reachable from here; milestones already on the board count at move 0.
    let start = Tiles::from_rows(&[
        [32768, 32768, 16384, 2],
        [2048, 4096, 8192, 16384],
        [2, 4, 8, 16],
        [0, 0, 0, 0],
    ])
    .unwrap();
    let cfg = SimConfig {
        start: Some(start),
        max_moves: Some(25),
        trace: true,
        ..config(Profile::Tuned, 1, 2, 5)
    };
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    assert_eq!(report.games.len(), 2, "both games are played");
    for game in &report.games {
        assert_eq!(game.start_board, start);
        let on_the_board: Vec<Milestone> = [2048, 4096, 8192, 16384, 32768]
            .into_iter()
            .map(|tile| Milestone { tile, moves: 0 })
            .collect();
        assert_eq!(game.reached[..5], on_the_board[..]);
        replay(&cfg, game);
    }
}

#[test]
fn max_moves_ends_games_as_finished() {
    let cfg = SimConfig {
        max_moves: Some(7),
        ..config(Profile::Tuned, 1, 4, 3)
    };
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    assert!(report.games.iter().all(|g| g.finished && !g.game_over && g.moves == 7));
    assert_eq!(report.summary.finished, 4);
    assert_eq!(report.summary.total_moves, 28);
}

#[test]
fn on_game_sees_every_game_once() {
    let seen = std::sync::Mutex::new(Vec::new());
    let cfg = SimConfig {
        threads: 2,
        max_moves: Some(30),
        ..config(Profile::Tuned, 1, 5, 1)
    };
    let report = simulate(&cfg, &StopHandle::new(), |g| seen.lock().unwrap().push(g.index));
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    assert_eq!(report.games.len(), 5);
}

#[test]
fn a_tripped_stop_handle_starts_nothing() {
    let stop = StopHandle::new();
    stop.stop();
    let cfg = config(Profile::Tuned, 1, 3, 1);
    let report = simulate(&cfg, &stop, |_| {});
    assert!(report.games.is_empty());
    assert_eq!(report.summary.games, 0);
    assert_eq!(report.summary.mean_score, None);
    // A game asked to play under a tripped handle ends at once, unfinished, on its opening board.
    let game = play_game(&cfg, 0, &stop, &Progress::new());
    assert!(!game.finished && !game.game_over);
    assert_eq!(game.moves, 0);
    assert_eq!(game.final_board, new_game(&mut Rng::new(derive_seed(1, 0))));
}

#[test]
fn the_move_limit_cuts_the_run_exactly_and_returns_the_partial_game_unfinished() {
    // Depth 3 games last thousands of moves: a limit of 150 moves over the run ends inside the first game.
    let cfg = SimConfig {
        trace: true,
        total_moves: Some(150),
        ..config(Profile::Tuned, 3, 3, 11)
    };
    let partial = simulate(&cfg, &StopHandle::new(), |_| {});
    assert_eq!(partial.games.len(), 1, "the games after the limit are not started");
    let game = &partial.games[0];
    assert!(!game.finished && !game.game_over);
    assert_eq!(game.moves, 150);
    assert_eq!(partial.summary.games, 1);
    assert_eq!(partial.summary.finished, 0);
    assert_eq!(partial.summary.median_score, None);
    assert_eq!(partial.summary.total_moves, 150);
    // What was played is exactly the start of the same game played without interruption.
    let prefix = SimConfig {
        max_moves: Some(game.moves),
        total_moves: None,
        ..cfg.clone()
    };
    let whole = simulate(&prefix, &StopHandle::new(), |_| {});
    let expected = GameRecord {
        finished: false,
        ..whole.games[0].clone()
    };
    assert_eq!(untimed(&partial.games), untimed(&[expected]));
    // On several threads the limit still holds exactly, over all games together.
    let parallel = SimConfig {
        threads: 2,
        trace: false,
        ..cfg
    };
    let report = simulate(&parallel, &StopHandle::new(), |_| {});
    assert_eq!(report.summary.total_moves, 150);
    assert!(report.games.iter().all(|g| !g.finished));
}

#[test]
fn a_move_limit_above_what_the_games_play_changes_nothing() {
    // Greedy games end at game over after a few hundred moves.
    let cfg = config(Profile::Tuned, 1, 3, 4);
    let free = simulate(&cfg, &StopHandle::new(), |_| {});
    assert!(free.games.iter().all(|g| g.finished && g.game_over));
    // Exactly the moves the games play: nothing is cut (finding a game over does not use up the limit).
    let limited = SimConfig {
        total_moves: Some(free.summary.total_moves),
        ..cfg
    };
    let report = simulate(&limited, &StopHandle::new(), |_| {});
    assert_eq!(untimed(&report.games), untimed(&free.games));
}

#[test]
fn the_time_limit_cuts_the_search_under_way() {
    // Without the cut-off, 29 plies from this board take far longer than any test may wait: only the run's time
    // limit can end the first move's search. An expired limit starts nothing.
    let long = SimConfig {
        start: Some(Tiles::from_hex("13222442a7b8c9d1").unwrap()),
        time_limit: Some(Duration::from_millis(300)),
        ..config(Profile::Tuned, 29, 2, 1)
    };
    let long = SimConfig {
        settings: SearchSettings {
            prob_cutoff: 0.0,
            ..long.settings.clone()
        },
        ..long
    };
    let started = std::time::Instant::now();
    let report = simulate(&long, &StopHandle::new(), |_| {});
    // A generous bound for a loaded machine: the point is that it ends at all (uncut, it runs for hours).
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    assert_eq!(report.games.len(), 1);
    assert!(!report.games[0].finished);
    assert_eq!(report.games[0].moves, 0);
    let expired = SimConfig {
        time_limit: Some(Duration::ZERO),
        ..long
    };
    assert!(simulate(&expired, &StopHandle::new(), |_| {}).games.is_empty());
}

/// A hand-made record (only the fields the summary reads matter).
fn record(index: u64, score: u64, max_tile: u32, moves: u64, finished: bool) -> GameRecord {
    GameRecord {
        index,
        seed: index,
        score,
        max_tile,
        moves,
        reached: Vec::new(),
        start_board: Tiles::default(),
        final_board: Tiles::default(),
        finished,
        game_over: finished,
        trace: None,
        elapsed: Duration::from_millis(10 * moves),
        cpu: Duration::from_millis(9 * moves),
        depths: [(3, moves)].into_iter().collect(),
    }
}

#[test]
fn summary_statistics_match_hand_computed_values() {
    let games = [
        record(0, 100, 1024, 10, true),
        record(1, 400, 2048, 20, true),
        record(2, 300, 4096, 30, true),
        record(3, 200, 2048, 40, true),
        record(4, 9999, 8192, 100, false), // cut short: counts for moves and time only
    ];
    let s = Summary::from_games(&games, Duration::from_secs(2));
    assert_eq!((s.games, s.finished), (5, 4));
    assert_eq!(s.mean_score, Some(250.0)); // (100 + 400 + 300 + 200) / 4
    assert_eq!(s.median_score, Some(250.0)); // sorted 100 200 300 400: (200 + 300) / 2
    assert_eq!((s.min_score, s.max_score), (Some(100), Some(400)));
    assert_eq!(s.max_tile_histogram, BTreeMap::from([(1024, 1), (2048, 2), (4096, 1)]));
    assert_eq!(s.total_moves, 200);
    // Every game's moves at its depths, unfinished games included.
    assert_eq!(s.depth_histogram, BTreeMap::from([(3, 200)]));
    assert_eq!(s.moves_per_second, 100.0); // 200 moves in 2 s
    assert!((s.ms_per_move - 10.0).abs() < 1e-12); // 2000 ms of game time over 200 moves

    let rate = |tile| *s.reach_rate(tile).unwrap();
    assert_eq!((rate(2048).reached, rate(2048).games, rate(2048).rate), (3, 4, 0.75));
    assert_eq!((rate(4096).reached, rate(4096).rate), (1, 0.25));
    assert_eq!((rate(8192).reached, rate(8192).rate), (0, 0.0));
    // Wilson, z = 1.959964: 3 of 4 -> centre (0.75 + 0.4801) / 1.9604 = 0.6275, half 0.3269.
    assert_close(rate(2048).ci_low, 0.300_642);
    assert_close(rate(2048).ci_high, 0.954_413);
    // 1 of 4 -> [0.045587, 0.699358]; 0 of 4 -> [0, 0.489891].
    assert_close(rate(4096).ci_low, 0.045_587);
    assert_close(rate(4096).ci_high, 0.699_358);
    assert_eq!(rate(8192).ci_low, 0.0);
    assert_close(rate(8192).ci_high, 0.489_891);
    assert_eq!(s.reach.iter().map(|r| r.tile).collect::<Vec<_>>(), MILESTONES);
}

#[test]
fn median_and_wilson_edge_cases() {
    assert_eq!(median(&[7]), Some(7.0));
    assert_eq!(median(&[1, 2, 9]), Some(2.0));
    assert_eq!(median(&[]), None);
    assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
    // 5 of 10: p = 0.5, z^2/n = 0.384146 -> 0.5 -+ 1.959964 x sqrt(0.025 + 0.009604) / 1.384146.
    let (low, high) = wilson_interval(5, 10);
    assert_close(low, 0.236_593);
    assert_close(high, 0.763_407);
    // 0 of 10 and 10 of 10 are mirror images, with exact 0 and 1 at the closed ends.
    assert_eq!(wilson_interval(0, 10).0, 0.0);
    assert_close(wilson_interval(0, 10).1, 0.277_533);
    assert_close(wilson_interval(10, 10).0, 0.722_467);
    assert_eq!(wilson_interval(10, 10).1, 1.0);
    // 94 of 100.
    assert_close(wilson_interval(94, 100).0, 0.875_232);
    assert_close(wilson_interval(94, 100).1, 0.972_214);
}

fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-6, "{actual} is not {expected}");
}

#[test]
fn json_shape_uses_rows_direction_names_and_milliseconds() {
    let cfg = SimConfig {
        max_moves: Some(3),
        trace: true,
        ..config(Profile::Tuned, 1, 1, 1)
    };
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    let json = serde_json::to_value(&report).unwrap();
    let game = &json["games"][0];
    for key in [
        "index",
        "seed",
        "score",
        "max_tile",
        "moves",
        "reached",
        "start_board",
        "final_board",
        "finished",
    ] {
        assert!(game.get(key).is_some(), "missing {key}");
    }
    assert!(game["elapsed_ms"].is_f64());
    assert_eq!(game["final_board"].as_array().unwrap().len(), 4);
    assert_eq!(game["final_board"][0].as_array().unwrap().len(), 4);
    let step = &game["trace"][0];
    assert!(["up", "down", "left", "right"].contains(&step["direction"].as_str().unwrap()));
    assert!(step["board"][3][3].is_u64() && step["value"].is_f64() && step["reward"].is_u64());
    let summary = &json["summary"];
    assert_eq!(summary["games"], 1);
    assert!(summary["elapsed_ms"].is_f64() && summary["moves_per_second"].is_f64());
    assert_eq!(summary["reach"][0]["tile"], 2048);
    assert!(summary["max_tile_histogram"].is_object());
    // Without a trace the key is left out.
    let untraced = simulate(&SimConfig { trace: false, ..cfg }, &StopHandle::new(), |_| {});
    assert!(serde_json::to_value(&untraced).unwrap()["games"][0]
        .get("trace")
        .is_none());
}

#[test]
fn the_command_line_prints_the_library_report() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args([
            "simulate",
            "--games",
            "3",
            "--seed",
            "5",
            "--threads",
            "2",
            "--depth",
            "2",
            "--max-moves",
            "40",
        ])
        .args(["--json", "--trace"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    // No --profile: the command line's default is `learned` with the built-in network.
    let cfg = SimConfig {
        max_moves: Some(40),
        trace: true,
        ..config(Profile::Learned, 2, 3, 5)
    };
    // Through text both ways, as floats parse back within an ulp of what was printed.
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    let mut expected: serde_json::Value = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    // Only the timings may differ.
    let mut printed = printed;
    for json in [&mut printed, &mut expected] {
        for game in json["games"].as_array_mut().unwrap() {
            game["elapsed_ms"] = 0.into();
            game["cpu_ms"] = 0.into();
        }
        for key in ["elapsed_ms", "moves_per_second", "ms_per_move", "cpu_ms_per_move"] {
            json["summary"][key] = 0.into();
        }
    }
    assert_eq!(printed, expected);
}

/// Runs the binary with `args`, expecting success; its standard output.
fn advisor(args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn the_report_command_merges_chunks_played_with_first_game() {
    let dir = std::env::temp_dir().join(format!("advisor2048-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = [
        "simulate",
        "--seed",
        "5",
        "--depth",
        "1",
        "--profile",
        "tuned",
        "--json",
    ];
    let whole: SimReport = serde_json::from_slice(&advisor(&[&run[..], &["--games", "4"]].concat())).unwrap();
    let mut files = Vec::new();
    for (first, games) in [("3", "1"), ("0", "3")] {
        let path = dir.join(format!("chunk-{first}.json"));
        std::fs::write(
            &path,
            advisor(&[&run[..], &["--first-game", first, "--games", games]].concat()),
        )
        .unwrap();
        files.push(path.to_str().unwrap().to_owned());
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let merged: SimReport = serde_json::from_slice(&advisor(&[&["report", "--json"][..], &files].concat())).unwrap();
    assert_eq!(untimed(&merged.games), untimed(&whole.games));
    assert_eq!(merged.summary.mean_score, whole.summary.mean_score);
    let table = String::from_utf8(advisor(&[&["report"][..], &files].concat())).unwrap();
    assert!(
        table.starts_with("4 games (indices 0 to 3) from 2 report(s)\n"),
        "{table}"
    );
    let mean = format!("score: mean {:.0},", whole.summary.mean_score.unwrap());
    assert!(table.contains(&mean), "{table}");
    // A gap is named on stderr; a file that is no report is refused with its name.
    let first_only = dir.join("first.json");
    let report = SimReport {
        games: whole.games[..1].to_vec(),
        summary: whole.summary.clone(),
    };
    std::fs::write(&first_only, serde_json::to_string(&report).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["report", files[0], first_only.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "note: games 1..2 are in no report\n"
    );
    let not_a_report = dir.join("other.json");
    std::fs::write(&not_a_report, "{\"direction\": \"up\"}").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["report", files[1], not_a_report.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("other.json: not a report of `advisor2048 simulate --json`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `report --runs` pools several runs: game 5 of two runs is two games, a run's chunk beside the run's own report
/// counts once, and the summary is the one of all the games; without `--runs` two runs are refused.
#[test]
fn the_report_command_pools_several_runs() {
    let dir = std::env::temp_dir().join(format!("advisor2048-report-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let play = |seed: &str, first: &str, games: &str, name: &str| {
        let out = advisor(&[
            "simulate",
            "--seed",
            seed,
            "--depth",
            "1",
            "--profile",
            "tuned",
            "--first-game",
            first,
            "--games",
            games,
            "--json",
        ]);
        let path = dir.join(name);
        std::fs::write(&path, &out).unwrap();
        (
            path.to_str().unwrap().to_owned(),
            serde_json::from_slice::<SimReport>(&out).unwrap(),
        )
    };
    let (a, run_a) = play("5", "0", "3", "a.json");
    let (b, run_b) = play("6", "0", "3", "b.json");
    let (b_tail, _) = play("6", "1", "2", "b-tail.json");
    let pooled: SimReport = serde_json::from_slice(&advisor(&["report", "--runs", "--json", &a, &b, &b_tail])).unwrap();
    assert_eq!(pooled.summary.games, 6);
    let mut expected: Vec<GameRecord> = run_a.games.iter().chain(&run_b.games).cloned().collect();
    expected.sort_by_key(|g| (g.index, g.seed));
    assert_eq!(untimed(&pooled.games), untimed(&expected));
    let mean = expected.iter().map(|g| g.score as f64).sum::<f64>() / 6.0;
    let pooled_mean = pooled.summary.mean_score.expect("finished games");
    assert!((pooled_mean - mean).abs() < 1e-9, "{pooled_mean} against {mean}");
    // The chunk's time is in the run's report already.
    assert_eq!(pooled.summary.elapsed, run_a.summary.elapsed + run_b.summary.elapsed);
    // Without --runs, two runs' game 0 are refused.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(["report", &a, &b])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("two different games") && stderr.contains("--runs"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `simulate` with `args` and with `ADVISOR_CHUNK` set to `chunk` (or unset), as a pod of the Kubernetes Job
/// (deploy/k8s/simulate-job.yaml) runs it.
fn simulate_as_pod(args: &[&str], chunk: Option<&str>) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"));
    command.arg("simulate").args(args).env_remove("ADVISOR_CHUNK");
    if let Some(chunk) = chunk {
        command.env("ADVISOR_CHUNK", chunk);
    }
    command.output().expect("the binary runs")
}

/// A report's JSON without its timings, the only thing two plays of the same games may differ in.
fn untimed_json(mut report: serde_json::Value) -> serde_json::Value {
    for game in report["games"].as_array_mut().expect("games") {
        game["elapsed_ms"] = 0.into();
        game["cpu_ms"] = 0.into();
    }
    for key in ["elapsed_ms", "moves_per_second", "ms_per_move", "cpu_ms_per_move"] {
        report["summary"][key] = 0.into();
    }
    report
}

/// A report's table without its first line (which names the run or the files) and its timings.
fn table_body(table: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(table)
        .lines()
        .skip(1)
        .filter(|line| !line.starts_with("moves: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_run_played_as_indexed_chunks_and_merged_by_report_is_the_run_played_at_once() {
    let dir = std::env::temp_dir().join(format!("advisor2048-chunks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = ["--seed", "11", "--depth", "1"];
    let whole = simulate_as_pod(&[&run[..], &["--games", "6", "--json"]].concat(), None);
    assert!(whole.status.success(), "{}", String::from_utf8_lossy(&whole.stderr));
    // Three pods of an Indexed Job: the same command, each told its index by ADVISOR_CHUNK.
    let mut files = Vec::new();
    for index in 0..3u64 {
        let pod = simulate_as_pod(
            &[&run[..], &["--games", "2", "--json"]].concat(),
            Some(&index.to_string()),
        );
        assert!(pod.status.success(), "{}", String::from_utf8_lossy(&pod.stderr));
        // The pod's log is its chunk: nothing else may be printed.
        assert!(pod.stderr.is_empty(), "{}", String::from_utf8_lossy(&pod.stderr));
        let chunk: SimReport = serde_json::from_slice(&pod.stdout).expect("a chunk is a report");
        let indices: Vec<u64> = chunk.games.iter().map(|g| g.index).collect();
        assert_eq!(indices, [2 * index, 2 * index + 1], "chunk {index} plays its own games");
        let path = dir.join(format!("chunk-{index}.json"));
        std::fs::write(&path, &pod.stdout).unwrap();
        files.push(path.to_str().unwrap().to_owned());
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let merged = advisor(&[&["report", "--json"][..], &files].concat());

    // The same games: index, seed, score, moves, tiles and boards, and the same summary.
    let whole_report: SimReport = serde_json::from_slice(&whole.stdout).unwrap();
    let merged_report: SimReport = serde_json::from_slice(&merged).unwrap();
    let key = |g: &GameRecord| (g.index, g.seed, g.score, g.moves, g.max_tile);
    assert_eq!(
        merged_report.games.iter().map(key).collect::<Vec<_>>(),
        whole_report.games.iter().map(key).collect::<Vec<_>>()
    );
    assert_eq!(merged_report.games.len(), 6);
    let seeds: std::collections::BTreeSet<u64> = whole_report.games.iter().map(|g| g.seed).collect();
    assert_eq!(seeds.len(), 6, "six different games");
    assert_eq!(
        untimed_json(serde_json::from_slice(&merged).unwrap()),
        untimed_json(serde_json::from_slice(&whole.stdout).unwrap()),
        "the merged chunks, games and summary, are the run played at once"
    );
    // And the table `report` prints is the one `simulate` prints for the whole run, but for its first line and time.
    let table = simulate_as_pod(&[&run[..], &["--games", "6", "--no-progress"]].concat(), None);
    assert!(table.status.success());
    let merged_table = advisor(&[&["report"][..], &files].concat());
    assert_eq!(table_body(&merged_table), table_body(&table.stdout));
    assert!(table_body(&table.stdout).iter().any(|l| l.starts_with("score: mean ")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_chunk_flag_and_its_variable_pick_the_same_games_and_refuse_what_they_cannot_play() {
    let run = [
        "--seed",
        "3",
        "--games",
        "2",
        "--profile",
        "tuned",
        "--depth",
        "1",
        "--max-moves",
        "20",
        "--json",
    ];
    let by_flag = simulate_as_pod(&[&run[..], &["--chunk", "4"]].concat(), None);
    let by_variable = simulate_as_pod(&run, Some("4"));
    let by_first_game = simulate_as_pod(&[&run[..], &["--first-game", "8"]].concat(), None);
    let games = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        untimed_json(serde_json::from_slice(&out.stdout).unwrap())["games"].clone()
    };
    let expected = games(&by_first_game);
    assert_eq!(expected[0]["index"], 8);
    assert_eq!(games(&by_flag), expected, "--chunk 4 of 2 games is --first-game 8");
    assert_eq!(games(&by_variable), expected, "ADVISOR_CHUNK=4 is --chunk 4");

    // (extra arguments, ADVISOR_CHUNK, exit code, what stderr says)
    let refused: [(&[&str], Option<&str>, i32, &str); 4] = [
        (
            &["--chunk", "1", "--first-game", "2"],
            None,
            2,
            "the argument '--chunk <INDEX>' cannot be used with '--first-game <K>'",
        ),
        (&[], Some("two"), 2, "invalid value 'two' for '--chunk <INDEX>'"),
        (&[], Some("-1"), 2, "invalid value '-1' for '--chunk <INDEX>'"),
        (
            &["--chunk", "4611686018427387904"],
            None,
            1,
            "--chunk 4611686018427387904 with --games 2 starts past the largest first game index, \
             9223372036854775807",
        ),
    ];
    for (extra, chunk, code, message) in refused {
        let out = simulate_as_pod(&[&run[..], extra].concat(), chunk);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{extra:?} {chunk:?}: {stderr}");
        assert!(stderr.contains(message), "{extra:?} {chunk:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// (label, profile, depth, games, seed, max_moves).
type SeededRun = (&'static str, Profile, u32, u64, u64, Option<u64>);

/// The seeded runs whose games were saved in `tests/fixtures/seeded_games.jsonl` before self-play's per-move path was
/// rewritten (issue 31): (label, profile, depth, games, seed, max_moves). Full greedy games with the built-in
/// network, then capped games at 3 and 5 plies and with the heuristic evaluators.
const SEEDED_RUNS: [SeededRun; 5] = [
    ("learned-1ply", Profile::Learned, 1, 4, 7, None),
    ("learned-3ply", Profile::Learned, 3, 2, 11, Some(300)),
    ("learned-5ply", Profile::Learned, 5, 1, 13, Some(30)),
    ("tuned-1ply", Profile::Tuned, 1, 2, 5, Some(3000)),
    ("classic-2ply", Profile::Classic, 2, 1, 3, Some(400)),
];

/// 64-bit FNV-1a, to fingerprint a long trace in the fixture file.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One fixture line: the run's label, the network it was played with (`learned` runs), the game's untimed record
/// without its trace, the directions played (one letter each), and a fingerprint of the whole trace as JSON (boards,
/// directions, values, rewards: floats print exactly).
fn fixture_line(label: &str, network: Option<&str>, game: &GameRecord) -> serde_json::Value {
    let trace = game.trace.as_deref().expect("traced run");
    let directions: String = trace
        .iter()
        .map(|s| s.direction.to_string().chars().next().unwrap())
        .collect();
    let trace_json = serde_json::to_string(trace).unwrap();
    // The fixture predates the per-game depth counts (a depth-bounded game's are all at its depth).
    let record = GameRecord {
        trace: None,
        elapsed: Duration::ZERO,
        depths: Default::default(),
        ..game.clone()
    };
    let mut line = serde_json::json!({
        "run": label,
        "record": record,
        "directions": directions,
        "trace_fnv1a": format!("{:016x}", fnv1a(trace_json.as_bytes())),
    });
    if let Some(network) = network {
        line["network"] = network.into();
    }
    // The fixture predates the per-game CPU time too (a timing, like elapsed_ms).
    if let Some(record) = line["record"].as_object_mut() {
        record.remove("cpu_ms");
    }
    line
}

/// The same seeds give the same games as when the fixture file was written: every move, value and reward of the
/// saved games (written before self-play's per-move path was made fast, and played the same by the fast path).
/// Each `learned` game names the built-in network it was played with. `ADVISOR_BLESS_FIXTURES=1` rewrites the
/// file: only ever from code known to play the same games, e.g. right after shipping a new network (until then
/// this test fails and says so).
#[test]
fn seeded_games_match_the_games_saved_before_the_fast_path() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seeded_games.jsonl");
    let bless = std::env::var_os("ADVISOR_BLESS_FIXTURES").is_some();
    let shipped = advisor2048::eval::ntuple::shipped::CHECKSUM;
    let mut lines = Vec::new();
    for (label, profile, depth, games, seed, max_moves) in SEEDED_RUNS {
        let cfg = SimConfig {
            max_moves,
            trace: true,
            threads: 2,
            ..config(profile, depth, games, seed)
        };
        let report = simulate(&cfg, &StopHandle::new(), |_| {});
        assert_eq!(report.games.len() as u64, games);
        let network = (profile == Profile::Learned).then_some(shipped);
        lines.extend(report.games.iter().map(|g| fixture_line(label, network, g)));
    }
    if bless {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let saved = std::fs::read_to_string(&path).expect("the fixture file");
    let saved: Vec<serde_json::Value> = saved
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .collect();
    for want in &saved {
        if let Some(played) = want.get("network").and_then(|n| n.as_str()) {
            assert_eq!(
                played, shipped,
                "run {} was played with network {played}, the build ships {shipped}: record the fixtures again \
                 with ADVISOR_BLESS_FIXTURES=1 (from code that plays the same games)",
                want["run"]
            );
        }
    }
    assert_eq!(saved.len(), lines.len(), "games in {}", path.display());
    for (got, want) in lines.iter().zip(&saved) {
        assert_eq!(got, want, "run {} game {}", want["run"], want["record"]["index"]);
    }
}

#[test]
fn the_depth_histogram_counts_every_move_at_the_depth_its_search_reached() {
    // Depth-bounded: every move at the requested depth (greedy moves at 1).
    for depth in [1, 3] {
        let mut cfg = config(Profile::Tuned, depth, 2, 9);
        cfg.max_moves = Some(60);
        let report = simulate(&cfg, &StopHandle::new(), |_| {});
        assert_eq!(report.summary.depth_histogram, BTreeMap::from([(depth, 120)]));
        for g in &report.games {
            assert_eq!(g.depths, BTreeMap::from([(depth, 60)]));
        }
    }
    // The learned profile searches an odd depth: 2 plies is searched as 3.
    let mut cfg = config(Profile::Learned, 2, 1, 9);
    cfg.max_moves = Some(30);
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    assert_eq!(report.summary.depth_histogram, BTreeMap::from([(3, 30)]));
}

#[test]
fn a_budgeted_game_counts_every_move_at_some_depth_up_to_the_requested_one() {
    let mut cfg = config(Profile::Tuned, 5, 1, 12);
    cfg.max_moves = Some(40);
    cfg.settings.run.time_budget = Some(Duration::from_millis(2));
    let report = simulate(&cfg, &StopHandle::new(), |_| {});
    let h = &report.summary.depth_histogram;
    assert_eq!(h.values().sum::<u64>(), 40, "{h:?}");
    assert!(h.keys().all(|d| [1, 3, 5].contains(d)), "{h:?}");
}
