//! `advisor2048 odds-fit` and `advisor2048 odds-check`: fit the reach-odds model on the default play's games, and
//! check a model against games it was not fitted on, or the fit itself by cross-fitting runs (docs/odds.md).
//!
//! Both play the default play's games themselves (seeded, `--threads` at a time), or read games already played
//! (`--games-from`: `advisor2048 simulate --trace --json` reports of the default play, for example the chunks of one
//! run), sample their positions ([`advisor2048::sim::odds`]) and hand them to the library: the fit
//! ([`advisor2048::train::odds`]) or the reliability table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};

use advisor2048::engine::rng::derive_seed;
use advisor2048::eval::odds::{self as model, FitSummary, OddsModel};
use advisor2048::eval::{EvaluatorKind, Network};
use advisor2048::request::odds::{default_fitted_for, default_play};
use advisor2048::search::StopHandle;
use advisor2048::sim::odds::{
    play_positions, positions_of, reliability, reliability_of, LabelledPosition, Reliability,
};
use advisor2048::sim::{Progress, SimConfig, SimReport};
use advisor2048::train::odds::{fit, Example};

use super::signals::{stop_on_signals, STOP_THEN_QUIT};
use super::NetworkArgs;

/// Where the games come from.
#[derive(clap::Args, Debug, Clone)]
pub struct GamesArgs {
    /// Games to play: games 0 .. N-1 of the run seeded with --seed (of each run, with several seeds).
    #[arg(long)]
    pub games: u64,
    /// Seed of the run (game i uses a seed derived from it, as `simulate` derives it). Several seeds, comma-separated
    /// (--seed 1001,2002), name several runs of --games games each, fitted or checked together.
    #[arg(long = "seed", value_name = "SEED", value_delimiter = ',', required = true)]
    pub seeds: Vec<u64>,
    /// Threads playing games in parallel (the games do not depend on it).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Take each move of a game with probability 1/K (the positions of a game share its outcome: sparse sampling
    /// loses little).
    #[arg(long, value_name = "K")]
    pub sample_every: u64,
    /// Read these games instead of playing them: `advisor2048 simulate --trace --json` reports of the default play
    /// (profile learned at its default depth, the same network), e.g. the chunks of a run, each game once; --seed
    /// must name the runs they come from and --games the number of games they hold of each (checked: every game's
    /// seed must be the one a --seed gives its index).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub games_from: Vec<PathBuf>,
}

/// Fit the reach-odds model on the default play's games and write it.
#[derive(clap::Args, Debug)]
pub struct OddsFitArgs {
    #[command(flatten)]
    pub games: GamesArgs,
    /// Where to write the model [default: nets/odds-<network checksum>.json].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// Check a reach-odds model against games it was not fitted on: per tile, the reliability table, the calibration
/// error and the Brier score against the base rate's.
#[derive(clap::Args, Debug)]
pub struct OddsCheckArgs {
    #[command(flatten)]
    pub games: GamesArgs,
    /// Print the table as JSON (docs/plot_odds.py draws it).
    #[arg(long)]
    pub json: bool,
    /// Check the fit itself, not a model: with two or more runs (--seed), fit a model on all runs but one, as
    /// `odds-fit` fits, check it on that one, for each run in turn, and give the table of every run's games, each
    /// predicted by a model that never saw it (it checks no model file: no --odds-model).
    #[arg(long)]
    pub cross_fit: bool,
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// The network, which must be a file's (its checksum names the play).
fn network(args: &NetworkArgs) -> anyhow::Result<(Arc<Network>, String)> {
    let Some(net) = args.load()? else {
        bail!("reach odds predict the learned play: they need a network (not --weights none)");
    };
    let Some(checksum) = net.info.as_ref().map(|i| i.checksum().to_owned()) else {
        bail!("the network has no checksum: reach odds are fitted for a network loaded from a weight file");
    };
    Ok((net, checksum))
}

/// One run's seed and the labelled positions of its games.
type Run = (u64, Vec<LabelledPosition>);

/// The labelled positions of the games `args` names, run by run (in --seed's order, each run's seed with its
/// positions), and the number of finished games they came from.
fn positions(args: &GamesArgs, net: &Arc<Network>) -> anyhow::Result<(Vec<Run>, u64)> {
    if args.sample_every == 0 {
        bail!("--sample-every must be at least 1");
    }
    if let Some(seed) = args
        .seeds
        .iter()
        .enumerate()
        .find_map(|(k, s)| args.seeds[..k].contains(s).then_some(s))
    {
        bail!("--seed names the run {seed} twice: name each run once");
    }
    if !args.games_from.is_empty() {
        let mut runs: Vec<Run> = args.seeds.iter().map(|&s| (s, Vec::new())).collect();
        let mut games = 0;
        // Where each game was read, by (run, index): each game of each run once.
        let mut read: BTreeMap<(u64, u64), &Path> = BTreeMap::new();
        for path in &args.games_from {
            let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            let report: SimReport = serde_json::from_slice(&text)
                .with_context(|| format!("{} is not a `simulate --json` report", path.display()))?;
            for game in &report.games {
                let run = run_of_game(args, path, game.index, game.seed)?;
                if let Some(first) = read.insert((run, game.index), path) {
                    bail!(
                        "game {} of the run {run} is in {} and in {}: give each game of a run once (its chunks, or \
                         the report they were merged into, not both)",
                        game.index,
                        first.display(),
                        path.display()
                    );
                }
                if game.trace.is_none() {
                    bail!(
                        "{}: game {} has no trace (play it with --trace)",
                        path.display(),
                        game.index
                    );
                }
                if let Some((_, positions)) = runs.iter_mut().find(|(s, _)| *s == run) {
                    positions.extend(positions_of(game, args.sample_every));
                }
                games += u64::from(game.game_over);
            }
        }
        for &run in &args.seeds {
            let held = read.keys().filter(|(r, _)| *r == run).count() as u64;
            if held != args.games {
                bail!(
                    "the reports hold {held} games of the run {run}, not the {} --games names: name the number of \
                     games they hold of each run",
                    args.games
                );
            }
        }
        return Ok((runs, games));
    }
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let evaluator = EvaluatorKind::NTuple
        .with_network(Some(net), &[])
        .context("the learned evaluator")?;
    let stop = StopHandle::new();
    stop_on_signals(stop.clone(), STOP_THEN_QUIT);
    let started = Instant::now();
    let mut runs = Vec::with_capacity(args.seeds.len());
    let mut games = 0;
    for &run in &args.seeds {
        let config = SimConfig {
            threads: args.threads.max(1),
            ..SimConfig::new(args.games, run, default_play(), evaluator.clone())
        };
        let progress = Progress::new();
        let done = std::sync::atomic::AtomicU64::new(0);
        let (positions, finished) = play_positions(&config, args.sample_every, &stop, &progress, |game| {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            eprintln!(
                "run {run}, game {} ({n}/{}): max tile {}, {} moves, {:.0} s in all",
                game.index,
                args.games,
                game.max_tile,
                game.moves,
                started.elapsed().as_secs_f64()
            );
        });
        if stop.is_stopped() {
            bail!("stopped before the games were played");
        }
        runs.push((run, positions));
        games += finished;
    }
    Ok((runs, games))
}

/// The positions of `runs` as one set, in the order a fit reads them: by game index, then the game's seed, then move.
fn pooled<'a>(runs: impl IntoIterator<Item = &'a Run>) -> Vec<LabelledPosition> {
    let mut all: Vec<LabelledPosition> = runs.into_iter().flat_map(|(_, p)| p.iter().copied()).collect();
    all.sort_by_key(|p| (p.game, p.game_seed, p.move_number));
    all
}

/// The run (of those `args` names) that played a game read from `path`: the one whose seed gives the game's index
/// the game's seed (so the model records the runs it was fitted on, and two runs' games of one index are never
/// counted as one game's positions).
fn run_of_game(args: &GamesArgs, path: &Path, index: u64, seed: u64) -> anyhow::Result<u64> {
    if let Some(&run) = args.seeds.iter().find(|&&run| derive_seed(run, index) == seed) {
        return Ok(run);
    }
    let runs = args.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let named = if args.seeds.len() == 1 {
        format!("the run seeded {runs}")
    } else {
        format!("any of the runs seeded {runs}")
    };
    bail!(
        "{}: game {index} was not played by {named} (--seed): its seed {seed} is another run's; read the games of the \
         runs --seed names, and name their seeds",
        path.display()
    );
}

/// The model `odds-fit` fits on `positions`, the positions of the runs `seeds` (`games` games each).
fn fit_on(
    positions: &[LabelledPosition],
    seeds: Vec<u64>,
    games: &GamesArgs,
    checksum: &str,
) -> anyhow::Result<OddsModel> {
    let examples: Vec<Example> = positions
        .iter()
        .map(|p| Example {
            situation: p.situation,
            game: p.game_seed,
            final_max: p.final_max,
        })
        .collect();
    let summary = FitSummary {
        seeds,
        games: games.games,
        positions: examples.len() as u64,
        sample_every: games.sample_every,
    };
    Ok(fit(&examples, default_fitted_for(checksum), summary)?)
}

/// Runs `advisor2048 odds-fit`.
pub fn run_fit(args: &OddsFitArgs) -> anyhow::Result<ExitCode> {
    let (net, checksum) = network(&args.network)?;
    let (runs, games) = positions(&args.games, &net)?;
    let positions = pooled(&runs);
    if positions.is_empty() {
        bail!("no finished game gave a position to fit on");
    }
    let odds = fit_on(&positions, args.games.seeds.clone(), &args.games, &checksum)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("nets/odds-{checksum}.json")));
    std::fs::write(&out, model::file::encode(&odds)).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!(
        "fitted on {} positions of {games} finished games; written to {}",
        positions.len(),
        out.display()
    );
    print_table(&reliability(&odds, &positions), "on the games it was fitted on");
    Ok(ExitCode::SUCCESS)
}

/// Runs `advisor2048 odds-check`.
pub fn run_check(args: &OddsCheckArgs) -> anyhow::Result<ExitCode> {
    if args.cross_fit {
        return run_cross_fit(args);
    }
    let (net, checksum) = network(&args.network)?;
    let odds: OddsModel = match &args.network.odds_file {
        Some(path) => model::file::load(path).with_context(|| format!("cannot load the odds {}", path.display()))?,
        None => model::shipped::load().context("the built-in odds are damaged")?,
    };
    odds.check_for(Some(&checksum), &default_fitted_for(&checksum))?;
    for seed in args.games.seeds.iter().filter(|s| odds.fit.seeds.contains(s)) {
        eprintln!("warning: the model was fitted on the run seeded {seed}: its games are not held out");
    }
    let (runs, _) = positions(&args.games, &net)?;
    show(&reliability(&odds, &pooled(&runs)), args.json, "on held-out games")
}

/// Runs `advisor2048 odds-check --cross-fit`: each run checked by a model fitted on the others.
fn run_cross_fit(args: &OddsCheckArgs) -> anyhow::Result<ExitCode> {
    let seeds = &args.games.seeds;
    if seeds.len() < 2 {
        bail!("--cross-fit needs two or more runs (--seed S1,S2,...): each is checked by a model fitted on the others");
    }
    if args.network.odds_file.is_some() {
        bail!("--cross-fit fits its own models and checks no model file: leave out --odds-model");
    }
    let (net, checksum) = network(&args.network)?;
    let (runs, _) = positions(&args.games, &net)?;
    let mut checked = Vec::new();
    let mut chances = Vec::new();
    for (held_out, mine) in &runs {
        let others = pooled(runs.iter().filter(|(s, _)| s != held_out));
        let fitted_seeds: Vec<u64> = seeds.iter().copied().filter(|s| s != held_out).collect();
        let odds = fit_on(&others, fitted_seeds, &args.games, &checksum)?;
        chances.extend(mine.iter().map(|p| odds.chances(&p.situation)));
        checked.extend_from_slice(mine);
        eprintln!(
            "run {held_out}: {} positions checked by a model fitted on the other runs' {} positions",
            mine.len(),
            others.len()
        );
    }
    show(
        &reliability_of(&checked, &chances),
        args.json,
        "of each run by a model fitted on the others",
    )
}

/// Prints a check's table: as JSON, or per tile for people.
fn show(table: &Reliability, json: bool, what: &str) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(table)?);
    } else {
        print_table(table, what);
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a reliability table per tile.
fn print_table(table: &Reliability, what: &str) {
    println!(
        "reliability {what}: {} positions of {} games",
        table.positions, table.games
    );
    for t in table.tiles.iter().filter(|t| t.positions > 0) {
        println!(
            "tile {}: {} positions without it, of {} games; base rate {:.3}; calibration error {:.1} points \
             (weighted {:.1}); Brier {:.4} against the base rate's {:.4}",
            t.tile,
            t.positions,
            t.games,
            t.base_rate,
            100.0 * t.calibration_error,
            100.0 * t.weighted_calibration_error,
            t.brier,
            t.base_brier
        );
        println!("  {:>11} {:>8} {:>10} {:>9}", "predicted", "count", "mean", "observed");
        for b in &t.bins {
            println!(
                "  {:>5.1}-{:<5.1} {:>8} {:>10.3} {:>9.3}",
                b.low, b.high, b.count, b.predicted, b.observed
            );
        }
        println!(
            "  {:>15} {:>9} {:>6} {:>9} {:>9} {:>8} {:>14} {:>5}",
            "largest tile", "positions", "games", "predicted", "observed", "Brier", "its rate's", "AUC"
        );
        for (k, g) in t.stages.iter().enumerate() {
            let largest = if k == 0 {
                format!("up to {}", g.largest)
            } else {
                g.largest.to_string()
            };
            let auc = g.auc.map_or("-".to_string(), |a| format!("{a:.2}"));
            println!(
                "  {:>15} {:>9} {:>6} {:>9.3} {:>9.3} {:>8.4} {:>14.4} {:>5}",
                largest, g.positions, g.games, g.predicted, g.base_rate, g.brier, g.base_brier, auc
            );
        }
    }
}
