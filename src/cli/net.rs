//! `advisor2048 net`: weight files of the n-tuple network — what one holds (`info`), a checkpoint's network as a
//! shipped file (`export`), what training changed between two (`diff`), the mean of several (`average`), and a
//! network of several one-stage files (`stack`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use advisor2048::eval::ntuple::file::{self, TrainingSummary, ValueType};
use advisor2048::eval::ntuple::{staged, Network, Shape};
use advisor2048::train::average::average;
use advisor2048::train::compare::compare;

#[derive(Subcommand, Debug)]
pub enum NetCommand {
    /// Print a weight file's or a stage list's shape, size, checksum and training summary (checks every file).
    Info(NetInfoArgs),
    /// Write a checkpoint's network (or one of its stages) as a shipped weight file (f16, no trainer state).
    Export(NetExportArgs),
    /// Compare two weight files of one shape: how many weights changed and by how much, by stage and by the
    /// largest tile of each weight's pattern (did a training run learn the late game, did it keep the rest).
    Diff(NetDiffArgs),
    /// Average networks of one shape, weight by weight, into a shipped weight file (f16): its value of every board
    /// is the mean of theirs, an ensemble at the cost of one network (for example the snapshots of one training
    /// run's last phase).
    Average(NetAverageArgs),
    /// Write a stage list: one network whose stages are one-stage weight files, each used from the tile given
    /// (e.g. an opening network and a late-game network; no file over 100 MB). `--weights LIST` loads it.
    Stack(NetStackArgs),
    /// Write a network with more tuples: the named set must begin with the file's tuples (4x6 is the first four of
    /// 8x6); the new tuples' weights are 0 in every stage, so the wider network values every board as the file does,
    /// and `train --resume` continues it with room for more (the new weights learn at the full rate at once).
    Widen(NetWidenArgs),
}

#[derive(Args, Debug)]
pub struct NetWidenArgs {
    /// The network to widen: a weight file, a checkpoint or a stage list (its stages become one file).
    pub file: PathBuf,
    /// The tuple set to widen to (8x6).
    #[arg(long, default_value = "8x6")]
    pub net: String,
    /// Where to write the wider network (a shipped weight file: its weights as the input stores them, f16 from a
    /// shipped file; no trainer state).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct NetStackArgs {
    /// The stages, in order: TILE=FILE, the first from tile 0 (e.g. 0=open.a2n 16384=late.a2n); each FILE a
    /// one-stage network inside the folder of --out. A stage kept in several files names them joined by `+`
    /// (16384=late-a.a2n+late-b.a2n: the tuples of each follow the one before's). Stages may read different
    /// tuples when each stage's are the first of the widest stage's (a 4x6 stage beside an 8x6 one).
    #[arg(required = true, num_args = 1.., value_name = "TILE=FILE[+FILE...]")]
    pub stages: Vec<String>,
    /// Where to write the stage list (JSON; parts are named relative to its folder).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct NetAverageArgs {
    /// The weight files to average (networks or checkpoints of one shape; two or more).
    #[arg(required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// Where to write the mean network (a shipped weight file: f16, no trainer state).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct NetDiffArgs {
    /// The network before (e.g. the file a run resumed from).
    pub before: PathBuf,
    /// The network after (e.g. the run's export).
    pub after: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct NetInfoArgs {
    pub file: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct NetExportArgs {
    pub checkpoint: PathBuf,
    pub out: PathBuf,
    /// Write only this stage (0 = the first) as a one-stage weight file: e.g. the late stage of a two-stage
    /// training run, to name in a stage list (`net stack`) beside the stage it was trained with.
    #[arg(long)]
    pub stage: Option<usize>,
    /// Write only these tuples, FIRST-LAST as `net info` numbers them (e.g. 1-4 and 5-8 of an 8x6 stage: two files
    /// under 100 MB, named together in a stage list); needs a one-stage network or --stage.
    #[arg(long, value_name = "FIRST-LAST")]
    pub tuples: Option<String>,
}

/// A weight file for the `net` commands, an error naming the file when it is not one.
/// A weight file (network or checkpoint) or a stage list naming one file per stage.
fn load_weight_file(path: &Path) -> anyhow::Result<(Network, file::NetInfo, Vec<u8>)> {
    staged::load_with_state(path)
        .with_context(|| format!("{} is not a usable weight file or stage list", path.display()))
}

/// Adds `this` command to a network's record of the commands that made it.
fn append_command(training: &mut TrainingSummary, this: String) {
    training.command = if training.command.is_empty() {
        this
    } else {
        format!("{} && {this}", training.command)
    };
}

/// Runs `advisor2048 net`.
pub fn run(cmd: &NetCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        NetCommand::Info(args) => {
            let (net, info, state) = load_weight_file(&args.file)?;
            let shape = net.shape();
            let h = &info.header;
            if args.json {
                let v = serde_json::json!({
                    "file": args.file,
                    "file_bytes": info.file_bytes,
                    "checksum": info.checksum(),
                    "sha256": info.sha256,
                    "format_version": file::VERSION,
                    "shape": shape.describe(),
                    "tuples": shape.tuples,
                    "stages": shape.stages,
                    "weights": shape.weight_count(),
                    "value_type": h.value_type,
                    "memory_bytes": net.weight_bytes(),
                    "checkpoint": !state.is_empty(),
                    "training": h.training,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("file       {} ({} bytes)", args.file.display(), info.file_bytes);
                println!("checksum   {} (sha256 {})", info.checksum(), info.sha256);
                println!("shape      {}", shape.describe());
                for (i, t) in shape.tuples.iter().enumerate() {
                    println!("  tuple_{:<3} cells {:?}", i + 1, t);
                }
                println!(
                    "weights    {} stored as {:?}, {} MiB in memory ({})",
                    shape.weight_count(),
                    h.value_type,
                    net.weight_bytes() >> 20,
                    if net.is_f16() { "f16" } else { "f32" }
                );
                println!(
                    "kind       {}",
                    if state.is_empty() {
                        "network"
                    } else {
                        "checkpoint (resumable)"
                    }
                );
                let t = &h.training;
                println!(
                    "training   {} games, {} moves, {:.0} s, rolling mean score {:.0}",
                    t.games, t.moves, t.seconds, t.rolling_mean_score
                );
                if !t.command.is_empty() {
                    println!("command    {}", t.command);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        NetCommand::Diff(args) => {
            let (before, after) = (load_weight_file(&args.before)?.0, load_weight_file(&args.after)?.0);
            let bands = compare(&before, &after)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&bands)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{:<6} {:<16} {:>10} {:>10} {:>8} {:>13} {:>11} {:>11}",
                "stage",
                "largest tile",
                "weights",
                "trained",
                "changed",
                "mean |change|",
                "max |change|",
                "mean |before|"
            );
            for b in &bands {
                let (lo, hi) = b.largest_exponent;
                let tiles = match (lo, hi) {
                    (0, hi) => format!("up to {}", 1u32 << hi),
                    (lo, hi) if lo == hi => format!("{}", 1u32 << hi),
                    (lo, hi) => format!("{}..{}", 1u32 << lo, 1u32 << hi),
                };
                let share = if b.weights > 0 {
                    b.changed as f64 / b.weights as f64
                } else {
                    0.0
                };
                println!(
                    "{:<6} {:<16} {:>10} {:>10} {:>7.1}% {:>13.3} {:>11.1} {:>11.1}",
                    b.stage,
                    tiles,
                    b.weights,
                    b.trained_before,
                    100.0 * share,
                    b.mean_abs_change,
                    b.max_abs_change,
                    b.mean_abs_before
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        NetCommand::Average(args) => {
            let mut nets = Vec::with_capacity(args.files.len());
            let mut latest = TrainingSummary::default();
            let mut sources = Vec::with_capacity(args.files.len());
            for path in &args.files {
                let (net, info, _) = load_weight_file(path)?;
                sources.push(format!("{} ({})", path.display(), info.checksum()));
                if info.header.training.moves >= latest.moves {
                    latest = info.header.training.clone();
                }
                nets.push(net);
            }
            let mean = average(&nets)?;
            drop(nets);
            // The summary is that of the most trained network; the command line says what was averaged.
            let mut training = latest;
            let this = format!("advisor2048 net average {}", sources.join(" "));
            append_command(&mut training, this);
            let out = file::save(&args.out, &mean, ValueType::F16, &training, &[])?;
            println!(
                "{} ({} bytes, checksum {}): the mean of {} networks",
                args.out.display(),
                out.file_bytes,
                out.checksum(),
                args.files.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        NetCommand::Stack(args) => {
            let mut parts = Vec::with_capacity(args.stages.len());
            for spec in &args.stages {
                let (tile, paths) = spec
                    .split_once('=')
                    .with_context(|| format!("stage {spec:?}: expected TILE=FILE, e.g. 16384=late.a2n"))?;
                let tile: u32 = tile
                    .parse()
                    .with_context(|| format!("stage {spec:?}: {tile:?} is not a tile (0, 2, 4, ... 32768)"))?;
                if paths.split('+').any(str::is_empty) {
                    anyhow::bail!("stage {spec:?}: expected TILE=FILE or TILE=FILE+FILE, with no empty file name");
                }
                parts.push((tile, paths.split('+').map(PathBuf::from).collect()));
            }
            let (list, net) = staged::write_list(&args.out, &parts)?;
            let checksum = net.info.as_ref().map_or("-", |i| i.checksum());
            println!(
                "{} (checksum {checksum}): {}, {} MiB in memory",
                args.out.display(),
                net.shape().describe(),
                net.weight_bytes() >> 20
            );
            for (k, p) in list.stages.iter().enumerate() {
                println!(
                    "  stage {k} from tile {:<6} {} tuples: {} ({}){}",
                    p.from_tile,
                    net.shape().stage_tuple_count(k),
                    p.file,
                    p.checksum,
                    p.more_tuples
                        .iter()
                        .map(|m| format!(" + {} ({})", m.file, m.checksum))
                        .collect::<String>()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        NetCommand::Widen(args) => {
            let (net, info, _) = load_weight_file(&args.file)?;
            let set = Shape::named(&args.net, vec![0]).with_context(|| format!("--net {}", args.net))?;
            let wide = net
                .widen(set.tuples)
                .with_context(|| format!("{} cannot be widened to {}", args.file.display(), args.net))?;
            let mut training = info.header.training.clone();
            let this = format!(
                "advisor2048 net widen {} ({}) --net {}",
                args.file.display(),
                info.checksum(),
                args.net
            );
            append_command(&mut training, this);
            let value_type = if wide.is_f16() { ValueType::F16 } else { ValueType::F32 };
            let out = file::save(&args.out, &wide, value_type, &training, &[])?;
            println!(
                "{} ({} bytes, checksum {}): {}, {} MiB in memory",
                args.out.display(),
                out.file_bytes,
                out.checksum(),
                wide.shape().describe(),
                wide.weight_bytes() >> 20
            );
            Ok(ExitCode::SUCCESS)
        }
        NetCommand::Export(args) => {
            let (mut net, mut info, _) = load_weight_file(&args.checkpoint)?;
            if let Some(k) = args.stage {
                let stages = net.shape().stages.len();
                net = net.stage(k).with_context(|| {
                    format!(
                        "--stage {k}: {} has {stages} stage{} (0 to {})",
                        args.checkpoint.display(),
                        if stages == 1 { "" } else { "s" },
                        stages - 1
                    )
                })?;
                // The counters stay the whole network's (a run's moves are not told apart by stage); the command
                // says so.
                let from_tile = match info.header.stages.get(k).copied().unwrap_or(0) {
                    0 => 0,
                    e => 1u32 << e,
                };
                let training = &mut info.header.training;
                training.command = format!(
                    "net export --stage {k} (from tile {from_tile}) of a {stages}-stage network, whose counters \
                     these are: {}",
                    training.command
                );
            }
            if let Some(spec) = &args.tuples {
                let count = net.shape().tuples.len();
                let range = spec
                    .split_once('-')
                    .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
                    .filter(|&(a, b)| 1 <= a && a <= b && b <= count)
                    .with_context(|| {
                        format!("--tuples {spec:?}: expected FIRST-LAST with 1 <= FIRST <= LAST <= {count} (the network's tuples)")
                    })?;
                net = net.tuple_range(range.0 - 1..range.1).with_context(|| {
                    format!(
                        "--tuples: {} has {} stages; name one with --stage",
                        args.checkpoint.display(),
                        net.shape().stages.len()
                    )
                })?;
                let training = &mut info.header.training;
                training.command = format!("net export --tuples {spec} of: {}", training.command);
            }
            let out = file::save(&args.out, &net, ValueType::F16, &info.header.training, &[])?;
            println!(
                "{} ({} bytes, checksum {})",
                args.out.display(),
                out.file_bytes,
                out.checksum()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
