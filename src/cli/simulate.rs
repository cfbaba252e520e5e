//! `advisor2048 simulate`: self-play from the command line, with a progress bar, a readable table or `--json`;
//! `advisor2048 report`: the same table (or JSON) for saved `--json` reports, chunks of one run merged.
//!
//! The flags become a [`SimulateRequest`] once, here, read as `POST /simulate` reads one; the request plays the
//! games ([`SimulateRequest::run`]). Ctrl-C stops the run
//! and still prints the summary of what finished (exit status 130); a second Ctrl-C quits at once.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use advisor2048::request::field::Field;
use advisor2048::request::simulate::{FIRST_GAME, MAX_FIRST_GAME, PARALLEL_GAMES};
use advisor2048::request::{RunLimits, SimulateBounds, SimulateRequest, SEARCH, SIMULATE};
use advisor2048::search::StopHandle;
use advisor2048::sim::{Progress, SimReport};

use super::request::{Body, FieldFlags, FieldSet, Flags};
use super::signals::{stop_on_signals, INTERRUPTED, STOP_THEN_QUIT};
use super::SearchArgs;

/// The fields of a simulation's run ([`advisor2048::request::SIMULATE`]), as flags.
#[derive(Debug, Clone)]
pub struct SimulateFields;

impl FieldSet for SimulateFields {
    const FIELDS: &'static [&'static Field] = SIMULATE;
}

/// Play games against the spawn generator and report how far the advice gets.
#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub run: FieldFlags<SimulateFields>,
    /// Play chunk INDEX of the run: games INDEX x N .. INDEX x N + N - 1 (N from --games), the same games as
    /// --first-game INDEX x N. A Kubernetes Indexed Job gives each pod its completion index here
    /// (deploy/k8s/simulate-job.yaml), so that its pods play the chunks of one run.
    #[arg(long, env = "ADVISOR_CHUNK", value_name = "INDEX", conflicts_with = FIRST_GAME.flag)]
    pub chunk: Option<u64>,
    /// Stop the run after this many moves over all games (the games cut are reported unfinished).
    #[arg(long)]
    pub total_moves: Option<u64>,
    /// Stop the run after this many seconds, cutting the search under way (the games cut are reported unfinished).
    #[arg(long)]
    pub max_seconds: Option<f64>,
    /// Start every game from this board (16 hex digits of exponents, rows as JSON: [[0,2,4,8],...], or the original
    /// game's saved state as JSON) instead of a new game.
    #[arg(long)]
    pub board: Option<String>,
    /// Print the games and the summary as JSON (the shape of the HTTP response of POST /simulate).
    #[arg(long)]
    pub json: bool,
    /// Do not show the progress bar (it is shown only when stderr is a terminal and --json is not given).
    #[arg(long)]
    pub no_progress: bool,
    // The search run before every move. Its `--search-seed` and `--search-threads` do not apply here: each move's
    // search is seeded from the game's seed, and searches are single-threaded (the games run in parallel).
    #[command(flatten)]
    pub search: SearchArgs,
}

/// How `simulate` names the request's fields.
pub const SIMULATE_FLAGS: Flags = Flags::new("--board", &[SIMULATE, SEARCH]);

impl SimulateArgs {
    /// The request these flags describe, read and validated as `POST /simulate` reads one.
    pub fn request(&self) -> anyhow::Result<SimulateRequest> {
        let flags = &SIMULATE_FLAGS;
        let mut body = Body::default();
        body.board(self.board.as_deref());
        self.run.fill(&mut body);
        if !self.run.has(PARALLEL_GAMES.name) {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            body.set(PARALLEL_GAMES.name, cpus.into());
        }
        self.search.fill(&mut body);
        let json = body.finish().map_err(|p| flags.invalid(p))?;
        let bounds = SimulateBounds {
            search: self.search.bounds(),
            ..SimulateBounds::local(self.search.network.available())
        };
        let mut request = SimulateRequest::from_json(&json, &bounds).map_err(|p| flags.invalid(p))?;
        if let Some(index) = self.chunk {
            request.first_game = chunk_first_game(index, request.games)?;
        }
        Ok(request)
    }

    /// The command line's own limits on the whole run (`--total-moves`, `--max-seconds`).
    pub fn limits(&self) -> anyhow::Result<RunLimits> {
        let time_limit = match self.max_seconds {
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s.min(1e9))),
            Some(s) => bail!("--max-seconds must be a positive number, found {s}"),
            None => None,
        };
        Ok(RunLimits {
            total_moves: self.total_moves,
            time_limit,
        })
    }
}

/// The first game of chunk `index` of a run played `games` at a time: `index x games`, refused when the chunk would
/// start past the largest first game index or end past the last game index.
fn chunk_first_game(index: u64, games: u64) -> anyhow::Result<u64> {
    match index.checked_mul(games) {
        Some(first) if first <= MAX_FIRST_GAME && first.checked_add(games).is_some() => Ok(first),
        _ => bail!(
            "--chunk {index} with --games {games} starts past the largest first game index, {MAX_FIRST_GAME} \
             (chunk INDEX plays games INDEX x N .. INDEX x N + N - 1)"
        ),
    }
}

/// Runs `advisor2048 simulate`.
pub fn run(args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    let request = args.request()?;
    let limits = args.limits()?;
    let network = args.search.network.load_for(request.search.evaluator.kind)?;
    let stop = StopHandle::new();
    stop_on_signals(stop.clone(), STOP_THEN_QUIT);
    let show_bar = !args.json && !args.no_progress && std::io::stderr().is_terminal();
    let progress = Progress::new();
    let play = || request.run(network.as_ref(), limits, &stop, &progress, |_| {});
    let report = if show_bar {
        run_with_bar(request.games, &progress, play)
    } else {
        play()
    }
    .map_err(|p| SIMULATE_FLAGS.invalid(p.into()))?;

    print_report(&report, args.json, &run_header(&request, &report))?;
    Ok(if stop.is_stopped() {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Plays the run (`play`, `games` games) on another thread while this one draws the progress bar on stderr.
fn run_with_bar<T: Send>(games: u64, progress: &Progress, play: impl FnOnce() -> T + Send) -> T {
    let bar = ProgressBar::with_draw_target(Some(games), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {wide_bar} {pos}/{len} games  {msg}  ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let report = std::thread::scope(|s| {
        let handle = s.spawn(play);
        while !handle.is_finished() {
            let seconds = started.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(progress.games_done());
            bar.set_message(format!(
                "{:.0} moves/s  best tile {}",
                progress.moves() as f64 / seconds,
                progress.best_tile()
            ));
            std::thread::sleep(Duration::from_millis(100));
        }
        handle.join()
    });
    bar.finish_and_clear();
    match report {
        Ok(report) => report,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Summarize saved `simulate --json` reports as one run: the chunks of a run played apart (`--first-game`) merged
/// (or, with `--runs`, several runs pooled).
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Reports written by `advisor2048 simulate --json` (or saved answers of POST /simulate). Games are merged by
    /// index: a game cut short in one report gives way to the same game finished in another; the same index played
    /// differently is an error. The statistics are computed again over the merged games; the time is the reports'
    /// time summed, each counted once (a report whose games another one already holds, such as a chunk beside the
    /// report it was merged into, adds none), so new chunks can be merged into a run's last merged report.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The reports are of several runs (different seeds), each whole or in chunks: pool their games, each known by
    /// its index and its own seed (game 5 of two runs is two games; a game in two reports counts once), and compute
    /// the statistics over all of them.
    #[arg(long)]
    pub runs: bool,
    /// Print the merged games and summary as JSON (the shape `simulate --json` prints).
    #[arg(long)]
    pub json: bool,
}

/// Runs `advisor2048 report`.
pub fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let mut parts = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let part: SimReport = serde_json::from_reader(std::io::BufReader::new(file))
            .with_context(|| format!("{}: not a report of `advisor2048 simulate --json`", path.display()))?;
        parts.push(part);
    }
    let merged = if args.runs {
        SimReport::pool(parts)?
    } else {
        SimReport::merge(parts)?
    };
    let missing = missing_ranges(&merged);
    if !missing.is_empty() && !args.runs {
        eprintln!("note: games {} are in no report", missing.join(", "));
    }
    let header = match (merged.games.first(), merged.games.last()) {
        (Some(first), Some(last)) => format!(
            "{} games (indices {} to {}) from {} report(s){}",
            merged.summary.games,
            first.index,
            last.index,
            args.files.len(),
            cut_short(&merged)
        ),
        _ => format!("no games in {} report(s)", args.files.len()),
    };
    print_report(&merged, args.json, &header)?;
    Ok(ExitCode::SUCCESS)
}

/// The index ranges between the first and the last game that no game fills, as `a` or `a..b` (inclusive).
fn missing_ranges(report: &SimReport) -> Vec<String> {
    report
        .games
        .windows(2)
        .filter(|pair| pair[1].index > pair[0].index + 1)
        .map(|pair| match (pair[0].index + 1, pair[1].index - 1) {
            (a, b) if a == b => a.to_string(),
            (a, b) => format!("{a}..{b}"),
        })
        .collect()
}

/// Prints `report` as JSON or as the readable table under `header`.
fn print_report(report: &SimReport, json: bool, header: &str) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        serde_json::to_writer(&mut out, report).context("writing the JSON report")?;
        writeln!(out)?;
    } else {
        writeln!(out, "{header}")?;
        write_table(&mut out, report)?;
    }
    out.flush()?;
    Ok(())
}

/// The first line of `simulate`'s table: the run's settings.
fn run_header(request: &SimulateRequest, report: &SimReport) -> String {
    let games = match request.first_game {
        0 => format!("{} games", report.summary.games),
        first => format!("{} games from game {first}", report.summary.games),
    };
    let settings = &request.search.settings;
    format!(
        "{games}, seed {}, profile {}, {}, {} thread(s){}",
        request.seed,
        settings.profile,
        settings.depth_words(),
        request.parallel_games.min(request.games.max(1) as usize),
        cut_short(report)
    )
}

/// " — stopped: F finished, C cut short" when games were cut short, else nothing.
fn cut_short(report: &SimReport) -> String {
    let s = &report.summary;
    if s.finished < s.games {
        format!(
            " — stopped: {} finished, {} cut short",
            s.finished,
            s.games - s.finished
        )
    } else {
        String::new()
    }
}

/// The readable report: scores, reach rates with their intervals, the max-tile histogram, speed.
fn write_table(out: &mut impl Write, report: &SimReport) -> anyhow::Result<()> {
    let s = &report.summary;
    match (s.mean_score, s.median_score, s.min_score, s.max_score) {
        (Some(mean), Some(median), Some(min), Some(max)) => {
            writeln!(out, "score: mean {mean:.0}, median {median:.0}, min {min}, max {max}")?
        }
        _ => writeln!(out, "score: no finished game")?,
    }
    writeln!(
        out,
        "moves: {} in {:.1} s, {:.0} moves/s, {:.3} ms per move (one thread), {:.3} ms of CPU per move",
        s.total_moves,
        s.elapsed.as_secs_f64(),
        s.moves_per_second,
        s.ms_per_move,
        s.cpu_ms_per_move
    )?;
    writeln!(out)?;
    writeln!(out, "{:>6}  {:>11}  {:>7}  95% interval", "tile", "reached", "rate")?;
    for r in &s.reach {
        writeln!(
            out,
            "{:>6}  {:>11}  {:>6.1}%  {:.1}% – {:.1}%",
            r.tile,
            format!("{}/{}", r.reached, r.games),
            100.0 * r.rate,
            100.0 * r.ci_low,
            100.0 * r.ci_high
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{:>6}  games (largest tile)", "tile")?;
    for (tile, count) in &s.max_tile_histogram {
        writeln!(out, "{tile:>6}  {count}")?;
    }
    if !s.depth_histogram.is_empty() {
        writeln!(out)?;
        writeln!(out, "{:>6}  moves (search depth reached, plies)", "depth")?;
        for (depth, moves) in &s.depth_histogram {
            let share = 100.0 * *moves as f64 / s.total_moves.max(1) as f64;
            writeln!(out, "{depth:>6}  {moves} ({share:.1}%)")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_starts_at_its_index_times_the_games() {
        assert_eq!(chunk_first_game(0, 100).ok(), Some(0));
        assert_eq!(chunk_first_game(3, 2).ok(), Some(6));
        assert_eq!(chunk_first_game(MAX_FIRST_GAME, 1).ok(), Some(MAX_FIRST_GAME));
    }

    #[test]
    fn a_chunk_past_the_last_game_index_is_refused() {
        for (index, games) in [(u64::MAX, 2), (MAX_FIRST_GAME / 2 + 1, 2), (1, u64::MAX)] {
            let err = chunk_first_game(index, games).expect_err("refused");
            assert!(
                err.to_string().starts_with(&format!(
                    "--chunk {index} with --games {games} starts past the largest first game index"
                )),
                "{err}"
            );
        }
    }
}
