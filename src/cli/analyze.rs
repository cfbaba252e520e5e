//! `advisor2048 analyze FILE|-`: the review of a played game from the command line. The file is the body of a
//! `POST /analyze` request (a record in any of its forms, or a `/simulate` game with trace under `game`); the search
//! flags are `best-move`'s and override the file's search fields. A progress bar on a terminal, then a readable
//! review (the worst moves with their boards; with `--odds`, the moves that cost the most chance of the next
//! milestones) or, with `--json`, the HTTP answer. Ctrl-C stops the review and still prints what was graded (exit
//! status 130).

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;

use advisor2048::request::analyze::{AnalyzeBounds, AnalyzeRequest, AnalyzeResponse, ReviewOdds, REVIEW_ODDS_FIELDS};
use advisor2048::request::field::Field;
use advisor2048::request::{ONE_SEARCH, SEARCH};
use advisor2048::search::{node_budget_words, StopHandle};

use super::request::{Body, FieldFlags, FieldSet, Flags};
use super::signals::{stop_on_signals, INTERRUPTED, STOP_THEN_QUIT};
use super::{network_and_odds, OneSearchArgs, SearchArgs};

/// How `analyze` names the request's fields: the game's fields are in FILE.
pub const ANALYZE_FLAGS: Flags =
    Flags::new("FILE", &[SEARCH, ONE_SEARCH, REVIEW_ODDS_FIELDS]).with_file("FILE", ANALYZE_FILE_FIELDS);

/// The `odds` switch of `analyze`.
#[derive(Debug, Clone)]
pub struct ReviewOddsFields;

impl FieldSet for ReviewOddsFields {
    const FIELDS: &'static [&'static Field] = REVIEW_ODDS_FIELDS;
}

/// The request fields that come from the file.
const ANALYZE_FILE_FIELDS: &[&str] = &["moves", "start", "directions", "spawns", "game", "contiguous"];

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// The game: a JSON file (or - for standard input) holding a POST /analyze body: {"moves": [{"board": ...,
    /// "direction": ...}, ...]}, {"start": ..., "directions": [...], "spawns": [...]} or {"game": a /simulate game
    /// with trace}; "contiguous": false for a record with gaps.
    #[arg(value_name = "FILE")]
    pub file: String,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub one: OneSearchArgs,
    #[command(flatten)]
    pub odds: FieldFlags<ReviewOddsFields>,
    /// Print the same JSON the HTTP API returns.
    #[arg(long)]
    pub json: bool,
    /// Do not show the progress bar (it is shown only when stderr is a terminal and --json is not given).
    #[arg(long)]
    pub no_progress: bool,
}

/// The file's JSON object.
fn read_file(file: &str) -> anyhow::Result<serde_json::Map<String, Value>> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the game from standard input")?;
    } else {
        text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    }
    match serde_json::from_str::<Value>(&text).with_context(|| format!("{file} is not JSON"))? {
        Value::Object(map) => Ok(map),
        _ => bail!("{file} must hold a JSON object (the body of a POST /analyze request)"),
    }
}

/// Runs `advisor2048 analyze`.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let flags = &ANALYZE_FLAGS;
    let mut map = read_file(&args.file)?;
    let mut body = Body::default();
    args.search.fill(&mut body);
    args.one.fill(&mut body);
    args.odds.fill(&mut body);
    let Value::Object(given) = body.finish().map_err(|p| flags.invalid(p))? else {
        bail!("the flags did not make a JSON object");
    };
    map.extend(given);
    let bounds = AnalyzeBounds {
        search: args.search.bounds(),
        ..AnalyzeBounds::local(args.search.network.available())
    };
    let request = AnalyzeRequest::from_json(&Value::Object(map), &bounds).map_err(|p| flags.invalid(p))?;
    let (network, odds) = network_and_odds(&args.search.network, request.search.evaluator.kind, request.odds)?;
    let stop = StopHandle::new();
    stop_on_signals(stop.clone(), STOP_THEN_QUIT);
    let show_bar = !args.json && !args.no_progress && std::io::stderr().is_terminal();
    let bar = show_bar.then(|| {
        let bar = ProgressBar::with_draw_target(Some(request.record.len() as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("[{elapsed_precise}] {wide_bar} {pos}/{len} moves  {per_sec}  ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let answer = request.run(network.as_ref(), &odds, &stop, None, |_| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let answer = answer.map_err(|p| flags.invalid(p.into()))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer(&mut out, &answer).context("writing the JSON review")?;
        writeln!(out)?;
    } else {
        write_review(&mut out, &answer)?;
    }
    out.flush()?;
    Ok(if stop.is_stopped() {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

fn percent(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| format!("{:.1}%", 100.0 * x))
}

/// The readable review: the figures, then the worst moves with their boards.
fn write_review(out: &mut impl Write, answer: &AnalyzeResponse) -> anyhow::Result<()> {
    let s = &answer.summary;
    let cut = if s.complete {
        String::new()
    } else {
        format!(" — stopped after {} of {} moves", s.graded, s.moves)
    };
    writeln!(
        out,
        "review of {} moves, profile {}, evaluator {}, depth {}{}: {:.1} s{cut}",
        s.moves,
        s.profile,
        s.evaluator,
        s.target_depth,
        node_budget_words(s.node_budget, s.late_weight),
        s.elapsed_ms / 1e3
    )?;
    writeln!(
        out,
        "accuracy {} best moves ({}/{}), {} loss-weighted",
        percent(s.accuracy),
        s.grades.best,
        s.graded,
        percent(s.weighted_accuracy)
    )?;
    writeln!(
        out,
        "loss: total {:.1}, mean {} per move",
        s.total_loss,
        s.mean_loss.map_or("-".to_owned(), |m| format!("{m:.2}"))
    )?;
    let g = &s.grades;
    writeln!(
        out,
        "grades: best {}, good {}, inaccuracy {}, mistake {}, blunder {}; forced moves {}",
        g.best, g.good, g.inaccuracy, g.mistake, g.blunder, s.forced
    )?;
    match s.largest_tile.made_by {
        Some(m) => writeln!(out, "largest tile {}, made by move {m}", s.largest_tile.tile)?,
        None => writeln!(out, "largest tile {}, on the first board", s.largest_tile.tile)?,
    }
    if let Some(odds) = &s.odds {
        write_odds_losses(out, odds)?;
    }
    if s.worst.is_empty() {
        writeln!(out, "no move lost anything")?;
        return Ok(());
    }
    writeln!(out, "\nworst moves:")?;
    for w in &s.worst {
        writeln!(
            out,
            "move {}: played {}, best {}, loss {:.2} ({:.1}%, {})",
            w.index,
            w.played,
            w.best,
            w.loss,
            100.0 * w.relative_loss,
            w.grade
        )?;
        for row in &w.board {
            let cells: Vec<String> = row
                .iter()
                .map(|&v| if v == 0 { ".".to_owned() } else { v.to_string() })
                .collect();
            writeln!(out, "  {:>6}{:>7}{:>7}{:>7}", cells[0], cells[1], cells[2], cells[3])?;
        }
    }
    Ok(())
}

/// The review's largest odds losses, one line each: "move 812: played left, best up: cost 6.0 points of 32768".
fn write_odds_losses(out: &mut impl Write, odds: &ReviewOdds) -> anyhow::Result<()> {
    let play = &odds.play;
    if odds.largest_losses.is_empty() {
        writeln!(
            out,
            "reach odds (network {}, depth {}{}): no move lost any chance of the next milestones",
            play.network,
            play.depth,
            node_budget_words(play.node_budget, play.late_weight)
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "\nlargest odds losses (the default play's chance of the next milestones; network {}, depth {}{}):",
        play.network,
        play.depth,
        node_budget_words(play.node_budget, play.late_weight)
    )?;
    for l in &odds.largest_losses {
        writeln!(
            out,
            "move {}: played {}, best {}: cost {:.1} points of {} ({:.1}% after the move played, {:.1}% after the \
             best, {:.1}% before)",
            l.index,
            l.played,
            l.best,
            100.0 * l.loss,
            l.tile,
            100.0 * l.after_played,
            100.0 * l.after_best,
            100.0 * l.before
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use advisor2048::request::analyze::{CONTIGUOUS, RECORD_FIELDS};

    #[test]
    fn the_file_fields_are_the_record_s_and_contiguous() {
        let mut expected = RECORD_FIELDS.to_vec();
        expected.push(CONTIGUOUS.name);
        assert_eq!(ANALYZE_FILE_FIELDS, expected.as_slice());
        assert_eq!(ANALYZE_FLAGS.name("/moves/17/board"), "FILE /moves/17/board");
        assert_eq!(ANALYZE_FLAGS.name("/time_budget_ms"), "--budget-ms");
    }
}
