//! `advisor2048 bench`: search speed on a fixed set of positions from real games (`benches/positions.txt`,
//! written by `bench --generate`): positions per second, nodes per second, milliseconds per position. With
//! `--review-moves N`: the time to play one seeded game of up to N moves against the time to review it
//! (`POST /analyze`'s work) at the same settings, both on one thread. With `--odds`: what `"odds": true` adds to a
//! request at the default settings, on each position (docs/odds.md).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;

use super::request::{parse_board, Body};
use super::{OneSearchArgs, SearchArgs, ONE_SEARCH_FLAGS};
use advisor2048::engine::Tiles;
use advisor2048::eval::AnyEvaluator;
use advisor2048::request::analyze::{AnalyzeRequest, RecordForm, RecordedMove};
use advisor2048::request::SearchRequest;
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use advisor2048::sim::{simulate, SimConfig};

/// The fixed positions: hex boards, one per line, from seeded self-play (early, middle and late game).
pub const POSITIONS: &str = include_str!("../../benches/positions.txt");

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub one: OneSearchArgs,
    /// A file of positions (hex or JSON rows, one per line) instead of the built-in set.
    #[arg(long)]
    pub positions: Option<std::path::PathBuf>,
    /// Search each position this many times and keep the fastest (less noise).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Instead of benchmarking, print N positions from seeded self-play (tuned profile, depth 3).
    #[arg(long, value_name = "N")]
    pub generate: Option<usize>,
    /// Instead of searching the positions, play one seeded game of up to N moves at these settings (one thread), then
    /// review it at the same settings, and print both times and their ratio.
    #[arg(long, value_name = "N")]
    pub review_moves: Option<u64>,
    /// Seed of --generate and --review-moves.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Instead of the search speed, measure what `"odds": true` adds per position: to /best-move at the default
    /// settings (the chances read from its own search) and to /evaluate (the default play's search, then the chances).
    #[arg(long)]
    pub odds: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Loads positions: one board per non-empty, non-comment line.
pub fn load_positions(text: &str) -> anyhow::Result<Vec<Tiles>> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
        .map(|(i, l)| parse_board(l).with_context(|| format!("position {}", i + 1)))
        .collect()
}

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    if let Some(n) = args.generate {
        for board in generate(n, args.seed) {
            println!("{board}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let positions = match &args.positions {
        Some(path) => load_positions(&std::fs::read_to_string(path)?)?,
        None => load_positions(POSITIONS)?,
    };
    let flags = &ONE_SEARCH_FLAGS;
    let mut body = Body::default();
    args.search.fill(&mut body);
    args.one.fill(&mut body);
    let json = body.finish().map_err(|p| flags.invalid(p))?;
    let request = SearchRequest::from_json(&json, &args.search.bounds()).map_err(|p| flags.invalid(p))?;
    let settings = request.settings.clone();
    let evaluator = args.search.evaluator(&request.evaluator, flags)?;
    if let Some(moves) = args.review_moves {
        return review_bench(moves, args.seed, request, &settings, evaluator, args.json);
    }
    if args.odds {
        return odds_bench(&positions, args);
    }
    let mut times = Vec::with_capacity(positions.len());
    let mut nodes = 0u64;
    let mut total = Duration::ZERO;
    for tiles in &positions {
        let mut best = Duration::MAX;
        let mut position_nodes = 0;
        for _ in 0..args.repeat.max(1) {
            let start = Instant::now();
            let outcome = search(tiles, &evaluator, &settings, &StopHandle::new());
            best = best.min(start.elapsed());
            // The same on every repeat: the search is deterministic.
            position_nodes = outcome.stats.nodes;
        }
        nodes += position_nodes;
        total += best;
        times.push(best.as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let secs = total.as_secs_f64();
    let figures = serde_json::json!({
        "positions": positions.len(),
        "profile": settings.profile.as_str(),
        "depth": settings.depth.to_string(),
        "threads": settings.run.threads,
        "total_s": secs,
        "positions_per_s": positions.len() as f64 / secs,
        "nodes": nodes,
        "nodes_per_s": nodes as f64 / secs,
        "ms_per_position_median": pct(0.5),
        "ms_per_position_p95": pct(0.95),
        "ms_per_position_max": pct(1.0),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        println!(
            "{} positions, profile {}, {}, {} thread(s): {:.2} s",
            positions.len(),
            settings.profile,
            settings.depth_words(),
            settings.run.threads,
            secs
        );
        println!("  positions/s   {:>14.2}", positions.len() as f64 / secs);
        println!("  nodes/s       {:>14.0}  ({} nodes)", nodes as f64 / secs, nodes);
        println!(
            "  ms/position   median {:.2}, p95 {:.2}, max {:.2}",
            pct(0.5),
            pct(0.95),
            pct(1.0)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Plays one seeded game of up to `moves` moves at `settings` on one thread, reviews it at the same settings, and
/// prints both times.
fn review_bench(
    moves: u64,
    seed: u64,
    request: SearchRequest,
    settings: &SearchSettings,
    evaluator: AnyEvaluator,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut settings = settings.clone();
    settings.run.threads = 1;
    let config = SimConfig {
        trace: true,
        max_moves: Some(moves),
        ..SimConfig::new(1, seed, settings.clone(), evaluator.clone())
    };
    let started = Instant::now();
    let report = simulate(&config, &StopHandle::new(), |_| {});
    let play = started.elapsed();
    let game = report.games.first().context("the game was not played")?;
    let record: Vec<RecordedMove> = game
        .trace
        .iter()
        .flatten()
        .map(|step| RecordedMove {
            board: step.board,
            direction: step.direction,
        })
        .collect();
    if record.is_empty() {
        anyhow::bail!("the game had no move to review");
    }
    let review = AnalyzeRequest {
        record,
        form: RecordForm::Game,
        contiguous: true,
        odds: false,
        search: SearchRequest {
            settings: settings.clone(),
            ..request
        },
    };
    let started = Instant::now();
    let summary = review.review_with(&evaluator, None, &StopHandle::new(), None, |_| {});
    let reviewed = started.elapsed();
    let ratio = reviewed.as_secs_f64() / play.as_secs_f64().max(1e-9);
    let figures = serde_json::json!({
        "moves": game.moves,
        "max_tile": game.max_tile,
        "profile": settings.profile.as_str(),
        "depth": settings.depth.to_string(),
        "play_s": play.as_secs_f64(),
        "review_s": reviewed.as_secs_f64(),
        "review_over_play": ratio,
        "accuracy": summary.accuracy,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        println!(
            "{} moves (largest tile {}), profile {}, depth {}, one thread: play {:.2} s, review {:.2} s, review/play {:.2}",
            game.moves,
            game.max_tile,
            settings.profile,
            settings.depth,
            play.as_secs_f64(),
            reviewed.as_secs_f64(),
            ratio
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What `"odds": true` adds per position, at the default settings: the chances read from a finished default-play
/// search (/best-move's extra work) and the default play's search plus the chances (/evaluate's), each the fastest
/// of `--repeat` runs.
fn odds_bench(positions: &[Tiles], args: &BenchArgs) -> anyhow::Result<ExitCode> {
    use advisor2048::request::odds::{answer, default_play, odds_of};
    let network = args.search.network.load()?.context("odds need the learned network")?;
    let source = args.search.network.odds(Some(&network))?;
    let model = source.as_ref().map_err(|why| anyhow::anyhow!("{why}"))?.clone();
    let evaluator = advisor2048::eval::EvaluatorKind::NTuple.with_network(Some(&network), &[])?;
    let (mut search_ms, mut read_ms, mut evaluate_ms) = (Vec::new(), Vec::new(), Vec::new());
    let stop = StopHandle::new();
    for tiles in positions {
        let (mut s, mut r, mut e) = (f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..args.repeat.max(1) {
            let start = Instant::now();
            let outcome = search(tiles, &evaluator, &default_play(), &stop);
            s = s.min(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            std::hint::black_box(odds_of(tiles, &outcome, &model));
            r = r.min(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            std::hint::black_box(answer(tiles, None, Some(&network), &source, &stop).ok());
            e = e.min(start.elapsed().as_secs_f64() * 1e3);
        }
        search_ms.push(s);
        read_ms.push(r);
        evaluate_ms.push(e);
    }
    let summary = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let pct = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        serde_json::json!({"median": pct(0.5), "p95": pct(0.95), "max": pct(1.0), "mean": v.iter().sum::<f64>() / v.len() as f64})
    };
    let figures = serde_json::json!({
        "positions": positions.len(),
        "default_search_ms": summary(&mut search_ms),
        "best_move_added_ms": summary(&mut read_ms),
        "evaluate_added_ms": summary(&mut evaluate_ms),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        println!(
            "{} positions, default play (profile learned, {}), one thread, ms per position:",
            positions.len(),
            advisor2048::request::odds::default_play().depth_words()
        );
        for (name, key) in [
            ("the default search", "default_search_ms"),
            ("/best-move + odds adds", "best_move_added_ms"),
            ("/evaluate + odds adds", "evaluate_added_ms"),
        ] {
            let f = &figures[key];
            println!(
                "  {name:<24} mean {:.4}, median {:.4}, p95 {:.4}, max {:.4}",
                f["mean"].as_f64().unwrap_or(0.0),
                f["median"].as_f64().unwrap_or(0.0),
                f["p95"].as_f64().unwrap_or(0.0),
                f["max"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `n` positions from seeded self-play games (tuned profile, depth 3, the library's game loop), spread evenly over
/// each game.
fn generate(n: usize, seed: u64) -> Vec<Tiles> {
    let games = 3;
    let per_game = n.div_ceil(games);
    let settings = SearchSettings {
        depth: Depth::Plies(3),
        ..Profile::Tuned.settings()
    };
    let evaluator = advisor2048::eval::AnyEvaluator::Tuned(advisor2048::eval::TunedEvaluator::default());
    let config = SimConfig {
        trace: true,
        ..SimConfig::new(games as u64, seed, settings, evaluator)
    };
    let report = simulate(&config, &StopHandle::new(), |_| {});
    let mut out = Vec::new();
    for game in &report.games {
        let mut history: Vec<Tiles> = game.trace.iter().flatten().map(|step| step.board).collect();
        history.push(game.final_board);
        for k in 0..per_game {
            out.push(history[k * (history.len() - 1) / per_game.max(1)]);
        }
    }
    out.truncate(n);
    out
}
