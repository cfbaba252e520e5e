//! `advisor2048 train`: TD learning of an n-tuple network, from its flags to the files it writes and its summary.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;

use advisor2048::eval::ntuple::file;
use advisor2048::eval::ntuple::{staged, Shape};
use advisor2048::search::StopHandle;
use advisor2048::train::{
    promote, Halving, NextValue, StageKey, StageTarget, StartPolicy, StartSource, TrainConfig, TrainState, Trainer,
    DEFAULT_COHERENCE_PRIOR, REACH_EXPONENTS,
};

use super::signals::{stop_on_signals, STOP_AND_SAVE};

/// Where new training games begin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StartArg {
    /// Every game from a new board.
    Fresh,
    /// With --restart-prob, from the middle of an earlier game.
    MidGame,
    /// In turn from a new board and from each --pool-keys pool (the first board of each stage seen so far).
    StagePools,
}

/// Which value of the next afterstate the TD(lambda) target reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NextValueArg {
    /// Its value just before its own update (the rule the networks before the shipped one were trained with).
    BeforeUpdate,
    /// Its value just after its own update (as the public trainers ziap/2048-tdl and TDL2048+ read it; measured
    /// stronger at equal moves).
    AfterUpdate,
}

/// Which stage values the next afterstate where a game crosses into a later stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StageTargetArg {
    /// The stage the crossing move was chosen in: a stage learns from its own values only (every shipped network).
    Own,
    /// The later stage, whose values were learned on those boards (with --freeze-from: the early stages learn to
    /// hand over the boards the late stage values most).
    Next,
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Tuple set of a new network: 4x6 or 8x6 (ignored with --resume, which keeps the file's).
    #[arg(long, default_value = "4x6")]
    pub net: String,
    /// Largest tiles at which further weight sets start, e.g. --stages 16384 (one stage when not given). With
    /// --resume, stages added to the file's network (weight promotion: a new stage starts as a copy of the
    /// weights of the stage it splits off, with its learning rates and a short memory of its errors).
    #[arg(long, value_delimiter = ',')]
    pub stages: Vec<u32>,
    /// Stop after this many games from the start (counting the checkpoint's games when resuming).
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop after this many minutes of this run.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Seed of the run (with one thread, the same seed trains the same network).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Threads playing and learning at once (one shared network).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// The weight file to write: a checkpoint (f32 weights and the trainer's state, so --resume can continue it
    /// exactly), at every checkpoint and at the end.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the network as a shipped weight file (f16, no trainer state) here, at every checkpoint and at the
    /// end: the file a run can always continue from (--resume), even where the checkpoint is lost.
    #[arg(long)]
    pub export: Option<PathBuf>,
    /// Continue from this weight file: a checkpoint continues exactly where it stopped; a shipped network (no
    /// trainer state) or a stage list (its parts as one network: train one stage with --freeze-below, then write
    /// it as its own file with `net export --stage`) keeps its weights and starts new counters, pools and
    /// accumulators (see --coherence-prior); the files the run writes add the file's training summary to the
    /// run's (`net info` tells every leg).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// TD(lambda): 0 is TD(0).
    #[arg(long, default_value_t = 0.5)]
    pub lambda: f32,
    /// The TD(lambda) target of an afterstate, r + (1 - lambda) V(next) + lambda x (the next target), reads V(next)
    /// just before or just after the next afterstate's own update (the update runs backwards from the game's end).
    #[arg(long, value_enum, default_value_t = NextValueArg::AfterUpdate)]
    pub next_value: NextValueArg,
    /// Where a game crosses into a later stage, the stage that values the next afterstate in the target of the move
    /// that crossed.
    #[arg(long, value_enum, default_value_t = StageTargetArg::Own)]
    pub stage_target: StageTargetArg,
    /// Learning rate (divided by the lookups per board).
    #[arg(long, default_value_t = 1.0)]
    pub alpha: f32,
    /// Plain TD with the fixed rate --alpha instead of temporal coherence's per-weight rates (no accumulators are
    /// kept: a third of the memory).
    #[arg(long)]
    pub no_tc: bool,
    /// Temporal coherence from a file without accumulators (a shipped network): every weight starts with E = 0 and
    /// A = this, so its rate |E|/A starts at 0 and grows as errors of one sign add up (0: the full rate at once).
    #[arg(long, default_value_t = DEFAULT_COHERENCE_PRIOR)]
    pub coherence_prior: f32,
    /// Optimistic initialisation of a new network: the value every board starts with.
    #[arg(long, default_value_t = 0.0)]
    pub init_value: f32,
    /// Where new games begin.
    #[arg(long, value_enum, default_value_t = StartArg::Fresh)]
    pub start: StartArg,
    /// With --start mid-game: the probability that a game starts from a position in the middle of an earlier game.
    #[arg(long, default_value_t = 0.25)]
    pub restart_prob: f64,
    /// With --start stage-pools: the stages whose first boards are pooled, e.g. 16384,16384+8192 (a board holding
    /// every tile of a key is in its stage).
    #[arg(long, value_delimiter = ',', default_value = "16384,16384+8192")]
    pub pool_keys: Vec<StageKey>,
    /// With --start stage-pools: positions kept per key and thread.
    #[arg(long, default_value_t = 1024)]
    pub pool_size: usize,
    /// Play each game once (no halving restarts).
    #[arg(long)]
    pub no_halving: bool,
    /// Halving restarts: a game is played again from --halving-fraction of its length while it is longer than this
    /// many moves.
    #[arg(long, default_value_t = 10)]
    pub halving_min_moves: usize,
    /// Halving restarts: where in the game just played the next restart begins (0.5: the middle).
    #[arg(long, default_value_t = 0.5)]
    pub halving_fraction: f64,
    /// Keep the weights of the stages that start below this tile (only the later stages learn), e.g. 16384.
    #[arg(long)]
    pub freeze_below: Option<u32>,
    /// Keep the weights of the stages that start at this tile or above (only the earlier stages learn), e.g. 16384.
    /// Each game then ends at its first move in a frozen stage (the rolling statistics count games up to there);
    /// with --stage-target next the earlier stages learn the frozen stage's values of the boards they hand over.
    #[arg(long, conflicts_with = "freeze_below")]
    pub freeze_from: Option<u32>,
    /// Games in the rolling statistics.
    #[arg(long, default_value_t = 1000)]
    pub window: usize,
    /// Minutes between checkpoints (also written at the end and on Ctrl-C).
    #[arg(long, default_value_t = 10.0)]
    pub checkpoint_minutes: f64,
    /// Append the learning curve to this CSV file (one line per report).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Seconds between progress reports (and learning-curve lines).
    #[arg(long, default_value_t = 10.0)]
    pub report_seconds: f64,
    /// Print the summary as JSON at the end (and no progress bar).
    #[arg(long)]
    pub json: bool,
}

fn stages(args: &TrainArgs) -> anyhow::Result<Vec<u8>> {
    let mut out = vec![0u8];
    for &tile in &args.stages {
        if !tile.is_power_of_two() || !(4..=32768).contains(&tile) {
            bail!("--stages: {tile} is not a tile from 4 to 32768");
        }
        out.push(tile.trailing_zeros() as u8);
    }
    Ok(out)
}

/// Runs `advisor2048 train`: the settings, the trainer they start, the run with its progress and checkpoints, then
/// the final files and the summary.
pub fn run_train(args: &TrainArgs) -> anyhow::Result<ExitCode> {
    let config = settings(args)?;
    let trainer = start(args, config)?;
    let stop = StopHandle::new();
    stop_on_signals(stop.clone(), STOP_AND_SAVE);
    train_with_progress(args, &trainer, &stop)?;
    export_and_summarize(args, &trainer, &stop)?;
    Ok(ExitCode::SUCCESS)
}

/// The flags as a validated training configuration (every problem at once). The stages frozen by `--freeze-below`
/// are counted by [`start`], once the network's shape is known.
fn settings(args: &TrainArgs) -> anyhow::Result<TrainConfig> {
    let source = match args.start {
        StartArg::Fresh => StartSource::Fresh,
        StartArg::MidGame => StartSource::MidGame {
            probability: args.restart_prob,
        },
        StartArg::StagePools => StartSource::StagePools {
            keys: args.pool_keys.clone(),
            pool_size: args.pool_size,
        },
    };
    let config = TrainConfig {
        games: args.games,
        duration: args.minutes.map(|m| Duration::from_secs_f64(m.max(0.0) * 60.0)),
        seed: args.seed,
        threads: args.threads,
        lambda: args.lambda,
        next_value: match args.next_value {
            NextValueArg::BeforeUpdate => NextValue::BeforeUpdate,
            NextValueArg::AfterUpdate => NextValue::AfterUpdate,
        },
        stage_target: match args.stage_target {
            StageTargetArg::Own => StageTarget::Own,
            StageTargetArg::Next => StageTarget::Next,
        },
        alpha: args.alpha,
        tc: !args.no_tc,
        init_value: args.init_value,
        start: StartPolicy {
            source,
            halving: (!args.no_halving).then_some(Halving {
                min_moves: args.halving_min_moves,
                fraction: args.halving_fraction,
            }),
        },
        window: args.window,
        frozen_below: 0,
        frozen_from: None,
        coherence_prior: args.coherence_prior,
    };
    let problems = config.problems();
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(config)
}

/// The trainer: a new network of `--net` and `--stages`, or the `--resume` file's (with the stages `--stages` adds
/// promoted), its early stages frozen by `--freeze-below`, and this run's command line recorded in what it writes.
fn start(args: &TrainArgs, mut config: TrainConfig) -> anyhow::Result<Trainer> {
    let (net, state, earlier) = match &args.resume {
        Some(path) => {
            let (mut net, info, mut state) =
                staged::load_with_state(path).with_context(|| format!("cannot resume from {}", path.display()))?;
            let added = &stages(args)?[1..];
            if added.iter().any(|s| !net.shape().stages.contains(s)) {
                (net, state) = promote(&net, &state, added)
                    .with_context(|| format!("cannot add --stages to the network of {}", path.display()))?;
            }
            (Some(net), state, info.header.training)
        }
        None => (None, Vec::new(), Default::default()),
    };
    let shape = match &net {
        Some(net) => net.shape().clone(),
        None => Shape::named(&args.net, stages(args)?)?,
    };
    if let Some(tile) = args.freeze_below {
        config.frozen_below = stages_below(&shape, "--freeze-below", tile)?;
        if config.frozen_below == shape.stages.len() {
            bail!("--freeze-below {tile} would freeze every stage of {}", shape.describe());
        }
    }
    if let Some(tile) = args.freeze_from {
        // The first stage starts at tile 0, below every tile allowed here: it always learns.
        let from = stages_below(&shape, "--freeze-from", tile)?;
        if from == shape.stages.len() {
            bail!(
                "--freeze-from {tile} freezes no stage of {}: its last starts below {tile}",
                shape.describe()
            );
        }
        config.frozen_from = Some(from);
    }
    let trainer = match net {
        Some(net) => Trainer::resume(net, &state, &earlier, config).with_context(|| {
            format!(
                "cannot resume from {}",
                args.resume.as_deref().unwrap_or(Path::new("")).display()
            )
        })?,
        None => Trainer::new(shape, config),
    };
    drop(state);
    let run_dir = std::env::current_dir().ok();
    trainer.add_command(recorded_command(std::env::args_os().skip(1), run_dir.as_deref()));
    Ok(trainer)
}

/// How many of `shape`'s stages start below `tile`, the value of `flag` (a tile from 4 to 32768).
fn stages_below(shape: &Shape, flag: &str, tile: u32) -> anyhow::Result<usize> {
    if !tile.is_power_of_two() || !(4..=32768).contains(&tile) {
        bail!("{flag}: {tile} is not a tile from 4 to 32768");
    }
    let e = tile.trailing_zeros() as u8;
    Ok(shape.stages.iter().filter(|&&s| s < e).count())
}

/// Trains until the run ends (`--games`, `--minutes` or a signal), reporting progress every `--report-seconds` (the
/// bar, and a `--log` line) and writing the checkpoint and export every `--checkpoint-minutes`. The first
/// checkpoint that could not be written ends the command with its error once the run stops.
fn train_with_progress(args: &TrainArgs, trainer: &Trainer, stop: &StopHandle) -> anyhow::Result<()> {
    let mut progress = Progress::new(args, &trainer.progress())?;
    let mut save_error: Option<anyhow::Error> = None;
    let checkpoint = |t: &Trainer| {
        if let Err(e) = save_checkpoint(t, &args.out, args.export.as_deref()) {
            save_error.get_or_insert(e);
        }
    };
    trainer.run(
        stop.flag(),
        Duration::from_secs_f64(args.report_seconds.max(0.05)),
        |p| progress.report(p),
        Some(Duration::from_secs_f64(args.checkpoint_minutes.max(0.01) * 60.0)),
        checkpoint,
    );
    progress.finish();
    save_error.map_or(Ok(()), Err)
}

/// Writes the final checkpoint and export, then prints the run's summary (as JSON with `--json`).
fn export_and_summarize(args: &TrainArgs, trainer: &Trainer, stop: &StopHandle) -> anyhow::Result<()> {
    let (info, exported) = save_checkpoint(trainer, &args.out, args.export.as_deref())?;
    let p = trainer.progress();
    let summary = serde_json::json!({
        "checkpoint": args.out,
        "checksum": info.checksum(),
        "exported": exported.as_ref().map(|i| serde_json::json!({"file": args.export, "checksum": i.checksum()})),
        "games": p.games,
        "restarted_games": p.restarted_games,
        "moves": p.moves,
        "seconds": p.seconds,
        "moves_per_second": p.moves as f64 / p.seconds.max(1e-9),
        "rolling_window": p.rolling.games.len(),
        "rolling_mean_score": p.rolling.mean_score(),
        "rolling_reach": REACH_EXPONENTS.iter().map(|&e| ((1u32 << e).to_string(), serde_json::json!(p.rolling.reach_rate(e)))).collect::<serde_json::Map<String, serde_json::Value>>(),
        "interrupted": stop.is_stopped(),
    });
    // `train` ignores SIGPIPE (its checkpoints are written whoever reads its output): a closed standard output is an
    // error here, not a panic.
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        writeln!(
            out,
            "trained {} games ({} restarted), {} moves in {:.0} s; rolling mean score {:.0}; checkpoint {} ({})",
            p.games,
            p.restarted_games,
            p.moves,
            p.seconds,
            p.rolling.mean_score(),
            args.out.display(),
            info.checksum()
        )?;
    }
    Ok(())
}

/// Where a run's progress goes: the progress bar (not with `--json`) and the `--log` learning curve.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    log: Option<std::fs::File>,
    /// The counters at the previous report, for the rate since.
    last_moves: u64,
    last_seconds: f64,
}

impl Progress {
    /// The bar, and the log opened for appending (its header written when the file is new).
    fn new(args: &TrainArgs, at_start: &TrainState) -> anyhow::Result<Progress> {
        let log = match &args.log {
            Some(p) => Some(open_log(p)?),
            None => None,
        };
        let bar = (!args.json).then(|| {
            let bar = indicatif::ProgressBar::new(args.games.unwrap_or(0));
            bar.set_style(
                indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos} games  {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Ok(Progress {
            bar,
            log,
            last_moves: at_start.moves,
            last_seconds: at_start.seconds,
        })
    }

    /// One report: the bar's games, speed, restarts, mean score and reach rates; one line of the learning curve.
    fn report(&mut self, p: &TrainState) {
        let rate = (p.moves - self.last_moves) as f64 / (p.seconds - self.last_seconds).max(1e-9);
        self.last_moves = p.moves;
        self.last_seconds = p.seconds;
        let reach: Vec<String> = REACH_EXPONENTS
            .iter()
            .map(|&e| format!("{}:{:.1}%", 1u32 << e, 100.0 * p.rolling.reach_rate(e)))
            .collect();
        if let Some(bar) = &self.bar {
            bar.set_position(p.games);
            bar.set_message(format!(
                "{:.0} moves/s  {} restarted  mean {:.0}  {}",
                rate,
                p.restarted_games,
                p.rolling.mean_score(),
                reach.join(" ")
            ));
        }
        if let Some(f) = self.log.as_mut() {
            let rates: Vec<String> = REACH_EXPONENTS
                .iter()
                .map(|&e| format!("{:.4}", p.rolling.reach_rate(e)))
                .collect();
            let _ = writeln!(
                f,
                "{:.1},{},{},{:.1},{},{}",
                p.seconds,
                p.games,
                p.moves,
                p.rolling.mean_score(),
                rates.join(","),
                p.restarted_games
            );
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// The learning-curve file, opened for appending; a new file starts with the header of its columns.
fn open_log(path: &Path) -> anyhow::Result<std::fs::File> {
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if new {
        let reach: Vec<String> = REACH_EXPONENTS
            .iter()
            .map(|&e| format!("reach_{}", 1u32 << e))
            .collect();
        writeln!(
            f,
            "seconds,games,moves,rolling_mean_score,{},restarted_games",
            reach.join(",")
        )?;
    }
    Ok(f)
}

/// The command line a weight file records of this run: the program as `advisor2048`, each absolute path inside the
/// run's folder `run_dir` (the current directory) relative to it, alone or after `--flag=`, every other argument as
/// given. The record says how the network was made and is read beside the files in the run's folder: the training
/// machine's folders tell nothing of that (`--out /work/long4/a.ckpt` run from /work/long4 is `--out a.ckpt`).
fn recorded_command(args: impl IntoIterator<Item = OsString>, run_dir: Option<&Path>) -> String {
    let mut words = vec!["advisor2048".to_owned()];
    for arg in args {
        let arg = arg.to_string_lossy();
        words.push(match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => format!("{flag}={}", relative_path(value, run_dir)),
            _ => relative_path(&arg, run_dir),
        });
    }
    words.join(" ")
}

/// `word` relative to `run_dir` when it is an absolute path inside it (the folder itself is `.`), else as given.
fn relative_path(word: &str, run_dir: Option<&Path>) -> String {
    let path = Path::new(word);
    if !path.is_absolute() {
        return word.to_owned();
    }
    match run_dir.and_then(|dir| path.strip_prefix(dir).ok()) {
        Some(inside) if inside.as_os_str().is_empty() => ".".to_owned(),
        Some(inside) => inside.to_string_lossy().into_owned(),
        None => word.to_owned(),
    }
}

/// Writes the checkpoint and (if asked) the shipped-format export, straight from the trainer's tables.
fn save_checkpoint(
    t: &Trainer,
    path: &Path,
    export: Option<&Path>,
) -> anyhow::Result<(file::NetInfo, Option<file::NetInfo>)> {
    let info = t
        .save_checkpoint(path)
        .with_context(|| format!("cannot write the checkpoint {}", path.display()))?;
    let exported = match export {
        Some(p) => Some(t.export(p).with_context(|| format!("cannot write {}", p.display()))?),
        None => None,
    };
    Ok((info, exported))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(args: &[&str], run_dir: &str) -> String {
        recorded_command(args.iter().map(OsString::from), Some(Path::new(run_dir)))
    }

    #[test]
    fn the_recorded_command_names_paths_inside_the_run_s_folder_relative_to_it() {
        assert_eq!(
            recorded(
                &[
                    "train",
                    "--out",
                    "/work/long4/a.ckpt",
                    "--export=/work/long4/nets/a.a2n",
                    "--games",
                    "10"
                ],
                "/work/long4"
            ),
            "advisor2048 train --out a.ckpt --export=nets/a.a2n --games 10"
        );
        // The folder itself, and a trailing separator on the folder.
        assert_eq!(
            recorded(&["--log", "/work/long4"], "/work/long4/"),
            "advisor2048 --log ."
        );
    }

    #[test]
    fn the_recorded_command_keeps_other_paths_and_words_as_given() {
        assert_eq!(
            recorded(
                &[
                    "train",
                    "--resume",
                    "/work/long3/b.ckpt",
                    "--out",
                    "/work/long4x/a.ckpt",
                    "--out",
                    "c/d.ckpt"
                ],
                "/work/long4"
            ),
            "advisor2048 train --resume /work/long3/b.ckpt --out /work/long4x/a.ckpt --out c/d.ckpt"
        );
        assert_eq!(
            recorded_command([OsString::from("--out"), OsString::from("/work/long4/a.ckpt")], None),
            "advisor2048 --out /work/long4/a.ckpt"
        );
        assert_eq!(
            recorded(&["--stages=16384", "--x=y=z"], "/"),
            "advisor2048 --stages=16384 --x=y=z"
        );
    }
}
